"""Importing: the database made to match a course folder, in one transaction.

Rows keep their ids across imports (learners' progress and runs point at them) and a row whose
content did not change is not written at all.
"""

from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from django.contrib.auth import get_user_model
from django.db import transaction

from courses.models import Chapter, Choice, Course, CourseModule, Exercise, ExerciseTrick, GlossaryTerm, Hint, Question
from courses.services.chapters import chapter_reading_time_refresh, rows_park
from courses.services.content_io.reader import course_read
from courses.services.content_io.specs import ChapterSpec, ContentError, CourseSpec


@dataclass
class ImportReport:
    course: Course
    created: Counter = field(default_factory=Counter)
    updated: Counter = field(default_factory=Counter)
    removed: Counter = field(default_factory=Counter)

    @property
    def changed(self) -> bool:
        return bool(self.created or self.updated or self.removed)

    def summary(self) -> str:
        def counts(counter: Counter) -> str:
            kinds = [
                "course",
                "chapter",
                "exercise",
                "hint",
                "trick program",
                "question",
                "choice",
                "glossary term",
                "module",
            ]
            parts = [f"{counter[kind]} {kind}{'s' if counter[kind] != 1 else ''}" for kind in kinds if counter[kind]]
            return ", ".join(parts) or "nothing"

        return (
            f"Imported course '{self.course.slug}': created {counts(self.created)}; "
            f"updated {counts(self.updated)}; removed {counts(self.removed)}."
        )


def _assign(obj, values: dict) -> bool:
    """Set fields on a row; True when any value differs from what it held."""
    changed = False
    for name, value in values.items():
        if getattr(obj, name) != value:
            setattr(obj, name, value)
            changed = True
    return changed


def _upsert(obj, values: dict, *, kind: str, report: ImportReport) -> None:
    is_new = obj.pk is None
    if _assign(obj, values) or is_new:
        obj.save()
        (report.created if is_new else report.updated)[kind] += 1


def _sync_glossary(course: Course, spec: CourseSpec, report: ImportReport) -> None:
    existing = {term.term.lower(): term for term in course.glossary.all()}
    wanted = {term.term.lower(): term for term in spec.glossary}
    for key, term in existing.items():
        if key not in wanted:
            term.delete()
            report.removed["glossary term"] += 1
    for key, term in wanted.items():
        row = existing.get(key) or GlossaryTerm(course=course)
        _upsert(row, {"term": term.term, "definition": term.definition}, kind="glossary term", report=report)


def _sync_modules(course: Course, spec: CourseSpec, report: ImportReport) -> None:
    existing = {module.name: module for module in course.modules.all()}
    wanted = {module.name: module for module in spec.modules}
    for name, module in existing.items():
        if name not in wanted:
            module.delete()
            report.removed["module"] += 1
    for name, module in wanted.items():
        row = existing.get(name) or CourseModule(course=course)
        _upsert(row, {"name": name, "source": module.source}, kind="module", report=report)


def _sync_exercises(chapter: Chapter, spec: ChapterSpec, report: ImportReport) -> None:
    existing = {exercise.slug: exercise for exercise in chapter.exercises.all()}
    wanted = {exercise.slug: exercise for exercise in spec.exercises}
    for slug, exercise in existing.items():
        if slug not in wanted:
            exercise.delete()
            report.removed["exercise"] += 1
    rows_park(
        rows=[e for s, e in existing.items() if s in wanted and e.position != wanted[s].position], field_name="position"
    )
    for exercise in spec.exercises:
        row = existing.get(exercise.slug) or Exercise(chapter=chapter)
        values = {
            "slug": exercise.slug,
            "position": exercise.position,
            "title": exercise.title,
            "instructions": exercise.instructions,
            "starter_code": exercise.starter_code,
            "check_code": exercise.check_code,
            "solution_code": exercise.solution_code,
            "probe_code": exercise.probe_code,
            "time_limit_s": exercise.time_limit_s,
            "needs_gpu": exercise.needs_gpu,
        }
        _upsert(row, values, kind="exercise", report=report)
        _sync_hints(row, exercise.hints, report)
        _sync_tricks(row, exercise.tricks, report)


