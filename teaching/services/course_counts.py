"""Exercise figures of a whole course, or of one cohort, as counts (teaching.models.ExerciseCount
and its siblings).

Each enrolled learner adds to an exercise's counts what their summaries of it say (their
`share`): their runs, time-outs, memory stops and error types, one learner who ran it, and, when
they passed, one learner who passed and one at their number of runs to the first pass; when their
runs were timed, one learner at their mean run time. The share goes to the course's counts and to
those of each of the course's cohorts the learner is in (their `scopes`). A change is the share
after it less the share before it, so the counts move exactly as the summaries do:

- a run finishes: the learner's share of that exercise, before and after the run is summarised;
- a learner enrols or joins a cohort: their shares are added there; an enrolment or a membership
  is deleted: they are taken away (a learner who ran exercises before enrolling counts from the
  moment they enrol, as the dashboard's per-learner path counts them);
- the summaries are rebuilt: the counts are rebuilt from them.

Changes are written in one fixed order of rows, so two runs finishing at once never wait on each
other's rows in opposite orders (a deadlock).
"""

from __future__ import annotations

from collections import Counter

from django.db import IntegrityError, connection, transaction
from django.db.models import F, Min, Sum

from courses.models import CohortMembership, Course, Enrolment
from teaching.models import (
    ExerciseCount,
    ExerciseErrorCount,
    ExerciseErrorSummary,
    ExercisePassCount,
    ExerciseSummary,
    ExerciseTimeCount,
)

# A share: {(model, exercise id, key, field): amount}. The key names the row within the exercise
# (runs to pass, mean ms, error name; None for the exercise's own row).
Share = Counter

# Each model and the field its key fills.
_MODELS = {
    ExerciseCount: None,
    ExercisePassCount: "runs_to_pass",
    ExerciseTimeCount: "mean_ms",
    ExerciseErrorCount: "error_name",
}
_ORDER = {model: place for place, model in enumerate(_MODELS)}

_TOTALS = {
    "runs": Sum("runs"),
    "timed_out": Sum("timed_out"),
    "memory_stops": Sum("memory_stops"),
    # With no date range a learner's runs to a first pass is their first pass's number.
    "to_pass": Min("first_pass_number"),
    "timed_runs": Sum("timed_runs"),
    "duration_total_ms": Sum("duration_total_ms"),
}


def _mean_ms(total_ms: int, timed_runs: int) -> int:
    """The mean rounded half up, as the per-learner path's SQL ROUND does."""
    return (2 * total_ms + timed_runs) // (2 * timed_runs)


def _share(exercise_id: int, totals: dict) -> Share:
    """What one learner adds to one exercise's counts (errors aside), from the sums of their
    summaries of it."""
    share = Share()
    if not totals.get("runs"):
        return share
    row = (ExerciseCount, exercise_id, None)
    share[(*row, "runs")] += totals["runs"]
    share[(*row, "timed_out")] += totals["timed_out"]
    share[(*row, "memory_stops")] += totals["memory_stops"]
    share[(*row, "learners_ran")] += 1
    if totals["to_pass"] is not None:
        share[(*row, "learners_passed")] += 1
        share[(ExercisePassCount, exercise_id, totals["to_pass"], "learners")] += 1
    if totals["timed_runs"]:
        mean = _mean_ms(totals["duration_total_ms"], totals["timed_runs"])
        share[(ExerciseTimeCount, exercise_id, mean, "learners")] += 1
    return share


def _learner_shares(*, user_id: int, course_id: int | None = None, exercise_id: int | None = None) -> Share:
    """A learner's shares of one exercise, or of every exercise of a course, from their summaries."""
    key = {"user_id": user_id}
    key.update({"exercise_id": exercise_id} if exercise_id is not None else {"course_id": course_id})
    share = Share()
    for totals in ExerciseSummary.objects.filter(**key).values("exercise_id").annotate(**_TOTALS).order_by():
        share.update(_share(totals["exercise_id"], totals))
    errors = ExerciseErrorSummary.objects.filter(**key).values("exercise_id", "error_name").annotate(n=Sum("runs"))
    for row in errors.order_by():
        share[(ExerciseErrorCount, row["exercise_id"], row["error_name"], "runs")] += row["n"]
    return share


def _scopes(*, user_id: int, course_id: int) -> list[int | None]:
    """Where a learner's shares count: nowhere unless enrolled, else the course (None) and each of
    its cohorts they are in."""
    if not Enrolment.objects.filter(user_id=user_id, course_id=course_id).exists():
        return []
    cohorts = CohortMembership.objects.filter(user_id=user_id, cohort__course_id=course_id)
    return [None, *sorted(cohorts.values_list("cohort_id", flat=True))]


def _apply(*, course_id: int, scopes: list[int | None], change: Share) -> None:
    """Add a change to the counts of each scope, row by row in a fixed order (see the module)."""
    rows: dict[tuple, dict[str, int]] = {}
    for (model, exercise_id, key, field), amount in change.items():
        if amount:
            rows.setdefault((model, exercise_id, key), {})[field] = amount
    ordered = sorted(rows.items(), key=lambda item: _row_order(item[0]))
    for cohort_id in scopes:
        for (model, exercise_id, key), amounts in ordered:
            where = {"exercise_id": exercise_id, "cohort_id": cohort_id}
            if _MODELS[model] is not None:
                where[_MODELS[model]] = key
            added = {field: F(field) + amount for field, amount in amounts.items()}
            if model.objects.filter(**where).update(**added):
                continue
            try:
                with transaction.atomic():  # a concurrent first count of the row wins; add to it
                    model.objects.create(**where, course_id=course_id, **amounts)
            except IntegrityError:
                model.objects.filter(**where).update(**added)


