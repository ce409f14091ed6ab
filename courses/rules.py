"""The authoring rules every way into a course obeys: where exercises sit in a chapter's Markdown,
and what a quiz question of each type must hold and counts as right.

The importer (courses/services/content_io), the admin, the renderer and the quiz service all ask
here, so a course folder and the admin accept and refuse the same things with the same words, and
the page places exactly the exercises the checks saw placed.

Adding a question type is one class and its template: subclass QuestionType, give it a `kind`
(what quiz.yaml's `type:` and Question.kind say), a `label` (the admin's list) and a `template`
(the fragment that shows the current question's choices to a learner), override the rules or the
grading that differ, and decorate it with @question_type_register. The importer, the exporter, the
admin's validation, the quiz service and the chapter page then take it with no other change. A
type answers with one of its question's choices (QuizAnswer.choice) and has at most one correct
choice (a database constraint); a type that needs more than that needs new fields first.

Nothing here touches the database, so the importer can judge a folder before it writes anything.
"""

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import ClassVar, Protocol

from django.core.exceptions import ValidationError

SLUG_RE = re.compile(r"^[a-z0-9][a-z0-9-]*$")
# A fence opens or closes a listing; nothing between them is a reference or a marker.
FENCE_RE = re.compile(r"^\s*(`{3,}|~{3,})")
INLINE_CODE_RE = re.compile(r"(`+).*?\1")
REFERENCE_RE = re.compile(r"\[\[(?P<inner>.*?)\]\]")
# An exercise sits where a line holds its marker and nothing else, from the line's first column
# (indented, Markdown would take it as part of a list item or as code): [[exercise:<slug>]]
EXERCISE_MARKER_RE = re.compile(r"^\[\[exercise:(?P<slug>[^\]]*)\]\][ \t]*$")
MARKER_PREFIX = "exercise:"


@dataclass(frozen=True)
class Problem:
    """One broken rule. `message` completes a sentence: the marker rules' messages stand alone;
    a question's start with its verb, the subject being the question ("question 2 has no correct
    choice") or, where `choice` is set, that choice ("question 2, choice 3 is wrong and ...")."""

    rule: str
    message: str
    line: int | None = None  # in the text judged, counted from the `first_line` given
    choice: int | None = None  # the choice's place among the question's choices, from 1
    subject: str = ""  # the exercise slug a marker problem is about


# --- Exercise markers in a chapter's Markdown -------------------------------------------------


def prose_references(text: str, first_line: int = 1) -> list[tuple[int, str, str]]:
    """The [[...]] references outside code: (line, the whole line, the text inside the brackets)."""
    found = []
    fence = ""
    for offset, line in enumerate(text.split("\n")):
        opening = FENCE_RE.match(line)
        if fence:
            if opening and opening.group(1)[0] == fence[0] and len(opening.group(1)) >= len(fence):
                fence = ""
            continue
        if opening:
            fence = opening.group(1)
            continue
        for match in REFERENCE_RE.finditer(INLINE_CODE_RE.sub("", line)):
            found.append((first_line + offset, line, match.group("inner")))
    return found


def exercise_marker_slug(line: str) -> str | None:
    """The slug a line places, when the line is an exercise marker naming a well-formed slug."""
    match = EXERCISE_MARKER_RE.match(line)
    return match.group("slug") if match and SLUG_RE.match(match.group("slug")) else None


def exercise_markers(body: str, first_line: int = 1) -> list[tuple[int, str, str]]:
    """Every [[exercise:...]] outside code, well placed or not: (line, the whole line, the inside)."""
    return [found for found in prose_references(body, first_line) if found[2].startswith(MARKER_PREFIX)]


def exercise_slugs_placed(body: str) -> list[str]:
    """The slugs the body places, in order, repeats kept: what the page shows where."""
    slugs = (exercise_marker_slug(line) for _, line, _ in exercise_markers(body))
    return [slug for slug in slugs if slug]


def exercise_marker_problems(body: str, *, slugs: Sequence[str], first_line: int = 1) -> list[Problem]:
    """How the body's markers and the chapter's exercises (`slugs`) disagree, in the body's order;
    exercises the body never places come last, with no line."""
    problems, placed = [], []
    for line_number, line, inner in exercise_markers(body, first_line):
        match = EXERCISE_MARKER_RE.match(line)
        if not match:
            indented = EXERCISE_MARKER_RE.match(line.strip())
            rule, said = (
                ("marker-indented", "must start its line, not be indented")
                if indented
                else ("marker-not-alone", "must stand on a line of its own")
            )
            problems.append(Problem(rule, f"[[{inner}]] {said}", line=line_number))
            continue
        name = match.group("slug")
        if name not in slugs:
            said = f"[[exercise:{name}]] names no exercise of this chapter"
            problems.append(Problem("marker-unknown", said, line=line_number, subject=name))
        elif name in placed:
            said = f"exercise '{name}' is placed more than once"
            problems.append(Problem("marker-repeated", said, line=line_number, subject=name))
        placed.append(name)
    problems += [
        Problem(
            "exercise-unplaced",
            f"exercise '{name}' is not placed in the body (add a line [[exercise:{name}]])",
            subject=name,
        )
        for name in slugs
        if name not in placed
    ]
    return problems


