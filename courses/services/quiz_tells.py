"""Quiz tells: patterns that give a course's right answers away to a learner who does not know
the subject (validate_course reports them; FORMAT.md, "Validating a course folder")."""

import re
from dataclasses import dataclass

from courses.rules import DEFAULT_QUESTION_KIND
from courses.services.content_io import CourseSpec

# Quiz tells (FORMAT.md, "Validating a course folder"). A pattern is judged over the whole course,
# on its single-choice questions, and only from QUIZ_MIN_QUESTIONS questions on: in fewer, chance
# alone makes patterns. A pattern is systematic when it holds in more than its share of the
# questions it can apply to AND in more than TELL_OVER_CHANCE times the questions chance would give.
QUIZ_MIN_QUESTIONS = 10
TELL_OVER_CHANCE = 1.5
# The right answer is a shortest choice (none is shorter) in over 40 % of the questions of 3+ choices.
SHORTEST_SHARE = 0.40
# The right answer sits at one position (the first choice, the second, ..., or the last) in over 40 %.
POSITION_SHARE = 0.40
# The right answer is the only choice that gives a reason, or the only one that gives none, in over
# 25 % of the questions of 3+ choices (chance is low: most questions have no such odd one out).
ODD_ONE_SHARE = 0.25
# A choice "gives a reason" when its text says because, since, so that, therefore, thus or hence,
# or goes on after a comma, semicolon or colon outside brackets: "1,024, one per position" does;
# "1,024" and "(2, 10, 64)" alone do not.
REASON_RE = re.compile(r"\b(because|since|so that|therefore|thus|hence)\b|[,;:]\s+\S", re.IGNORECASE)
BRACKETS_RE = re.compile(r"\([^()]*\)|\[[^\[\]]*\]")


@dataclass
class _Question:
    where: str  # "part.question", as an author finds it: 2.3 is the third question of Part 2
    lengths: list[int]
    reasons: list[bool]
    right: int  # the index of the right choice


def _quiz_questions(spec: CourseSpec) -> list[_Question]:
    """The course's single-choice questions with exactly one right choice (the importer reports the
    others), in course order."""
    found = []
    for chapter in spec.chapters:
        for number, question in enumerate(chapter.questions, start=1):
            rights = [i for i, choice in enumerate(question.choices) if choice.is_correct]
            if question.kind != DEFAULT_QUESTION_KIND or len(rights) != 1:
                continue
            texts = [" ".join(choice.text.split()) for choice in question.choices]
            found.append(
                _Question(
                    where=f"{chapter.number}.{number}",
                    lengths=[len(text) for text in texts],
                    reasons=[bool(REASON_RE.search(BRACKETS_RE.sub("", text))) for text in texts],
                    right=rights[0],
                )
            )
    return found


def _systematic(count: int, total: int, chance: float, share: float) -> bool:
    return total >= QUIZ_MIN_QUESTIONS and count > share * total and count > TELL_OVER_CHANCE * chance


def _tell(what: str, matches: list[_Question], total: int, chance: float, advice: str, *, listed: bool) -> str:
    where = f" (questions {', '.join(q.where for q in matches)})" if listed else ""
    about = f"{chance:.0f}" if chance >= 10 else f"{chance:.1f}"
    counts = f"in {len(matches)} of {total} questions (chance: about {about})"
    return f"the right answer is {what} {counts}; {advice}{where}"


def quiz_tells(spec: CourseSpec) -> list[str]:
    """Patterns that give a course's right answers away to a learner who does not know the subject:
    the right answer is systematically the shortest choice, at one position, or the odd one out
    between choices that give reasons and choices that give none. Each pattern is counted against
    what chance gives: a choice picked at random is a shortest one k/n of the time (k choices share
    the shortest length), is at a given position 1/n of the time, and is the odd one out 1/n of the
    time in a question that has one."""
    questions = _quiz_questions(spec)
    tells = []

    wide = [q for q in questions if len(q.lengths) >= 3]
    shortest = [q for q in wide if q.lengths[q.right] == min(q.lengths)]
    chance = sum(q.lengths.count(min(q.lengths)) / len(q.lengths) for q in wide)
    if _systematic(len(shortest), len(wide), chance, SHORTEST_SHARE):
        tells.append(_tell("the shortest choice", shortest, len(wide), chance, "vary the lengths", listed=True))

    # Counted from the first choice, and from the end where questions have different numbers of
    # choices (with one size for all, the last choice is a numbered one). A "last" pattern is said
    # once, not again as each numbered position it is made of.
    positions: list[tuple[str, list[_Question], float]] = []
    if len({len(q.lengths) for q in questions}) > 1:
        last = [q for q in questions if q.right == len(q.lengths) - 1]
        positions.append(("the last choice", last, sum(1 / len(q.lengths) for q in questions)))
    for index in range(max((len(q.lengths) for q in questions), default=0)):
        at = [q for q in questions if q.right == index]
        positions.append(
            (f"choice {index + 1}", at, sum(1 / len(q.lengths) for q in questions if len(q.lengths) > index))
        )
    said: set[int] = set()
    for what, at, chance in positions:
        if _systematic(len(at), len(questions), chance, POSITION_SHARE) and not {id(q) for q in at} <= said:
            tells.append(_tell(what, at, len(questions), chance, "vary its position", listed=False))
            said |= {id(q) for q in at}

    odd = []
    chance = 0.0
    for q in wide:
        giving = sum(q.reasons)
        if giving in (1, len(q.reasons) - 1):  # one choice is the odd one out
            chance += 1 / len(q.reasons)
            if q.reasons[q.right] == (giving == 1):
                odd.append(q)
    if _systematic(len(odd), len(wide), chance, ODD_ONE_SHARE):
        tells.append(
            _tell(
                "the only choice that gives a reason, or the only one that gives none,",
                odd,
                len(wide),
                chance,
                "give the choices their reasons alike",
                listed=True,
            )
        )
    return tells