def _row_order(row: tuple) -> tuple:
    model, exercise_id, key = row
    return (_ORDER[model], exercise_id, "" if key is None else str(key).zfill(12))


def _negative(share: Share) -> Share:
    return Share({key: -amount for key, amount in share.items()})


class RunCounting:
    """Moves the counts by what one finished run changes in its learner's share. Use it around
    the run's summary write, inside the transaction that finished the run:

        with RunCounting(course_id=..., user_id=..., exercise_id=...):
            summarise the run
    """

    def __init__(self, *, course_id: int, user_id: int, exercise_id: int):
        self.course_id, self.user_id, self.exercise_id = course_id, user_id, exercise_id
        self.scopes: list[int | None] = []
        self.before = Share()

    def __enter__(self):
        self.scopes = _scopes(user_id=self.user_id, course_id=self.course_id)
        if self.scopes:
            self.before = _learner_shares(user_id=self.user_id, exercise_id=self.exercise_id)
        return self

    def __exit__(self, kind, value, traceback):
        if kind is None and self.scopes:
            change = _learner_shares(user_id=self.user_id, exercise_id=self.exercise_id)
            change.subtract(self.before)
            _apply(course_id=self.course_id, scopes=self.scopes, change=change)
        return False


def course_counts_enrolled(*, user_id: int, course_id: int) -> None:
    """A learner enrolled: what they ran before counts from now on, in the course and cohorts."""
    scopes = _scopes(user_id=user_id, course_id=course_id)
    _apply(course_id=course_id, scopes=scopes, change=_learner_shares(user_id=user_id, course_id=course_id))


def course_counts_unenrolling(*, user_id: int, course_id: int) -> None:
    """A learner's enrolment is about to go (their summaries may go with them): take their shares
    away from the course and its cohorts."""
    scopes = _scopes(user_id=user_id, course_id=course_id)
    _apply(course_id=course_id, scopes=scopes, change=_negative(_learner_shares(user_id=user_id, course_id=course_id)))


def course_counts_joined(*, user_id: int, course_id: int, cohort_id: int) -> None:
    """An enrolled learner joined a cohort: their shares count in its figures too."""
    if Enrolment.objects.filter(user_id=user_id, course_id=course_id).exists():
        _apply(course_id=course_id, scopes=[cohort_id], change=_learner_shares(user_id=user_id, course_id=course_id))


def course_counts_leaving(*, user_id: int, course_id: int, cohort_id: int) -> None:
    """A learner is about to leave a cohort: their shares go from its figures."""
    if Enrolment.objects.filter(user_id=user_id, course_id=course_id).exists():
        share = _negative(_learner_shares(user_id=user_id, course_id=course_id))
        _apply(course_id=course_id, scopes=[cohort_id], change=share)


def course_counts_rebuild(*, course: Course) -> int:
    """Replace the course's counts, and its cohorts', with ones added up from its enrolled
    learners' summaries. Returns the number of count rows written."""
    enrolled = Enrolment.objects.filter(course=course).values("user_id")
    cohorts_of: dict[int, list[int]] = {}
    memberships = CohortMembership.objects.filter(cohort__course=course, user_id__in=enrolled).order_by("cohort_id")
    for user_id, cohort_id in memberships.values_list("user_id", "cohort_id").iterator(chunk_size=10000):
        cohorts_of.setdefault(user_id, []).append(cohort_id)
    totals = (
        ExerciseSummary.objects.filter(course=course, user_id__in=enrolled)
        .values("exercise_id", "user_id")
        .annotate(**_TOTALS)
        .order_by()
    )
    errors = (
        ExerciseErrorSummary.objects.filter(course=course, user_id__in=enrolled)
        .values("exercise_id", "user_id", "error_name")
        .annotate(n=Sum("runs"))
        .order_by()
    )
    counts: dict[int | None, Share] = {}

    def add(user_id: int, share: Share) -> None:
        for scope in (None, *cohorts_of.get(user_id, ())):
            counts.setdefault(scope, Share()).update(share)

    for row in totals.iterator(chunk_size=10000):
        add(row["user_id"], _share(row["exercise_id"], row))
    for row in errors.iterator(chunk_size=10000):
        add(row["user_id"], Share({(ExerciseErrorCount, row["exercise_id"], row["error_name"], "runs"): row["n"]}))
    made: dict[tuple, object] = {}
    for cohort_id, share in counts.items():
        for (model, exercise_id, key, field), amount in share.items():
            row = made.get((cohort_id, model, exercise_id, key))
            if row is None:
                where = {"exercise_id": exercise_id, "course_id": course.pk, "cohort_id": cohort_id}
                if _MODELS[model] is not None:
                    where[_MODELS[model]] = key
                row = made[(cohort_id, model, exercise_id, key)] = model(**where)
            setattr(row, field, amount)
    with transaction.atomic():
        for model in _MODELS:
            model.objects.filter(course=course).delete()
        for model in _MODELS:
            model.objects.bulk_create([row for row in made.values() if type(row) is model], batch_size=5000)
    if connection.vendor == "postgresql":
        with connection.cursor() as cursor:
            cursor.execute(f"ANALYZE {', '.join(model._meta.db_table for model in _MODELS)}")
    return len(made)
