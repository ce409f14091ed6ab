"""Summaries the dashboards read instead of every run and quiz answer.

One row per learner, exercise (or chapter) and day: a day is the dashboards' date filter's unit
(whole days, UTC), so a range sums whole rows and every figure stays exact. teaching.services.
rollups keeps them in step with runs and answers (in the transaction that finishes a run or saves
an answer) and rebuilds them from the rows they summarise.
"""

import datetime as dt

from django.conf import settings
from django.db import models
from django.db.models import F, Q

from courses.models import Chapter, Choice, Course, Enrolment, Exercise, Question
from teaching.cohort_models import Cohort, CohortMembership  # noqa: F401 - cohorts, in a module of their own


class ExerciseSummary(models.Model):
    """A learner's finished runs of one exercise on one day (by the day the run was made)."""

    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    exercise = models.ForeignKey(Exercise, on_delete=models.CASCADE, related_name="+")
    # The exercise's course, copied so a dashboard reads one course's rows without a join.
    course = models.ForeignKey(Course, on_delete=models.CASCADE, related_name="+")
    day = models.DateField()
    runs = models.PositiveIntegerField(default=0)
    passes = models.PositiveIntegerField(default=0, help_text="Runs whose check passed.")
    timed_out = models.PositiveIntegerField(default=0)
    memory_stops = models.PositiveIntegerField(default=0)
    # Runs to a pass in any range of days, without the runs themselves: a range's count is the
    # first pass's number (among all the learner's runs of the exercise) less the runs made
    # before the range's first day.
    runs_before = models.PositiveIntegerField(default=0, help_text="The learner's runs of it on earlier days.")
    first_pass_number = models.PositiveIntegerField(null=True, blank=True)
    # A learner's mean run time in a range: the median of the learners' means is the dashboard's
    # "median run time" (a median of every run would read every run).
    timed_runs = models.PositiveIntegerField(default=0, help_text="Runs with a duration.")
    duration_total_ms = models.PositiveBigIntegerField(default=0)
    last_run_at = models.DateTimeField()

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["user", "exercise", "day"], name="exercise_summary_unique"),
            models.CheckConstraint(
                condition=Q(
                    passes__lte=F("runs"),
                    timed_out__lte=F("runs"),
                    memory_stops__lte=F("runs"),
                    timed_runs__lte=F("runs"),
                ),
                name="exercise_summary_counts_within_runs",
            ),
            # A pass that day, and only then, has a number, and it comes after the earlier days' runs.
            models.CheckConstraint(
                condition=Q(passes=0, first_pass_number__isnull=True)
                | Q(passes__gt=0, first_pass_number__gt=F("runs_before")),
                name="exercise_summary_first_pass",
            ),
        ]
        indexes = [models.Index(fields=["course", "day"], name="exercise_summary_course_day")]

    def __str__(self):
        return f"{self.user_id} on exercise {self.exercise_id}, {self.day}: {self.runs} runs"


class ExerciseErrorSummary(models.Model):
    """How many of a learner's runs of one exercise on one day ended with one error type (a row
    per error type seen): the dashboard's commonest errors, exactly, from narrow rows."""

    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    exercise = models.ForeignKey(Exercise, on_delete=models.CASCADE, related_name="+")
    course = models.ForeignKey(Course, on_delete=models.CASCADE, related_name="+")
    day = models.DateField()
    error_name = models.CharField(max_length=100)
    runs = models.PositiveIntegerField(default=0)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["user", "exercise", "day", "error_name"], name="exercise_error_unique"),
            models.CheckConstraint(condition=~Q(error_name=""), name="exercise_error_named"),
        ]
        indexes = [models.Index(fields=["course", "day"], name="exercise_error_course_day")]

    def __str__(self):
        return f"{self.user_id} on exercise {self.exercise_id}, {self.day}: {self.runs} x {self.error_name}"


