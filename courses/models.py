"""Courses, chapters, exercises, quizzes and the glossary.

Content is authored as files (courses/content/) or in the admin; rules the data must always obey
are database constraints, so neither path can store a course the pages cannot show.
"""

import importlib.util
import keyword
import math
import re
import sys

from django.conf import settings
from django.core.exceptions import ValidationError
from django.core.validators import MaxValueValidator, MinValueValidator
from django.db import models
from django.db.models.functions import Lower

from courses.own_models import OwnPiece  # noqa: F401 - a learner's own module pieces, in a module of their own
from courses.review_models import ReviewAnswer, ReviewCard  # noqa: F401 - spaced review, in a module of its own
from courses.rules import (
    DEFAULT_QUESTION_KIND,
    QuestionType,
    exercise_slugs_placed,
    question_type_get,
    validate_question_kind,
)
from ecplatform import limits

WORDS_PER_MINUTE = 200
# Chapter pages live at /courses/<course>/<chapter>/; these names are the course's own pages.
RESERVED_CHAPTER_SLUGS = frozenset({"glossary", "complete", "review"})
TIME_LIMIT_MAX_S = limits.WALL_CAP_S
MODULE_NAME_RE = re.compile(r"^[a-z][a-z0-9_]*$")
MODULE_NAME_MAX = 64


def module_name_problem(name: str) -> str:
    """Why `name` cannot be a course module (empty: it can). A course module is imported by name in
    the sandbox, next to the standard library and the packages installed there: a module called
    `math` or `torch` would replace the real one for every exercise of the course."""
    if not MODULE_NAME_RE.match(name) or len(name) > MODULE_NAME_MAX:
        return (
            f"module name '{name}' must be a lowercase Python identifier "
            f"(a-z, then a-z, 0-9 or _; at most {MODULE_NAME_MAX} characters)"
        )
    if keyword.iskeyword(name):
        return f"module name '{name}' is a Python keyword"
    if name in sys.stdlib_module_names:
        return f"module name '{name}' would shadow the standard-library module '{name}'"
    # The sandbox installs a subset of what this environment has (runner/image/requirements.txt),
    # so a name free here is free there.
    if importlib.util.find_spec(name) is not None:
        return f"module name '{name}' would shadow the installed module '{name}'"
    return ""


def validate_module_name(name: str) -> None:
    problem = module_name_problem(name)
    if problem:
        raise ValidationError(problem[0].upper() + problem[1:] + ".")


class Level(models.TextChoices):
    BEGINNER = "beginner", "Beginner"
    INTERMEDIATE = "intermediate", "Intermediate"
    ADVANCED = "advanced", "Advanced"


class Course(models.Model):
    slug = models.SlugField(max_length=80, unique=True)
    title = models.CharField(max_length=200)
    summary = models.TextField(blank=True)
    level = models.CharField(max_length=16, choices=Level.choices, default=Level.BEGINNER)
    published = models.BooleanField(default=False)
    instructors = models.ManyToManyField(settings.AUTH_USER_MODEL, related_name="taught_courses", blank=True)

    class EnrolmentPolicy(models.TextChoices):
        OPEN = "open", "Open: any signed-in learner"
        INVITE = "invite", "By invitation: learners join with a cohort's invite link"

    enrolment = models.CharField(
        max_length=8,
        choices=EnrolmentPolicy.choices,
        default=EnrolmentPolicy.OPEN,
        help_text="By invitation, only learners who joined a cohort of the course (or an admin added) open its "
        "chapters and run its exercises; the course's instructors make cohorts and hand out their invite links.",
    )
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["title"]
        constraints = [
            models.CheckConstraint(
                condition=models.Q(level__in=["beginner", "intermediate", "advanced"]), name="course_level_valid"
            ),
            models.CheckConstraint(condition=models.Q(enrolment__in=["open", "invite"]), name="course_enrolment_valid"),
        ]

    def __str__(self):
        return self.title


