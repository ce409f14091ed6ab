"""Dashboard figures of a whole course, or of one cohort, as counts (teaching.models.ExerciseCount,
ChapterCount, ChoiceCount and their siblings).

Each enrolled learner adds to the counts what their own rows say (their `share`):
- per exercise, from their summaries of it: their runs, time-outs, memory stops and error types,
  one learner who ran it, and, when they passed, one learner who passed and one at their number of
  runs to the first pass; when their runs were timed, one learner at their mean run time;
- the same per exercise and day, for date ranges (teaching.models.ExerciseDayCount and its
  siblings): each day's runs and errors with one learner in the row of their previous day of runs,
  one learner in the row of their previous day with a pass (the first with its runs to the pass),
  one learner at their mean run time that day;
- per chapter, from their progress row: one learner who started it, finished its quiz, completed
  it, and one on the day they finished the quiz, on the day they completed it and, as a starter,
  on the day they enrolled (a range that ended earlier counts the starters enrolled by its end);
- per question, from their answers: their answers per choice (first tries, attempt numbers), and
  one learner who answered; the same per day, with one learner on each day they answered in the row
  of their previous day of answers to it.

The share goes to the course's counts and to those of each of the course's cohorts the learner is
in (their `scopes`). A change is the share after it less the share before it, so the counts move
exactly as the rows do:
- a run finishes, a progress row is saved, an answer is given: the learner's share of that
  exercise, chapter or question, before and after;
- a learner enrols or joins a cohort: their shares are added there; an enrolment or a membership
  is deleted: they are taken away (a learner who did things before enrolling counts from the moment
  they enrol, as the dashboard's per-learner path counts them);
- the rows are rebuilt: the counts are rebuilt from them.

Changes are written in one fixed order of rows, so two writes at once never wait on each other's
rows in opposite orders (a deadlock).
"""

from __future__ import annotations

import datetime as dt
import itertools
from collections import Counter

from django.db import IntegrityError, connection, transaction
from django.db.models import F, OuterRef, Q, QuerySet, Subquery

from courses.models import ChapterProgress, Course, Enrolment, QuizAnswer
from teaching.models import (
    NO_DAY,
    ChapterCount,
    ChapterDayCount,
    ChoiceCount,
    ChoiceDayCount,
    CohortMembership,
    ExerciseCount,
    ExerciseDayCount,
    ExerciseErrorCount,
    ExerciseErrorDayCount,
    ExerciseErrorSummary,
    ExercisePassCount,
    ExercisePassDayCount,
    ExerciseSummary,
    ExerciseTimeCount,
    ExerciseTimeDayCount,
    QuestionCount,
    day_of,
)
from teaching.outbox_models import AnswerToCount, ProgressToCount

# A share: {(model, object id, key, field): amount}. The object is the row's exercise, chapter,
# question or choice; the key (a tuple) names the row among the object's.
Share = Counter

# Each model, the field its object fills and the fields its key fills, in the order rows are written.
_MODELS = {
    ExerciseCount: ("exercise_id", ()),
    ExercisePassCount: ("exercise_id", ("runs_to_pass",)),
    ExerciseTimeCount: ("exercise_id", ("mean_ms",)),
    ExerciseErrorCount: ("exercise_id", ("error_name",)),
    ExerciseDayCount: ("exercise_id", ("day", "prev_day")),
    ExercisePassDayCount: ("exercise_id", ("day", "prev_day", "runs_to_pass")),
    ExerciseTimeDayCount: ("exercise_id", ("day", "mean_ms")),
    ExerciseErrorDayCount: ("exercise_id", ("day", "error_name")),
    ChapterCount: ("chapter_id", ()),
    ChapterDayCount: ("chapter_id", ("day",)),
    QuestionCount: ("question_id", ()),
    ChoiceCount: ("choice_id", ("is_correct", "question_id")),
    ChoiceDayCount: ("choice_id", ("is_correct", "question_id", "day", "prev_day")),
}
_ORDER = {model: place for place, model in enumerate(_MODELS)}

# A learner's summary of an exercise on one day: what their shares are made of.
_DAY_FIELDS = (
    "day",
    "runs",
    "passes",
    "timed_out",
    "memory_stops",
    "first_pass_number",
    "timed_runs",
    "duration_total_ms",
)


def _mean_ms(total_ms: int, timed_runs: int) -> int:
    """The mean rounded half up, as the per-learner path's SQL ROUND does."""
    return (2 * total_ms + timed_runs) // (2 * timed_runs)


