"""The words the downloads use for a learner's exercise and part: one place, so the notebook, the
package and its README say the same thing."""

import importlib.metadata
from datetime import UTC, datetime

from courses.completion import CourseRecord, ExerciseRecord, PartRecord

# What the course's code imports; the platform's sandbox installs the same versions as this
# environment (runner/image/requirements.txt).
RUNTIME_PACKAGES = ("torch", "numpy", "matplotlib")


def when(moment: datetime) -> str:
    return moment.astimezone(UTC).strftime("%Y-%m-%d %H:%M UTC")


def exercise_mark(record: ExerciseRecord) -> str:
    """Whose code this is and how it did, in one sentence or two."""
    if record.last_run is None:
        return "Starter code: you never ran this exercise, so this is the code it starts with."
    mark = f"Your code from your last run, on {when(record.last_run.created_at)}."
    if record.last_run.passed:
        return mark + " It passed the exercise's check."
    if record.passed:
        return mark + f" You passed this exercise on {when(record.passed_at)}; this last run did not pass its check."
    return mark + " Not passed yet."


def part_mark(part: PartRecord) -> str:
    state = {"complete": "Complete.", "started": "In progress.", "not-started": "Not started."}[part.state]
    words = [state]
    if part.quiz.question_count:
        if part.quiz.finished:
            words.append(f"Quiz: {part.quiz.first_try_right} of {part.quiz.question_count} right at the first try.")
        elif part.quiz_answered:
            words.append(f"Quiz: not finished ({part.quiz.answered_right} of {part.quiz.question_count} answered).")
        else:
            words.append("Quiz: not taken yet.")
    if part.exercises:
        words.append(f"Exercises: {part.exercises_passed} of {len(part.exercises)} passed.")
    return " ".join(words)


def pieces_line(part: PartRecord) -> str:
    if not part.pieces:
        return ""
    names = ", ".join(f"`{piece.module}.{piece.name}`" for piece in part.pieces)
    return f"Adds to the course's modules: {names}."


def runtime_requirements() -> str:
    """The packages the code needs, pinned to the versions it ran with on the platform."""
    pins = []
    for package in RUNTIME_PACKAGES:
        try:
            # Without a local label such as "+cpu": the public release of the same version.
            pins.append(f"{package}=={importlib.metadata.version(package).split('+')[0]}")
        except importlib.metadata.PackageNotFoundError:
            pins.append(package)
    return " ".join(pins)


def intro(record: CourseRecord, *, learner: str, exported_at: datetime) -> str:
    return (
        f"{learner}'s code from every exercise of {record.course.title}, exported from EasyCompilers on "
        f"{when(exported_at)}. Each exercise holds the code of your last run of it; an exercise you never ran "
        "holds its starter code and says so."
    )
