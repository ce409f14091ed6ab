"""Reads for the instructor dashboards, one module per part: access and filters, the course
dashboard, its stuck learners, one learner, the CSV exports. Callers import the names from here."""

from teaching.selectors.access import course_get_for_teaching, course_list_taught_by, learner_get_for_teaching
from teaching.selectors.course import (
    ChapterFunnelRow,
    CourseDashboard,
    ExerciseStats,
    chapter_funnel,
    course_dashboard,
    exercise_stats_list,
)
from teaching.selectors.exports import (
    LEARNER_CSV_HEADER,
    QUESTION_CSV_HEADER,
    learner_progress_rows,
    question_stats_rows,
)
from teaching.selectors.filters import (
    DashboardFilters,
    active_days,
    cohort_get_by_invite_code,
    cohort_list_for_course,
    dashboard_filters_from_params,
    stuck_failed_runs,
    stuck_idle_days,
    stuck_shown,
)
from teaching.selectors.learners import (
    RUNS_PER_PAGE,
    LearnerChapterRow,
    LearnerDetail,
    learner_detail,
    learner_run_list,
)
from teaching.selectors.questions import QuestionStats, question_stats_list
from teaching.selectors.review import ReviewFigures, review_figures
from teaching.selectors.stuck import StuckLearner, stuck_learner_list

__all__ = [
    "LEARNER_CSV_HEADER",
    "QUESTION_CSV_HEADER",
    "RUNS_PER_PAGE",
    "ChapterFunnelRow",
    "CourseDashboard",
    "DashboardFilters",
    "ExerciseStats",
    "LearnerChapterRow",
    "LearnerDetail",
    "QuestionStats",
    "ReviewFigures",
    "StuckLearner",
    "active_days",
    "chapter_funnel",
    "cohort_get_by_invite_code",
    "cohort_list_for_course",
    "course_dashboard",
    "course_get_for_teaching",
    "course_list_taught_by",
    "dashboard_filters_from_params",
    "exercise_stats_list",
    "learner_detail",
    "learner_get_for_teaching",
    "learner_progress_rows",
    "learner_run_list",
    "question_stats_list",
    "question_stats_rows",
    "review_figures",
    "stuck_failed_runs",
    "stuck_idle_days",
    "stuck_learner_list",
    "stuck_shown",
]