def _two_figures(ms: int) -> int:
    """ms to two significant figures, half up: a day's mean run time as ExerciseTimeDayCount keeps it."""
    if ms < 100:
        return ms
    scale = 10 ** (len(str(ms)) - 2)
    return (ms + scale // 2) // scale * scale


def _exercise_share(exercise_id: int, days: list[dict]) -> Share:
    """What one learner adds to one exercise's counts (errors aside), from their summaries of it
    (_DAY_FIELDS), oldest day first."""
    share = Share()
    days = [day for day in days if day["runs"]]
    if not days:
        return share
    row = (ExerciseCount, exercise_id, ())
    for field in ("runs", "timed_out", "memory_stops"):
        share[(*row, field)] += sum(day[field] for day in days)
    share[(*row, "learners_ran")] += 1
    passes = [day for day in days if day["passes"]]
    if passes:
        share[(*row, "learners_passed")] += 1
        share[(ExercisePassCount, exercise_id, (passes[0]["first_pass_number"],), "learners")] += 1
    timed_runs = sum(day["timed_runs"] for day in days)
    if timed_runs:
        mean = _mean_ms(sum(day["duration_total_ms"] for day in days), timed_runs)
        share[(ExerciseTimeCount, exercise_id, (mean,), "learners")] += 1
    # Per day: the learner in the row of their previous day (see ExerciseDayCount).
    prev = NO_DAY
    for day in days:
        row = (ExerciseDayCount, exercise_id, (day["day"], prev))
        for field in ("runs", "timed_out", "memory_stops"):
            share[(*row, field)] += day[field]
        share[(*row, "learners")] += 1
        prev = day["day"]
        if day["timed_runs"]:
            mean = _two_figures(_mean_ms(day["duration_total_ms"], day["timed_runs"]))
            share[(ExerciseTimeDayCount, exercise_id, (day["day"], mean), "learners")] += 1
    prev = NO_DAY
    for day in passes:
        to_pass = day["first_pass_number"] if prev == NO_DAY else 0
        share[(ExercisePassDayCount, exercise_id, (day["day"], prev, to_pass), "learners")] += 1
        prev = day["day"]
    return share


def _error_share(exercise_id: int, day: dt.date, error_name: str, runs: int) -> Share:
    return Share(
        {
            (ExerciseErrorCount, exercise_id, (error_name,), "runs"): runs,
            (ExerciseErrorDayCount, exercise_id, (day, error_name), "runs"): runs,
        }
    )


def _exercises_share(where: dict, *, errors: bool = True) -> Share:
    """A learner's shares of the exercises whose summaries `where` picks (one learner's)."""
    share = Share()
    rows = ExerciseSummary.objects.filter(**where).values("exercise_id", *_DAY_FIELDS).order_by("exercise_id", "day")
    for exercise_id, days in itertools.groupby(rows, key=lambda row: row["exercise_id"]):
        share.update(_exercise_share(exercise_id, list(days)))
    if not errors:
        return share
    error_rows = ExerciseErrorSummary.objects.filter(**where).values("exercise_id", "day", "error_name", "runs")
    for row in error_rows:
        share.update(_error_share(row["exercise_id"], row["day"], row["error_name"], row["runs"]))
    return share


def _chapters_share(progress) -> Share:
    """A learner's shares of the chapters of their progress rows (_PROGRESS_COLUMNS)."""
    share = Share()
    for chapter_id, quiz_finished_at, completed_at, enrolled_at in progress:
        share[(ChapterCount, chapter_id, (), "started")] += 1
        share[(ChapterCount, chapter_id, (), "quiz_finished")] += quiz_finished_at is not None
        share[(ChapterCount, chapter_id, (), "completed")] += completed_at is not None
        if quiz_finished_at is not None:
            share[(ChapterDayCount, chapter_id, (day_of(quiz_finished_at),), "quiz_finished")] += 1
        if completed_at is not None:
            share[(ChapterDayCount, chapter_id, (day_of(completed_at),), "completed")] += 1
        if enrolled_at is not None:  # a learner who is not enrolled counts nowhere
            share[(ChapterDayCount, chapter_id, (day_of(enrolled_at),), "enrolled_starters")] += 1
    return share


# A progress row's chapter, quiz and completion times, and its learner's enrolment time in the
# chapter's course (None when they are not enrolled).
_PROGRESS_COLUMNS = ("chapter_id", "quiz_finished_at", "completed_at", "enrolled_at")


def _progress(*columns: str, **where) -> QuerySet:
    """The progress rows `where` picks, as `columns` (default _PROGRESS_COLUMNS)."""
    enrolment = Enrolment.objects.filter(user_id=OuterRef("user_id"), course_id=OuterRef("chapter__course_id"))
    return (
        ChapterProgress.objects.filter(**where)
        .annotate(enrolled_at=Subquery(enrolment.values("enrolled_at")[:1]))
        .values_list(*(columns or _PROGRESS_COLUMNS))
    )


def _progress_counted(**where) -> list[tuple]:
    """The progress rows `where` picks as the counts have them (_PROGRESS_COLUMNS): a row whose
    change is still to count as its note says it stood, and not at all when it is new."""
    rows = list(_progress("pk", *_PROGRESS_COLUMNS, **where))
    notes = {note.progress_id: note for note in ProgressToCount.objects.filter(progress_id__in=[r[0] for r in rows])}
    counted = []
    for pk, chapter_id, quiz_finished_at, completed_at, enrolled_at in rows:
        note = notes.get(pk)
        if note is None:
            counted.append((chapter_id, quiz_finished_at, completed_at, enrolled_at))
        elif note.existed:
            counted.append((chapter_id, note.quiz_finished_at, note.completed_at, enrolled_at))
    return counted


_ANSWER_COLUMNS = ("user_id", "question_id", "choice_id", "is_correct", "attempt", "answered_at")


def _question_share(answers: list[tuple]) -> Share:
    """What one learner adds to one question's counts, from their answers to it (_ANSWER_COLUMNS),
    oldest first: their answers per choice, all told and per day, and one learner who answered it,
    all told and on each day they did (in the row of their previous day, see ChoiceDayCount)."""
    share = Share()
    prev = NO_DAY
    for day, same_day in itertools.groupby(answers, key=lambda answer: day_of(answer[5])):
        first_of_day = True
        for _, question_id, choice_id, is_correct, attempt, _ in same_day:
            for key in (
                (ChoiceCount, choice_id, (is_correct, question_id)),
                (ChoiceDayCount, choice_id, (is_correct, question_id, day, prev)),
            ):
                share[(*key, "answers")] += 1
                share[(*key, "first_tries")] += attempt == 1
                share[(*key, "attempt_total")] += attempt
            share[(ChoiceDayCount, choice_id, (is_correct, question_id, day, prev), "learners")] += first_of_day
            first_of_day = False
        prev = day
    if answers:
        share[(QuestionCount, answers[0][1], (), "learners")] += 1
    return share


def _questions_share(answers: QuerySet) -> Share:
    """A learner's shares of the questions of their answers (one learner's)."""
    share = Share()
    rows = answers.order_by("question_id", "answered_at", "id").values_list(*_ANSWER_COLUMNS)
    for _, one_question in itertools.groupby(rows, key=lambda row: row[1]):
        share.update(_question_share(list(one_question)))
    return share


def _answers_counted(**where) -> QuerySet:
    """The answers `where` picks that the counts have counted: those without a note."""
    return QuizAnswer.objects.filter(**where).exclude(pk__in=AnswerToCount.objects.values("answer_id"))


def _learner_share(*, user_id: int, course_id: int) -> Share:
    """Everything a learner adds to a course's counts, as counted so far (teaching.services.outbox:
    what is still to count is added by its own count, whenever it comes)."""
    share = _exercises_share({"user_id": user_id, "course_id": course_id})
    share.update(_chapters_share(_progress_counted(user_id=user_id, chapter__course_id=course_id)))
    share.update(_questions_share(_answers_counted(user_id=user_id, question__chapter__course_id=course_id)))
    return share


def _scopes(*, user_id: int, course_id: int) -> list[int | None]:
    """Where a learner's shares count: nowhere unless enrolled, else the course (None) and each of
    its cohorts they are in."""
    rows = Enrolment.objects.filter(user_id=user_id, course_id=course_id).values_list(
        "user__cohort_memberships__cohort_id", "user__cohort_memberships__cohort__course_id"
    )  # one query: the enrolment, with each of the learner's cohorts (of any course)
    if not rows:
        return []
    return [None, *sorted({cohort_id for cohort_id, of_course in rows if of_course == course_id})]


def _where(model, object_id: int, key: tuple, cohort_id: int | None) -> dict:
    object_field, key_fields = _MODELS[model]
    return {object_field: object_id, "cohort_id": cohort_id, **dict(zip(key_fields, key, strict=True))}


def _apply(*, course_id: int, scopes: list[int | None], change: Share) -> None:
    """Add a change to the counts of each scope, row by row in a fixed order (see the module)."""
    rows: dict[tuple, dict[str, int]] = {}
    for (model, object_id, key, field), amount in change.items():
        if amount:
            rows.setdefault((model, object_id, key), {})[field] = amount
    ordered = sorted(rows.items(), key=lambda item: (_ORDER[item[0][0]], item[0][1], str(item[0][2])))
    if not scopes:
        return
    cohorts = [scope for scope in scopes if scope is not None]
    in_scopes = Q(cohort_id__in=cohorts) | (Q(cohort__isnull=True) if None in scopes else Q(pk__in=[]))
    for (model, object_id, key), amounts in ordered:
        where = _where(model, object_id, key, None)
        del where["cohort_id"]
        added = {field: F(field) + amount for field, amount in amounts.items()}
        # One statement for the row in every scope; the rare first count of a row makes it.
        if model.objects.filter(in_scopes, **where).update(**added) == len(scopes):
            continue
        present = set(model.objects.filter(in_scopes, **where).values_list("cohort_id", flat=True))
        for cohort_id in (scope for scope in scopes if scope not in present):
            try:
                with transaction.atomic():  # a concurrent first count of the row wins; add to it
                    model.objects.create(**where, cohort_id=cohort_id, course_id=course_id, **amounts)
            except IntegrityError:
                model.objects.filter(**where, cohort_id=cohort_id).update(**added)


def _negative(share: Share) -> Share:
    return Share({key: -amount for key, amount in share.items()})


class Counting:
    """Moves the counts by what one write changes in its learner's share of one exercise, chapter
    or question (`part`: a function of no arguments that reads that share), plus `known`, a change
    the caller knows without reading. Use it around the write, inside the transaction that makes it:

        with Counting(course_id=..., user_id=..., part=...):
            write
    """

    def __init__(self, *, course_id: int, user_id: int, part, known: Share | None = None):
        self.course_id, self.user_id, self.part = course_id, user_id, part
        self.known = known or Share()
        self.scopes: list[int | None] = []
        self.before = Share()

    def __enter__(self):
        self.scopes = _scopes(user_id=self.user_id, course_id=self.course_id)
        if self.scopes:
            self.before = self.part()
        return self

    def __exit__(self, kind, value, traceback):
        if kind is None and self.scopes:
            change = self.part()
            change.subtract(self.before)
            change.update(self.known)
            _apply(course_id=self.course_id, scopes=self.scopes, change=change)
        return False


def exercise_part(*, user_id: int, exercise_id: int):
    """The learner's share of the exercise, errors aside (a run adds one to its own error's count:
    pass that as Counting's `known`, see run_error)."""
    return lambda: _exercises_share({"user_id": user_id, "exercise_id": exercise_id}, errors=False)


def run_error(*, exercise_id: int, error_name: str, created_at: dt.datetime) -> Share:
    """A run's error: one more of it in the exercise's counts, and on the run's day (by the day it
    was made, as its summary)."""
    return _error_share(exercise_id, day_of(created_at), error_name, 1) if error_name else Share()


def course_counts_answered(*, user_id: int, course_id: int, question_id: int, answer_id: int) -> None:
    """An answer is counted (its note is gone): its learner's share of the question's counted
    answers with it, less without it. Answers counted in any order add up to the same counts."""
    scopes = _scopes(user_id=user_id, course_id=course_id)
    if scopes:
        answers = _answers_counted(user_id=user_id, question_id=question_id)
        change = _questions_share(answers)
        change.subtract(_questions_share(answers.exclude(pk=answer_id)))
        _apply(course_id=course_id, scopes=scopes, change=change)


def course_counts_progressed(*, user_id: int, course_id: int, progress_id: int, before: ProgressToCount) -> None:
    """A progress row's change is counted (its note, `before`, is gone): its share now, less as
    the note says it stood."""
    scopes = _scopes(user_id=user_id, course_id=course_id)
    if scopes:
        now = list(_progress(pk=progress_id))
        was = [(row[0], before.quiz_finished_at, before.completed_at, row[3]) for row in now] if before.existed else []
        change = _chapters_share(now)
        change.subtract(_chapters_share(was))
        _apply(course_id=course_id, scopes=scopes, change=change)


def course_counts_progress_deleting(*, user_id: int, course_id: int, progress_id: int) -> None:
    """A progress row is about to go: its share, as counted, leaves the counts (its note, if any,
    goes with the row)."""
    scopes = _scopes(user_id=user_id, course_id=course_id)
    _apply(course_id=course_id, scopes=scopes, change=_negative(_chapters_share(_progress_counted(pk=progress_id))))


def course_counts_enrolled(*, user_id: int, course_id: int) -> None:
    """A learner enrolled: what they did before counts from now on, in the course and cohorts."""
    scopes = _scopes(user_id=user_id, course_id=course_id)
    _apply(course_id=course_id, scopes=scopes, change=_learner_share(user_id=user_id, course_id=course_id))


def course_counts_unenrolling(*, user_id: int, course_id: int) -> None:
    """A learner's enrolment is about to go (their rows may go with them): take their shares away
    from the course and its cohorts."""
    scopes = _scopes(user_id=user_id, course_id=course_id)
    _apply(course_id=course_id, scopes=scopes, change=_negative(_learner_share(user_id=user_id, course_id=course_id)))


def course_counts_joined(*, user_id: int, course_id: int, cohort_id: int) -> None:
    """An enrolled learner joined a cohort: their shares count in its figures too."""
    if Enrolment.objects.filter(user_id=user_id, course_id=course_id).exists():
        _apply(course_id=course_id, scopes=[cohort_id], change=_learner_share(user_id=user_id, course_id=course_id))


def course_counts_leaving(*, user_id: int, course_id: int, cohort_id: int) -> None:
    """A learner is about to leave a cohort: their shares go from its figures."""
    if Enrolment.objects.filter(user_id=user_id, course_id=course_id).exists():
        share = _negative(_learner_share(user_id=user_id, course_id=course_id))
        _apply(course_id=course_id, scopes=[cohort_id], change=share)


def course_counts_rebuild(*, course: Course) -> int:
    """Replace the course's counts, and its cohorts', with ones added up from its enrolled
    learners' rows. Returns the number of count rows written."""
    counts = _counted(course=course)
    made = []
    for cohort_id, share in counts.items():
        rows: dict[tuple, object] = {}
        for (model, object_id, key, field), amount in share.items():
            row = rows.get((model, object_id, key))
            if row is None:
                row = rows[(model, object_id, key)] = model(**_where(model, object_id, key, cohort_id), course=course)
            setattr(row, field, amount)
        made.extend(rows.values())
    with transaction.atomic():
        for model in _MODELS:
            model.objects.filter(course=course).delete()
        for model in _MODELS:
            model.objects.bulk_create([row for row in made if type(row) is model], batch_size=5000)
    if connection.vendor == "postgresql":
        with connection.cursor() as cursor:
            cursor.execute(f"ANALYZE {', '.join(model._meta.db_table for model in _MODELS)}")
    return len(made)


def _counted(*, course: Course) -> dict[int | None, Share]:
    """The counts of the course and of each of its cohorts: each enrolled learner's rows read once,
    in order, their share added to the course's counts and to those of the cohorts they are in."""
    enrolled = Enrolment.objects.filter(course=course).values("user_id")
    counts: dict[int | None, Share] = {
        None: Share(),
        **{pk: Share() for pk in course.cohorts.values_list("pk", flat=True)},
    }
    scopes: dict[int, list[Share]] = {}
    for user_id, cohort_id in CohortMembership.objects.filter(cohort__course=course, user_id__in=enrolled).values_list(
        "user_id", "cohort_id"
    ):
        scopes.setdefault(user_id, [counts[None]]).append(counts[cohort_id])

    def add(user_id: int, share: Share) -> None:
        for scope in scopes.get(user_id, (counts[None],)):
            scope.update(share)

    days = (
        ExerciseSummary.objects.filter(course=course, user_id__in=enrolled)
        .values_list("user_id", "exercise_id", *_DAY_FIELDS)
        .order_by("user_id", "exercise_id", "day")
    )
    for (user_id, exercise_id), rows in itertools.groupby(days.iterator(chunk_size=10000), key=lambda row: row[:2]):
        add(user_id, _exercise_share(exercise_id, [dict(zip(_DAY_FIELDS, row[2:], strict=True)) for row in rows]))
    errors = ExerciseErrorSummary.objects.filter(course=course, user_id__in=enrolled)
    for user_id, *row in errors.values_list("user_id", "exercise_id", "day", "error_name", "runs").iterator(10000):
        add(user_id, _error_share(*row))
    progress = (
        ChapterProgress.objects.filter(chapter__course=course, user__enrolments__course=course)
        .order_by("user_id")
        .values_list("user_id", *_PROGRESS_COLUMNS[:-1], "user__enrolments__enrolled_at")
    )
    for user_id, rows in itertools.groupby(progress.iterator(10000), key=lambda row: row[0]):
        add(user_id, _chapters_share(row[1:] for row in rows))
    answers = (
        QuizAnswer.objects.filter(question__chapter__course=course, user_id__in=enrolled)
        .order_by("user_id", "question_id", "answered_at", "id")
        .values_list(*_ANSWER_COLUMNS)
    )
    for (user_id, _), one_question in itertools.groupby(answers.iterator(chunk_size=10000), key=lambda row: row[:2]):
        add(user_id, _question_share(list(one_question)))
    return counts