class ChapterSummary(models.Model):
    """A learner's quiz answers in one chapter on one day."""

    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    chapter = models.ForeignKey(Chapter, on_delete=models.CASCADE, related_name="+")
    course = models.ForeignKey(Course, on_delete=models.CASCADE, related_name="+")
    day = models.DateField()
    answers = models.PositiveIntegerField(default=0)
    first_tries = models.PositiveIntegerField(default=0)
    first_try_right = models.PositiveIntegerField(default=0)
    last_right_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["user", "chapter", "day"], name="chapter_summary_unique"),
            models.CheckConstraint(
                condition=Q(first_try_right__lte=F("first_tries"), first_tries__lte=F("answers")),
                name="chapter_summary_counts",
            ),
        ]
        indexes = [models.Index(fields=["course", "day"], name="chapter_summary_course_day")]

    def __str__(self):
        return f"{self.user_id} in chapter {self.chapter_id}, {self.day}: {self.answers} answers"


# --- Exercise figures of the whole course, or of one cohort, as counts --------------------------------
#
# What every enrolled learner adds to an exercise's figures when the dashboard has no date range:
# run counts, and how many learners ran, passed, needed N runs to a first pass or have a mean run
# time of M ms (the medians are read from those counts). A row counts the course's learners
# (`cohort` empty) or one cohort's. teaching.services.course_counts keeps them as runs finish and
# as learners enrol, join a cohort or leave, and rebuilds them from the summaries above.


def _scoped_unique(fields: list[str], name: str) -> list[models.UniqueConstraint]:
    """Unique per cohort, and once for the course (a unique key over a nullable column would let
    the course's own row repeat)."""
    return [
        models.UniqueConstraint(fields=[*fields, "cohort"], condition=Q(cohort__isnull=False), name=f"{name}_cohort"),
        models.UniqueConstraint(fields=fields, condition=Q(cohort__isnull=True), name=f"{name}_course"),
    ]


class ExerciseCount(models.Model):
    """The counted learners' runs of one exercise, counted together."""

    exercise = models.ForeignKey(Exercise, on_delete=models.CASCADE, related_name="+")
    course = models.ForeignKey(Course, on_delete=models.CASCADE, related_name="+")
    cohort = models.ForeignKey(Cohort, on_delete=models.CASCADE, null=True, blank=True, related_name="+")
    runs = models.PositiveIntegerField(default=0)
    timed_out = models.PositiveIntegerField(default=0)
    memory_stops = models.PositiveIntegerField(default=0)
    learners_ran = models.PositiveIntegerField(default=0)
    learners_passed = models.PositiveIntegerField(default=0)

    class Meta:
        constraints = [
            *_scoped_unique(["exercise"], "exercise_count"),
            models.CheckConstraint(
                condition=Q(
                    timed_out__lte=F("runs"),
                    memory_stops__lte=F("runs"),
                    learners_ran__lte=F("runs"),
                    learners_passed__lte=F("learners_ran"),
                ),
                name="exercise_count_within_runs",
            ),
        ]
        indexes = [models.Index(fields=["course", "cohort"], name="exercise_count_scope")]

    def __str__(self):
        return f"exercise {self.exercise_id}: {self.runs} runs by {self.learners_ran} learners"


class ExercisePassCount(models.Model):
    """Counted learners whose first pass of an exercise was their run number `runs_to_pass`."""

    exercise = models.ForeignKey(Exercise, on_delete=models.CASCADE, related_name="+")
    course = models.ForeignKey(Course, on_delete=models.CASCADE, related_name="+")
    cohort = models.ForeignKey(Cohort, on_delete=models.CASCADE, null=True, blank=True, related_name="+")
    runs_to_pass = models.PositiveIntegerField()
    learners = models.PositiveIntegerField(default=0)

    class Meta:
        constraints = [
            *_scoped_unique(["exercise", "runs_to_pass"], "exercise_pass_count"),
            models.CheckConstraint(condition=Q(runs_to_pass__gte=1), name="exercise_pass_count_from_one"),
        ]
        indexes = [models.Index(fields=["course", "cohort"], name="exercise_pass_count_scope")]

    def __str__(self):
        return f"exercise {self.exercise_id}: {self.learners} passed on run {self.runs_to_pass}"


