"""Reads for a learner's course record: the completion page and the downloads of their own code.

A record is always the requesting learner's: every query below filters on that one user, and
nothing here takes another learner's id, so no page or download can reach another learner's code,
answers or passes. Parts the learner may not open (coming soon) show as such, with none of their
exercises. It lives here, above courses and runner, because it reads both: the learner's passes
and answers, and their last run of each exercise.
"""

from django.db.models import Count, DateTimeField, OuterRef, Q, Subquery, UUIDField

from courses.completion import CourseRecord, ExerciseRecord, ModulePiece, PartRecord, QuizRecord, module_pieces
from courses.models import ChapterProgress, Course, CourseModule, Exercise, ExerciseState, Question, QuizAnswer
from courses.selectors import course_outline_for_user
from courses.selectors_own import own_modules_whole, own_sections
from runner.selectors import run_list_for_outer_exercise, run_list_for_user


def _exercise_records(*, user, chapter_ids: list[int], with_code: bool) -> dict[int, list[ExerciseRecord]]:
    """The exercises of the given chapters with the learner's first pass and latest run, in one
    query (two with the runs' code): the cost does not grow with parts or exercises."""
    states = ExerciseState.objects.filter(user=user, exercise=OuterRef("pk"))
    runs = run_list_for_outer_exercise(user=user)
    exercises = (
        Exercise.objects.filter(chapter__in=chapter_ids)
        .annotate(
            learner_passed_at=Subquery(states.values("passed_at")[:1], output_field=DateTimeField()),
            last_run_id=Subquery(runs.values("pk")[:1], output_field=UUIDField()),
            last_run_at=Subquery(runs.values("created_at")[:1], output_field=DateTimeField()),
        )
        .order_by("chapter__number", "position")
    )
    if not with_code:
        exercises = exercises.defer("instructions", "starter_code", "check_code", "solution_code")
    else:
        exercises = exercises.defer("check_code", "solution_code")  # never leaves the platform
    exercises = list(exercises)
    last_runs = {}
    if with_code:
        ids = [exercise.last_run_id for exercise in exercises if exercise.last_run_id is not None]
        fields = ("id", "code", "outputs", "status", "created_at", "passed")
        last_runs = (
            {run.pk: run for run in run_list_for_user(user=user).filter(pk__in=ids).only(*fields)} if ids else {}
        )
    by_chapter: dict[int, list[ExerciseRecord]] = {}
    for exercise in exercises:
        records = by_chapter.setdefault(exercise.chapter_id, [])
        records.append(
            ExerciseRecord(
                exercise=exercise,
                number=len(records) + 1,
                passed_at=exercise.learner_passed_at,
                last_run_at=exercise.last_run_at,
                last_run=last_runs.get(exercise.last_run_id),
            )
        )
    return by_chapter


def _quiz_records(*, user, course: Course) -> tuple[dict[int, QuizRecord], set[int]]:
    """Each part's quiz as the learner's answers leave it, and the parts where they answered at all."""
    questions = dict(
        Question.objects.filter(chapter__course=course)
        .values("chapter")
        .annotate(n=Count("id"))
        .values_list("chapter", "n")
    )
    answers = {
        row["question__chapter"]: row
        for row in QuizAnswer.objects.filter(user=user, question__chapter__course=course)
        .values("question__chapter")
        .annotate(
            right=Count("question", filter=Q(is_correct=True), distinct=True),
            first_try=Count("id", filter=Q(is_correct=True, attempt=1)),
        )
    }
    records = {
        chapter_id: QuizRecord(
            question_count=count,
            answered_right=answers.get(chapter_id, {}).get("right", 0),
            first_try_right=answers.get(chapter_id, {}).get("first_try", 0),
        )
        for chapter_id, count in questions.items()
    }
    return records, set(answers)


def course_record_for_learner(*, user, course: Course, with_code: bool = False) -> CourseRecord:
    """Everything the completion page shows for `user` in `course` (an authenticated learner; the
    course already checked with course_get_for_user), in a fixed number of queries whatever the
    number of parts. `with_code`: also load the learner's last run of each exercise, for the
    downloads."""
    outline = course_outline_for_user(course=course, user=user)
    open_ids = [part.chapter.pk for part in outline if part.is_open]
    complete = set(
        ChapterProgress.objects.filter(user=user, chapter__in=open_ids, completed_at__isnull=False).values_list(
            "chapter_id", flat=True
        )
    )
    exercises = _exercise_records(user=user, chapter_ids=open_ids, with_code=with_code)
    quizzes, answered = _quiz_records(user=user, course=course)
    modules = list(CourseModule.objects.filter(course=course).order_by("name").values_list("name", "source"))
    pieces_by_part: dict[int | None, list[ModulePiece]] = {}
    for name, source in modules:
        for number, piece in module_pieces(name=name, source=source):
            pieces_by_part.setdefault(number, []).append(piece)
    own = own_sections(user=user, course_id=course.pk)
    own_by_part: dict[int, set[str]] = {}
    for section in own:
        own_by_part.setdefault(section.part, set()).update(section.names)
    parts = [
        PartRecord(
            chapter=part.chapter,
            is_open=part.is_open,
            complete=part.chapter.pk in complete,
            quiz=quizzes.get(part.chapter.pk, QuizRecord()) if part.is_open else QuizRecord(),
            quiz_answered=part.is_open and part.chapter.pk in answered,
            exercises=exercises.get(part.chapter.pk, []),
            pieces=pieces_by_part.get(part.chapter.number, []) if part.is_open else [],
            own_names=tuple(sorted(own_by_part.get(part.chapter.number, ()))),
        )
        for part in outline
    ]
    return CourseRecord(
        course=course,
        parts=parts,
        modules=list(own_modules_whole(modules=tuple(modules), own=own)),
        shared_pieces=pieces_by_part.get(None, []),
    )
