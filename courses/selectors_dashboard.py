"""The dashboard figures moved to teaching.selectors; the names the courses admin's exercise panel
reads are kept here for it until that panel moves to the teaching app too."""

from teaching.selectors import DashboardFilters, exercise_stats_list

__all__ = ["DashboardFilters", "exercise_stats_list"]