class ExerciseTimeCount(models.Model):
    """Counted learners whose mean run time of an exercise, in whole milliseconds, is `mean_ms`."""

    exercise = models.ForeignKey(Exercise, on_delete=models.CASCADE, related_name="+")
    course = models.ForeignKey(Course, on_delete=models.CASCADE, related_name="+")
    cohort = models.ForeignKey(Cohort, on_delete=models.CASCADE, null=True, blank=True, related_name="+")
    mean_ms = models.PositiveIntegerField()
    learners = models.PositiveIntegerField(default=0)

    class Meta:
        constraints = _scoped_unique(["exercise", "mean_ms"], "exercise_time_count")
        indexes = [models.Index(fields=["course", "cohort"], name="exercise_time_count_scope")]

    def __str__(self):
        return f"exercise {self.exercise_id}: {self.learners} learners at {self.mean_ms} ms"


class ExerciseErrorCount(models.Model):
    """Counted learners' runs of an exercise that ended with one error type."""

    exercise = models.ForeignKey(Exercise, on_delete=models.CASCADE, related_name="+")
    course = models.ForeignKey(Course, on_delete=models.CASCADE, related_name="+")
    cohort = models.ForeignKey(Cohort, on_delete=models.CASCADE, null=True, blank=True, related_name="+")
    error_name = models.CharField(max_length=100)
    runs = models.PositiveIntegerField(default=0)

    class Meta:
        constraints = [
            *_scoped_unique(["exercise", "error_name"], "exercise_error_count"),
            models.CheckConstraint(condition=~Q(error_name=""), name="exercise_error_count_named"),
        ]
        indexes = [models.Index(fields=["course", "cohort"], name="exercise_error_count_scope")]

    def __str__(self):
        return f"exercise {self.exercise_id}: {self.runs} x {self.error_name}"


class LearnerStanding(models.Model):
    """Where an enrolled learner stands in the course, for the dashboard's stuck learners with no
    date range: when they last made progress (enrolled, first passed an exercise, answered right,
    completed a chapter), the chapters they completed, and the exercise they failed most often
    without ever passing it. Made with the enrolment and kept as runs finish, answers are saved and
    progress is made (teaching.services.standings)."""

    enrolment = models.OneToOneField(Enrolment, on_delete=models.CASCADE, related_name="+")
    # The enrolment's, copied so the stuck list reads one table.
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    course = models.ForeignKey(Course, on_delete=models.CASCADE, related_name="+")
    # The enrolment's too: a range that ended before today counts the learners enrolled by its end.
    enrolled_at = models.DateTimeField()
    progress_at = models.DateTimeField()
    completed_chapters = models.PositiveIntegerField(default=0)
    failing_exercise = models.ForeignKey(Exercise, on_delete=models.SET_NULL, null=True, blank=True, related_name="+")
    failing_runs = models.PositiveIntegerField(default=0, help_text="Its runs, none of which passed.")

    class Meta:
        # No check ties failing_runs to an exercise: a deleted exercise leaves its count behind
        # until the learner's next run (the dashboard reads a failing exercise only with its name).
        constraints = [models.UniqueConstraint(fields=["course", "user"], name="learner_standing_unique")]
        indexes = [models.Index(fields=["course", "progress_at"], name="learner_standing_progress")]

    def __str__(self):
        return f"{self.user_id} in course {self.course_id}"