def _sync_tricks(exercise: Exercise, tricks: list[tuple[str, str]], report: ImportReport) -> None:
    existing = {trick.name: trick for trick in exercise.tricks.all()}
    wanted = dict(tricks)
    for name, trick in existing.items():
        if name not in wanted:
            trick.delete()
            report.removed["trick program"] += 1
    for name, code in wanted.items():
        row = existing.get(name) or ExerciseTrick(exercise=exercise, name=name)
        _upsert(row, {"code": code}, kind="trick program", report=report)


def _sync_hints(exercise: Exercise, texts: list[str], report: ImportReport) -> None:
    """Hints are matched by position, so an edited hint keeps the learners' reveals of it."""
    existing = {hint.position: hint for hint in exercise.hints.all()}
    for position, hint in existing.items():
        if position > len(texts):
            hint.delete()
            report.removed["hint"] += 1
    for position, text in enumerate(texts, start=1):
        row = existing.get(position) or Hint(exercise=exercise, position=position)
        _upsert(row, {"text": text}, kind="hint", report=report)


def _sync_quiz(chapter: Chapter, spec: ChapterSpec, report: ImportReport) -> None:
    existing = {question.position: question for question in chapter.questions.prefetch_related("choices")}
    for position, question in existing.items():
        if position > len(spec.questions):
            question.delete()
            report.removed["question"] += 1
    for position, question_spec in enumerate(spec.questions, start=1):
        question = existing.get(position) or Question(chapter=chapter, position=position)
        _upsert(question, {"prompt": question_spec.prompt, "kind": question_spec.kind}, kind="question", report=report)
        choices = {choice.position: choice for choice in question.choices.all()} if position in existing else {}
        for choice_position, choice in choices.items():
            if choice_position > len(question_spec.choices):
                choice.delete()
                report.removed["choice"] += 1
        # Wrong choices first: the one-correct-choice constraint must hold after every write,
        # also when the right answer moves from one choice to another.
        order = sorted(enumerate(question_spec.choices, start=1), key=lambda pair: pair[1].is_correct)
        for choice_position, choice_spec in order:
            row = choices.get(choice_position) or Choice(question=question, position=choice_position)
            values = {
                "text": choice_spec.text,
                "is_correct": choice_spec.is_correct,
                "explanation": choice_spec.explanation,
            }
            _upsert(row, values, kind="choice", report=report)


def _sync_chapters(course: Course, spec: CourseSpec, report: ImportReport) -> None:
    existing = {chapter.slug: chapter for chapter in course.chapters.all()}
    wanted = {chapter.slug: chapter for chapter in spec.chapters}
    for slug, chapter in existing.items():
        if slug not in wanted:
            chapter.delete()
            report.removed["chapter"] += 1
    rows_park(
        rows=[c for s, c in existing.items() if s in wanted and c.number != wanted[s].number], field_name="number"
    )
    for chapter_spec in spec.chapters:
        chapter = existing.get(chapter_spec.slug) or Chapter(course=course)
        values = {
            "number": chapter_spec.number,
            "slug": chapter_spec.slug,
            "title": chapter_spec.title,
            "summary": chapter_spec.summary,
            "lede": chapter_spec.lede,
            "body": chapter_spec.body,
            "published": chapter_spec.published,
        }
        _upsert(chapter, values, kind="chapter", report=report)
        _sync_exercises(chapter, chapter_spec, report)
        _sync_quiz(chapter, chapter_spec, report)
        chapter_reading_time_refresh(chapter=chapter)


def course_import(*, path: str | Path) -> ImportReport:
    """Create or update the course in a folder so the database says what the files say."""
    spec = course_read(path=path)
    users = {user.username: user for user in get_user_model().objects.filter(username__in=spec.instructors)}
    for username in spec.instructors:
        if username not in users:
            raise ContentError("course.yaml", spec.instructors_line, f"unknown instructor username '{username}'")

    with transaction.atomic():
        course = Course.objects.select_for_update().filter(slug=spec.slug).first() or Course()
        report = ImportReport(course=course)
        values = {
            "slug": spec.slug,
            "title": spec.title,
            "summary": spec.summary,
            "level": spec.level,
            "published": spec.published,
        }
        _upsert(course, values, kind="course", report=report)
        instructor_ids = {users[name].pk for name in spec.instructors}
        if set(course.instructors.values_list("pk", flat=True)) != instructor_ids:
            course.instructors.set(instructor_ids)
            if not report.created["course"]:
                report.updated["course"] = 1
        _sync_glossary(course, spec, report)
        _sync_modules(course, spec, report)
        _sync_chapters(course, spec, report)
    return report