# --- Quiz question types ----------------------------------------------------------------------


class ChoiceLike(Protocol):
    """A choice as the rules see it: a Choice row, a choice read from quiz.yaml, an admin form's."""

    text: str
    is_correct: bool
    explanation: str


@dataclass(frozen=True)
class ChoiceDraft:
    text: str
    is_correct: bool
    explanation: str


class QuestionType:
    """What one kind of quiz question must hold, what counts as a right answer, and the template
    that shows it. The base rules: min_choices to max_choices choices."""

    kind: ClassVar[str] = ""
    label: ClassVar[str] = ""
    # Included inside the quiz form with the chapter page's context (`quiz`, `preview`): it shows
    # `quiz.current`'s choices as inputs named "choice" whose value is the choice's id.
    template: ClassVar[str] = ""
    min_choices: ClassVar[int] = 2
    max_choices: ClassVar[int] = 6

    def problems(self, choices: Sequence[ChoiceLike]) -> list[Problem]:
        """What is wrong with a question of this type holding `choices` (empty: nothing)."""
        if not self.min_choices <= len(choices) <= self.max_choices:
            count = f"has {len(choices)} choices; a question has {self.min_choices} to {self.max_choices}"
            return [Problem("choice-count", count)]
        return []

    def is_right(self, choice: ChoiceLike) -> bool:
        """Whether a learner who picks `choice` answered right (kept on their QuizAnswer)."""
        return bool(choice.is_correct)

    def right_choice(self, choices: Sequence[ChoiceLike]) -> ChoiceLike | None:
        """The answer the review shows once the quiz is finished; None where there is none."""
        return next((choice for choice in choices if choice.is_correct), None)


_question_types: dict[str, QuestionType] = {}
DEFAULT_QUESTION_KIND = "single-choice"


def question_type_register(cls: type[QuestionType]) -> type[QuestionType]:
    """Class decorator: make a question type known to every path. A kind is registered once."""
    if not cls.kind or not cls.template:
        raise ValueError(f"{cls.__name__} needs a kind and a template")
    known = _question_types.get(cls.kind)
    if known is not None and type(known) is not cls:
        raise ValueError(f"question type '{cls.kind}' is already {type(known).__name__}")
    _question_types[cls.kind] = cls()
    return cls


def question_type_unregister(kind: str) -> None:
    """Forget a type (tests that register one of their own clean up with this)."""
    if kind == DEFAULT_QUESTION_KIND:
        raise ValueError("the default question type stays registered")
    _question_types.pop(kind, None)


def question_type_get(kind: str) -> QuestionType:
    """The registered type of that kind; KeyError names the known ones."""
    try:
        return _question_types[kind]
    except KeyError:
        raise KeyError(f"unknown question type '{kind}' (known: {', '.join(sorted(_question_types))})") from None


def question_type_choices() -> list[tuple[str, str]]:
    """(kind, label) of every registered type, the default first: the admin's list."""
    ordered = sorted(_question_types.values(), key=lambda t: (t.kind != DEFAULT_QUESTION_KIND, t.kind))
    return [(question_type.kind, question_type.label) for question_type in ordered]


def validate_question_kind(value: str) -> None:
    """Model field validator: the kind must name a registered type."""
    if value not in _question_types:
        raise ValidationError(f"Unknown question type '{value}'; known: {', '.join(sorted(_question_types))}.")


@question_type_register
class SingleChoice(QuestionType):
    """The course's quiz question: exactly one right choice, and every wrong choice explains itself
    (it is what a learner reads after picking it)."""

    kind = DEFAULT_QUESTION_KIND
    label = "Single choice: exactly one right answer"
    template = "frontend/questions/single-choice.html"

    def problems(self, choices: Sequence[ChoiceLike]) -> list[Problem]:
        problems = super().problems(choices)
        correct = sum(bool(choice.is_correct) for choice in choices)
        if correct == 0:
            problems.append(Problem("no-correct-choice", "has no correct choice"))
        elif correct > 1:
            problems.append(Problem("correct-choices", f"has {correct} correct choices; it needs exactly one"))
        problems += [
            Problem("wrong-choice-unexplained", "is wrong and has no explanation", choice=position)
            for position, choice in enumerate(choices, start=1)
            if not choice.is_correct and not choice.explanation.strip()
        ]
        return problems


def marker_sentence(problem: Problem) -> str:
    """A marker problem as a sentence for a form, where the body's lines count from 1."""
    if problem.line is not None:
        return f"Line {problem.line} of the body: {problem.message}."
    return problem.message[0].upper() + problem.message[1:] + "."


def question_sentence(problem: Problem, *, choice_names: Sequence[str]) -> str:
    """A question's problem as a sentence for a form; `choice_names[n - 1]` names choice n."""
    subject = f"Choice {problem.choice} ('{choice_names[problem.choice - 1]}')" if problem.choice else "This question"
    return f"{subject} {problem.message}."