class ChapterCount(models.Model):
    """The counted learners who started a chapter (have progress in it), finished its quiz and
    completed it: the funnel with no date range."""

    chapter = models.ForeignKey(Chapter, on_delete=models.CASCADE, related_name="+")
    course = models.ForeignKey(Course, on_delete=models.CASCADE, related_name="+")
    cohort = models.ForeignKey(Cohort, on_delete=models.CASCADE, null=True, blank=True, related_name="+")
    started = models.PositiveIntegerField(default=0)
    quiz_finished = models.PositiveIntegerField(default=0)
    completed = models.PositiveIntegerField(default=0)

    class Meta:
        constraints = [
            *_scoped_unique(["chapter"], "chapter_count"),
            models.CheckConstraint(
                condition=Q(quiz_finished__lte=F("started"), completed__lte=F("started")), name="chapter_count_started"
            ),
        ]
        indexes = [models.Index(fields=["course", "cohort"], name="chapter_count_scope")]

    def __str__(self):
        return f"chapter {self.chapter_id}: {self.started} started, {self.completed} completed"


class QuestionCount(models.Model):
    """The counted learners who answered a question at least once."""

    question = models.ForeignKey(Question, on_delete=models.CASCADE, related_name="+")
    course = models.ForeignKey(Course, on_delete=models.CASCADE, related_name="+")
    cohort = models.ForeignKey(Cohort, on_delete=models.CASCADE, null=True, blank=True, related_name="+")
    learners = models.PositiveIntegerField(default=0)

    class Meta:
        constraints = _scoped_unique(["question"], "question_count")
        indexes = [models.Index(fields=["course", "cohort"], name="question_count_scope")]

    def __str__(self):
        return f"question {self.question_id}: {self.learners} learners"


class ChoiceCount(models.Model):
    """The counted learners' answers picking one choice: the quiz figures with no date range."""

    choice = models.ForeignKey(Choice, on_delete=models.CASCADE, related_name="+")
    question = models.ForeignKey(Question, on_delete=models.CASCADE, related_name="+")
    course = models.ForeignKey(Course, on_delete=models.CASCADE, related_name="+")
    cohort = models.ForeignKey(Cohort, on_delete=models.CASCADE, null=True, blank=True, related_name="+")
    # As the answers were marked when given (a choice's mark may change later).
    is_correct = models.BooleanField()
    answers = models.PositiveIntegerField(default=0)
    first_tries = models.PositiveIntegerField(default=0, help_text="Answers that were attempt 1.")
    attempt_total = models.PositiveBigIntegerField(default=0, help_text="The answers' attempt numbers, summed.")

    class Meta:
        constraints = [
            *_scoped_unique(["choice", "is_correct"], "choice_count"),
            models.CheckConstraint(condition=Q(first_tries__lte=F("answers")), name="choice_count_first_tries"),
        ]
        indexes = [models.Index(fields=["course", "cohort"], name="choice_count_scope")]

    def __str__(self):
        return f"choice {self.choice_id}: {self.answers} answers"


# --- The same counts per day, for a date range --------------------------------------------------------
#
# What every enrolled learner adds on each day, so a dashboard with a date range sums the range's
# days of the course's or one cohort's counts, whatever the number of learners. "Learners who ran
# it in the range" adds up because each of a learner's days of runs is counted in the row of their
# previous day of runs (`prev_day`, NO_DAY for the first): a learner ran it in [start, end] exactly
# when one of their days in it has its previous day before start, and only one does. Passes and
# quiz answers are counted the same way.

NO_DAY = dt.date(1, 1, 1)  # "no earlier day": before every real one, so `prev_day < start` holds


def day_of(at: dt.datetime) -> dt.date:
    """The day a summary or count files a moment under: the dashboards' filters take whole days in UTC."""
    return at.astimezone(dt.UTC).date()


def _day_scoped(fields: list[str], name: str) -> list[models.BaseConstraint]:
    return [
        *_scoped_unique([*fields, "day"], name),
        models.CheckConstraint(condition=Q(day__gt=NO_DAY), name=f"{name}_real_day"),
    ]


def _after_prev_day(name: str) -> models.CheckConstraint:
    return models.CheckConstraint(condition=Q(prev_day__lt=F("day")), name=f"{name}_prev_day_before")