class Chapter(models.Model):
    """One part of a course. An unpublished chapter shows in the outline as "coming soon"."""

    course = models.ForeignKey(Course, on_delete=models.CASCADE, related_name="chapters")
    number = models.PositiveSmallIntegerField(help_text="Position in the course: Part N of M.")
    slug = models.SlugField(max_length=80)
    title = models.CharField(max_length=200)
    summary = models.CharField(max_length=300, blank=True, help_text="One line for the course outline.")
    lede = models.TextField(blank=True, help_text="The paragraph under the title.")
    body = models.TextField(blank=True, help_text="Markdown. Place exercises with [[exercise:slug]] lines.")
    reading_minutes = models.PositiveSmallIntegerField(default=0, editable=False)
    published = models.BooleanField(default=False)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["course", "number"]
        constraints = [
            models.UniqueConstraint(
                fields=["course", "number"],
                name="chapter_unique_number",
                violation_error_message="The course already has a chapter with this number.",
            ),
            models.UniqueConstraint(
                fields=["course", "slug"],
                name="chapter_unique_slug",
                violation_error_message="The course already has a chapter with this slug.",
            ),
            models.CheckConstraint(condition=models.Q(number__gte=1), name="chapter_number_positive"),
        ]

    def __str__(self):
        return f"{self.course.slug} {self.number}: {self.title}"

    def save(self, *args, **kwargs):
        self.reading_minutes = self.compute_reading_minutes()
        super().save(*args, **kwargs)

    def clean(self):
        if self.slug in RESERVED_CHAPTER_SLUGS:
            raise ValidationError({"slug": f"'{self.slug}' is taken by a course page; choose another slug."})

    def compute_reading_minutes(self, extra_text: str = "") -> int:
        words = len(re.findall(r"\w+", f"{self.lede} {self.body} {extra_text}"))
        return max(1, math.ceil(words / WORDS_PER_MINUTE)) if words else 0

    def exercise_slugs_in_body(self) -> list[str]:
        return exercise_slugs_placed(self.body)


class Exercise(models.Model):
    chapter = models.ForeignKey(Chapter, on_delete=models.CASCADE, related_name="exercises")
    slug = models.SlugField(max_length=80, help_text="Stable: learners' code and runs refer to it.")
    position = models.PositiveSmallIntegerField(default=1)
    title = models.CharField(max_length=200)
    instructions = models.TextField(blank=True, help_text="Markdown.")
    starter_code = models.TextField(blank=True)
    check_code = models.TextField(
        blank=True,
        help_text="Optional Python defining check(ns) -> (passed, message); ns is the learner's globals.",
    )
    solution_code = models.TextField(
        blank=True, help_text="A reference solution for authors and tests; never shown to learners."
    )
    probe_code = models.TextField(
        blank=True,
        help_text="Optional Python defining calls(seed) -> [(function name, args)] and BY_HAND: the learner's "
        "functions called on fresh inputs after their program, for check(ns, probed) (FORMAT.md).",
    )
    time_limit_s = models.PositiveSmallIntegerField(
        default=20,
        validators=[MinValueValidator(limits.WALL_MIN_S), MaxValueValidator(TIME_LIMIT_MAX_S)],
        help_text=f"Wall-clock limit for one run, {limits.WALL_MIN_S} to {TIME_LIMIT_MAX_S} seconds.",
    )
    needs_gpu = models.BooleanField(default=False)

    class Meta:
        ordering = ["chapter", "position"]
        constraints = [
            models.UniqueConstraint(fields=["chapter", "slug"], name="exercise_unique_slug"),
            models.UniqueConstraint(fields=["chapter", "position"], name="exercise_unique_position"),
            models.CheckConstraint(
                condition=models.Q(time_limit_s__gte=limits.WALL_MIN_S, time_limit_s__lte=TIME_LIMIT_MAX_S),
                name="exercise_time_limit_range",
            ),
        ]

    def __str__(self):
        return self.title


class ExerciseTrick(models.Model):
    """A program written to pass the exercise without doing it (a hard-coded answer, a copied
    library call, an input left degenerate, a patched torch...): validation runs each one and
    requires that the check fails it. Kept beside the exercise as <slug>.trick-<name>.py; never
    shown to learners."""

    exercise = models.ForeignKey(Exercise, on_delete=models.CASCADE, related_name="tricks")
    name = models.SlugField(max_length=60, help_text="What it tries, e.g. hard-coded or patched-torch.")
    code = models.TextField()

    class Meta:
        ordering = ["exercise", "name"]
        constraints = [
            models.UniqueConstraint(
                fields=["exercise", "name"],
                name="exercise_trick_unique_name",
                violation_error_message="The exercise already has a trick program with this name.",
            ),
        ]

    def __str__(self):
        return f"{self.exercise.slug}.trick-{self.name}.py"


HINT_TEXT_MAX = 2000


