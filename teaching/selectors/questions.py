"""The course dashboard's quiz questions: per question, the first-try right rate, the average try
at which learners got it right, how many learners answered, and the wrong choice picked most.

With no date range (or one that leaves nothing out) the figures are sums over the course's or the
cohort's answer counts per choice (teaching.models.ChoiceCount, QuestionCount); for a narrower
range, over its days of the course's or the cohort's answer counts per choice and day
(teaching.models.ChoiceDayCount): a few rows per question and day whatever the number of learners.
"""

from __future__ import annotations

from dataclasses import dataclass

from courses.models import Choice, Course, Question
from teaching.models import ChoiceCount, ChoiceDayCount, QuestionCount
from teaching.selectors.filters import (
    CHAPTER_COLUMNS,
    DashboardFilters,
    as_number,
    day_counts_of,
    fetch_dicts,
    question_ids_of,
    range_start,
    rate_of,
    reads_whole_history,
    with_tables,
)


@dataclass(frozen=True)
class QuestionStats:
    question: Question
    first_tries: int
    first_try_right: int
    first_try_rate: float | None
    average_attempts: float | None
    learners: int
    answers: int
    top_wrong_choice: str = ""
    top_wrong_count: int = 0


# The top wrong choice per question, from `wrong` (question_id, choice_id, picked).
_TOP_WRONG_SQL = """,
ranked AS (
    SELECT wrong.question_id, choices.text, wrong.picked,
           ROW_NUMBER() OVER (PARTITION BY wrong.question_id ORDER BY wrong.picked DESC, choices.position) AS n
    FROM wrong JOIN choices ON choices.id = wrong.choice_id
)
SELECT figures.*, ranked.text AS top_wrong_choice, ranked.picked AS top_wrong_count
FROM figures LEFT JOIN ranked ON ranked.question_id = figures.question_id AND ranked.n = 1
"""

# The figures of a range's days, as sums of counts (see ChoiceDayCount for why `learners` adds up).
_FROM_COUNTS_SQL = """,
figures AS (
    SELECT question_id,
           SUM(first_tries) AS first_tries,
           SUM(CASE WHEN is_correct THEN first_tries ELSE 0 END) AS first_try_right,
           1.0 * SUM(CASE WHEN is_correct THEN attempt_total END)
               / NULLIF(SUM(CASE WHEN is_correct THEN answers END), 0) AS average_attempts,
           SUM(CASE WHEN prev_day < %s THEN learners ELSE 0 END) AS learners,
           SUM(answers) AS answers
    FROM counts GROUP BY question_id HAVING SUM(answers) > 0
),
wrong AS (
    SELECT question_id, choice_id, SUM(answers) AS picked
    FROM counts WHERE NOT is_correct GROUP BY question_id, choice_id HAVING SUM(answers) > 0
)"""


# The same figures for all time, from the course's or a cohort's counts (teaching.models.ChoiceCount,
# QuestionCount), kept as answers are saved.
_FROM_SCOPE_COUNTS_SQL = """,
figures AS (
    SELECT counts.question_id,
           SUM(first_tries) AS first_tries,
           SUM(CASE WHEN is_correct THEN first_tries ELSE 0 END) AS first_try_right,
           1.0 * SUM(CASE WHEN is_correct THEN attempt_total END)
               / NULLIF(SUM(CASE WHEN is_correct THEN answers END), 0) AS average_attempts,
           MAX(question_counts.learners) AS learners,
           SUM(answers) AS answers
    FROM counts LEFT JOIN question_counts ON question_counts.question_id = counts.question_id
    WHERE answers > 0
    GROUP BY counts.question_id
),
wrong AS (
    SELECT question_id, choice_id, SUM(answers) AS picked
    FROM counts WHERE NOT is_correct AND answers > 0 GROUP BY question_id, choice_id
)"""


def _question_figures(*, course: Course, filters: DashboardFilters, whole_history: bool) -> dict[int, dict]:
    """{question id: figures} for the questions the counted learners answered in the range."""
    choices = Choice.objects.filter(question_id__in=question_ids_of(course=course)).values("id", "position", "text")
    scope = {"course": course, "cohort": filters.cohort}
    if whole_history:
        sql, params = with_tables(
            _FROM_SCOPE_COUNTS_SQL + _TOP_WRONG_SQL,
            counts=ChoiceCount.objects.filter(**scope).values(
                "question_id", "choice_id", "is_correct", "answers", "first_tries", "attempt_total"
            ),
            question_counts=QuestionCount.objects.filter(**scope).values("question_id", "learners"),
            choices=choices,
        )
    else:
        sql, params = with_tables(
            _FROM_COUNTS_SQL + _TOP_WRONG_SQL,
            counts=day_counts_of(ChoiceDayCount, course=course, filters=filters).values(
                "question_id",
                "choice_id",
                "is_correct",
                "prev_day",
                "answers",
                "first_tries",
                "attempt_total",
                "learners",
            ),
            choices=choices,
        )
        params.append(range_start(filters))
    return {row["question_id"]: row for row in fetch_dicts(sql, params)}


def question_stats_list(
    *, course: Course, filters: DashboardFilters, whole_history: bool | None = None
) -> list[QuestionStats]:
    """Per quiz question: the first-try right rate, the average try at which learners got it right,
    and the wrong choice picked most often (ties go to the earlier choice). Two or three queries
    (`whole_history`: as for stuck_learner_list)."""
    if whole_history is None:
        whole_history = reads_whole_history(course=course, filters=filters)
    figures = _question_figures(course=course, filters=filters, whole_history=whole_history)
    questions = (
        Question.objects.filter(chapter__course=course)
        .select_related("chapter")
        .only("id", "chapter_id", "position", "prompt", *(f"chapter__{name}" for name in CHAPTER_COLUMNS))
        .order_by("chapter__number", "position")
    )
    rows = []
    for question in questions:
        row = figures.get(question.pk, {})
        first_tries, first_try_right = row.get("first_tries", 0), row.get("first_try_right", 0)
        average_attempts = as_number(row.get("average_attempts"))
        rows.append(
            QuestionStats(
                question=question,
                first_tries=first_tries,
                first_try_right=first_try_right,
                first_try_rate=rate_of(first_try_right, first_tries),
                average_attempts=None if average_attempts is None else round(average_attempts, 2),
                learners=row.get("learners", 0),
                answers=row.get("answers", 0),
                top_wrong_choice=row.get("top_wrong_choice") or "",
                top_wrong_count=row.get("top_wrong_count") or 0,
            )
        )
    return rows