class ExerciseDayCount(models.Model):
    """The counted learners' runs of an exercise on one day, whose previous day of runs of it was
    `prev_day`."""

    exercise = models.ForeignKey(Exercise, on_delete=models.CASCADE, related_name="+")
    course = models.ForeignKey(Course, on_delete=models.CASCADE, related_name="+")
    cohort = models.ForeignKey(Cohort, on_delete=models.CASCADE, null=True, blank=True, related_name="+")
    day = models.DateField()
    prev_day = models.DateField()
    runs = models.PositiveIntegerField(default=0)
    timed_out = models.PositiveIntegerField(default=0)
    memory_stops = models.PositiveIntegerField(default=0)
    learners = models.PositiveIntegerField(default=0)

    class Meta:
        constraints = [
            *_day_scoped(["exercise", "prev_day"], "exercise_day_count"),
            _after_prev_day("exercise_day_count"),
            models.CheckConstraint(
                condition=Q(timed_out__lte=F("runs"), memory_stops__lte=F("runs"), learners__lte=F("runs")),
                name="exercise_day_count_within_runs",
            ),
        ]
        indexes = [models.Index(fields=["course", "cohort", "day"], name="exercise_day_count_scope")]

    def __str__(self):
        return f"exercise {self.exercise_id}, {self.day}: {self.runs} runs"


class ExercisePassDayCount(models.Model):
    """The counted learners who passed an exercise on one day, whose previous day with a pass was
    `prev_day`; for a first pass ever, `runs_to_pass` is its number among their runs (else 0)."""

    exercise = models.ForeignKey(Exercise, on_delete=models.CASCADE, related_name="+")
    course = models.ForeignKey(Course, on_delete=models.CASCADE, related_name="+")
    cohort = models.ForeignKey(Cohort, on_delete=models.CASCADE, null=True, blank=True, related_name="+")
    day = models.DateField()
    prev_day = models.DateField()
    runs_to_pass = models.PositiveIntegerField()
    learners = models.PositiveIntegerField(default=0)

    class Meta:
        constraints = [
            *_day_scoped(["exercise", "prev_day", "runs_to_pass"], "exercise_pass_day_count"),
            _after_prev_day("exercise_pass_day_count"),
            # Only the first pass has a number, and the first pass has no earlier one.
            models.CheckConstraint(
                condition=Q(prev_day=NO_DAY, runs_to_pass__gte=1) | Q(~Q(prev_day=NO_DAY), runs_to_pass=0),
                name="exercise_pass_day_count_first",
            ),
        ]
        indexes = [models.Index(fields=["course", "cohort", "day"], name="exercise_pass_day_count_scope")]

    def __str__(self):
        return f"exercise {self.exercise_id}, {self.day}: {self.learners} passed"


class ExerciseTimeDayCount(models.Model):
    """The counted learners whose mean run time of an exercise on one day was `mean_ms`, to two
    significant figures (exact values would make a row per learner on a large course)."""

    exercise = models.ForeignKey(Exercise, on_delete=models.CASCADE, related_name="+")
    course = models.ForeignKey(Course, on_delete=models.CASCADE, related_name="+")
    cohort = models.ForeignKey(Cohort, on_delete=models.CASCADE, null=True, blank=True, related_name="+")
    day = models.DateField()
    mean_ms = models.PositiveIntegerField()
    learners = models.PositiveIntegerField(default=0)

    class Meta:
        constraints = _day_scoped(["exercise", "mean_ms"], "exercise_time_day_count")
        indexes = [models.Index(fields=["course", "cohort", "day"], name="exercise_time_day_count_scope")]

    def __str__(self):
        return f"exercise {self.exercise_id}, {self.day}: {self.learners} learners at {self.mean_ms} ms"