class Hint(models.Model):
    """One of an exercise's hints, revealed to a learner one at a time in order. The last may be a
    worked step, never a line of the solution (courses.services.validation.hint_problems)."""

    exercise = models.ForeignKey(Exercise, on_delete=models.CASCADE, related_name="hints")
    position = models.PositiveSmallIntegerField(default=1)
    text = models.TextField(max_length=HINT_TEXT_MAX, help_text="Markdown, shown under the editor when revealed.")

    class Meta:
        ordering = ["exercise", "position"]
        constraints = [
            models.UniqueConstraint(
                fields=["exercise", "position"],
                name="hint_unique_position",
                violation_error_message="The exercise already has a hint at this position.",
            ),
            models.CheckConstraint(condition=models.Q(position__gte=1), name="hint_position_positive"),
            models.CheckConstraint(condition=~models.Q(text=""), name="hint_text_not_empty"),
        ]

    def __str__(self):
        return f"hint {self.position} of {self.exercise}"


class Question(models.Model):
    chapter = models.ForeignKey(Chapter, on_delete=models.CASCADE, related_name="questions")
    position = models.PositiveSmallIntegerField(default=1)
    prompt = models.TextField()
    kind = models.CharField(
        "type",
        max_length=32,
        default=DEFAULT_QUESTION_KIND,
        validators=[validate_question_kind],
        help_text="What the question must hold, what counts as right and how it shows (courses/rules.py).",
    )

    class Meta:
        ordering = ["chapter", "position"]
        constraints = [
            models.UniqueConstraint(fields=["chapter", "position"], name="question_unique_position"),
        ]

    def __str__(self):
        return self.prompt[:80]

    @property
    def question_type(self) -> QuestionType:
        return question_type_get(self.kind)


class Choice(models.Model):
    question = models.ForeignKey(Question, on_delete=models.CASCADE, related_name="choices")
    position = models.PositiveSmallIntegerField(default=1)
    text = models.CharField(max_length=500)
    is_correct = models.BooleanField(default=False)
    explanation = models.TextField(blank=True, help_text="Shown when a learner picks this choice.")

    class Meta:
        ordering = ["question", "position"]
        constraints = [
            models.UniqueConstraint(fields=["question", "position"], name="choice_unique_position"),
            # At most one right answer per question; the importer and admin also require one.
            models.UniqueConstraint(
                fields=["question"],
                condition=models.Q(is_correct=True),
                name="choice_one_correct",
                violation_error_message="A question has exactly one correct choice.",
            ),
        ]

    def __str__(self):
        return self.text[:80]


class GlossaryTerm(models.Model):
    course = models.ForeignKey(Course, on_delete=models.CASCADE, related_name="glossary")
    term = models.CharField(max_length=100)
    definition = models.TextField()

    class Meta:
        ordering = ["course", Lower("term")]
        constraints = [
            models.UniqueConstraint(
                "course",
                Lower("term"),
                name="glossary_unique_term",
                violation_error_message="The course glossary already has this term (ignoring case).",
            ),
        ]

    def __str__(self):
        return self.term


class CourseModule(models.Model):
    """A Python module of the course (its lib/<name>.py): every exercise of the course, and every
    check, can `import <name>`; the runner installs the course's modules in the sandbox."""

    course = models.ForeignKey(Course, on_delete=models.CASCADE, related_name="modules")
    name = models.CharField(
        max_length=MODULE_NAME_MAX,
        validators=[validate_module_name],
        help_text="Imported by this name: a lowercase identifier that shadows no standard or installed module.",
    )
    source = models.TextField(help_text="Python source; it must compile.")

    class Meta:
        ordering = ["course", "name"]
        constraints = [
            models.UniqueConstraint(
                fields=["course", "name"],
                name="course_module_unique_name",
                violation_error_message="The course already has a module with this name.",
            ),
        ]

    def __str__(self):
        return f"{self.name}.py"

    def clean(self):
        try:
            compile(self.source, f"lib/{self.name}.py", "exec")
        except SyntaxError as error:
            raise ValidationError({"source": f"Line {error.lineno}: Python syntax error: {error.msg}."}) from None
        except ValueError as error:  # e.g. a NUL byte in the source
            raise ValidationError({"source": f"Not Python source: {error}."}) from None


# --- Learners' progress -------------------------------------------------------------------------
# One row per learner and course / exercise / chapter, and one row per quiz answer, so the
# instructor dashboards can aggregate in the database.