class ExerciseErrorDayCount(models.Model):
    """The counted learners' runs of an exercise on one day that ended with one error type."""

    exercise = models.ForeignKey(Exercise, on_delete=models.CASCADE, related_name="+")
    course = models.ForeignKey(Course, on_delete=models.CASCADE, related_name="+")
    cohort = models.ForeignKey(Cohort, on_delete=models.CASCADE, null=True, blank=True, related_name="+")
    day = models.DateField()
    error_name = models.CharField(max_length=100)
    runs = models.PositiveIntegerField(default=0)

    class Meta:
        constraints = [
            *_day_scoped(["exercise", "error_name"], "exercise_error_day_count"),
            models.CheckConstraint(condition=~Q(error_name=""), name="exercise_error_day_count_named"),
        ]
        indexes = [models.Index(fields=["course", "cohort", "day"], name="exercise_error_day_count_scope")]

    def __str__(self):
        return f"exercise {self.exercise_id}, {self.day}: {self.runs} x {self.error_name}"


class ChapterDayCount(models.Model):
    """The counted learners who finished a chapter's quiz, or completed the chapter, on one day, and
    those with progress in it (who started it, at any time) who enrolled that day: a range that
    ended before today counts as starters the learners enrolled by its end, a sum of these."""

    chapter = models.ForeignKey(Chapter, on_delete=models.CASCADE, related_name="+")
    course = models.ForeignKey(Course, on_delete=models.CASCADE, related_name="+")
    cohort = models.ForeignKey(Cohort, on_delete=models.CASCADE, null=True, blank=True, related_name="+")
    day = models.DateField()
    quiz_finished = models.PositiveIntegerField(default=0)
    completed = models.PositiveIntegerField(default=0)
    enrolled_starters = models.PositiveIntegerField(default=0, help_text="Starters who enrolled that day.")

    class Meta:
        constraints = _day_scoped(["chapter"], "chapter_day_count")
        indexes = [models.Index(fields=["course", "cohort", "day"], name="chapter_day_count_scope")]

    def __str__(self):
        return f"chapter {self.chapter_id}, {self.day}: {self.completed} completed"


class ChoiceDayCount(models.Model):
    """The counted learners' answers picking one choice on one day, whose previous day of answers
    to the question was `prev_day`: the quiz figures for a date range. `learners` counts each
    learner's first answer to the question that day (so learners who answered in a range add up,
    as those who ran an exercise do)."""

    choice = models.ForeignKey(Choice, on_delete=models.CASCADE, related_name="+")
    question = models.ForeignKey(Question, on_delete=models.CASCADE, related_name="+")
    course = models.ForeignKey(Course, on_delete=models.CASCADE, related_name="+")
    cohort = models.ForeignKey(Cohort, on_delete=models.CASCADE, null=True, blank=True, related_name="+")
    # As the answers were marked when given (a choice's mark may change later).
    is_correct = models.BooleanField()
    day = models.DateField()
    prev_day = models.DateField()
    answers = models.PositiveIntegerField(default=0)
    first_tries = models.PositiveIntegerField(default=0, help_text="Answers that were attempt 1.")
    attempt_total = models.PositiveBigIntegerField(default=0, help_text="The answers' attempt numbers, summed.")
    learners = models.PositiveIntegerField(default=0, help_text="Learners' first answers to the question that day.")

    class Meta:
        constraints = [
            *_day_scoped(["choice", "is_correct", "prev_day"], "choice_day_count"),
            _after_prev_day("choice_day_count"),
            models.CheckConstraint(
                condition=Q(first_tries__lte=F("answers"), learners__lte=F("answers")), name="choice_day_count_counts"
            ),
        ]
        indexes = [models.Index(fields=["course", "cohort", "day"], name="choice_day_count_scope")]

    def __str__(self):
        return f"choice {self.choice_id}, {self.day}: {self.answers} answers"


# The outbox of what the dashboards have still to count, in a module of its own.
from teaching.outbox_models import AnswerToCount, ProgressToCount, RunToCount  # noqa: E402, F401