class Enrolment(models.Model):
    """A learner in a course. Created on the learner's first visit; remembers where they were."""

    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="enrolments")
    course = models.ForeignKey(Course, on_delete=models.CASCADE, related_name="enrolments")
    enrolled_at = models.DateTimeField(auto_now_add=True)
    last_seen_at = models.DateTimeField(auto_now=True)
    last_chapter = models.ForeignKey(Chapter, on_delete=models.SET_NULL, null=True, blank=True, related_name="+")
    # The place on that chapter's page to return to: an element id such as "exercise-<slug>" or "quiz".
    last_place = models.CharField(max_length=100, blank=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["user", "course"], name="enrolment_unique")]
        indexes = [models.Index(fields=["course", "last_seen_at"])]

    def __str__(self):
        return f"{self.user} in {self.course}"


class ExerciseState(models.Model):
    """A learner's latest code for an exercise, and when its check first passed."""

    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="exercise_states")
    exercise = models.ForeignKey(Exercise, on_delete=models.CASCADE, related_name="states")
    code = models.TextField(blank=True)
    code_saved_at = models.DateTimeField(null=True, blank=True)
    passed_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["user", "exercise"], name="exercise_state_unique")]

    def __str__(self):
        return f"{self.user} on {self.exercise}"


class QuizAnswer(models.Model):
    """Every answer a learner gives, in order; attempt 1 is the first try at that question."""

    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="quiz_answers")
    question = models.ForeignKey(Question, on_delete=models.CASCADE, related_name="answers")
    choice = models.ForeignKey(Choice, on_delete=models.CASCADE, related_name="answers")
    is_correct = models.BooleanField()
    attempt = models.PositiveSmallIntegerField()
    answered_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["user", "question", "attempt"]
        constraints = [
            models.UniqueConstraint(fields=["user", "question", "attempt"], name="quiz_answer_unique_attempt"),
            models.CheckConstraint(condition=models.Q(attempt__gte=1), name="quiz_answer_attempt_positive"),
        ]
        indexes = [models.Index(fields=["question", "attempt"])]

    def __str__(self):
        return f"{self.user} answer {self.attempt} to question {self.question_id}"


class HintReveal(models.Model):
    """A learner revealed a hint: kept for good, so the hint stays shown and the dashboards count
    it. `exercise` repeats the hint's, so counting an exercise's hints reads one index."""

    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="hint_reveals")
    hint = models.ForeignKey(Hint, on_delete=models.CASCADE, related_name="reveals")
    exercise = models.ForeignKey(Exercise, on_delete=models.CASCADE, related_name="+")
    revealed_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["user", "hint"], name="hint_reveal_unique")]
        indexes = [models.Index(fields=["exercise", "user"])]

    def __str__(self):
        return f"{self.user} revealed {self.hint}"


class ChapterProgress(models.Model):
    """A learner's progress through one chapter. Complete once its quiz is finished and the checks
    of all its exercises have passed."""

    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="chapter_progress")
    chapter = models.ForeignKey(Chapter, on_delete=models.CASCADE, related_name="progress")
    quiz_finished_at = models.DateTimeField(null=True, blank=True)
    quiz_score = models.PositiveSmallIntegerField(null=True, blank=True, help_text="Questions right at the first try.")
    completed_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["user", "chapter"], name="chapter_progress_unique")]
        indexes = [models.Index(fields=["chapter", "completed_at"])]

    def __str__(self):
        return f"{self.user} in {self.chapter}"


# --- Authoring ---------------------------------------------------------------------------------


class ExerciseValidation(models.Model):
    """The last validation of an exercise in the sandbox: its starter and solution run with its
    check. `digest` names the code it judged, so an edit makes it stale and publishing asks again."""

    exercise = models.OneToOneField(Exercise, on_delete=models.CASCADE, related_name="validation")
    digest = models.CharField(max_length=64)
    ok = models.BooleanField()
    # Plain sentences, each naming the file of the course folder and what is wrong.
    problems = models.JSONField(default=list)
    # One entry per run: role (starter|solution), status, reason, duration_ms, check, output.
    runs = models.JSONField(default=list)
    notes = models.JSONField(default=list)
    backend = models.CharField(max_length=16, blank=True)
    took_ms = models.PositiveIntegerField(default=0)
    validated_at = models.DateTimeField(auto_now=True)

    def __str__(self):
        return f"validation of {self.exercise}"
