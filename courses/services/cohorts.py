"""Cohort writes moved to teaching.services.cohorts; the names the courses admin's cohort section
uses are kept here for it until that section moves to the teaching app too."""

from teaching.services.cohorts import cohort_invite_code_new, cohort_member_add

__all__ = ["cohort_invite_code_new", "cohort_member_add"]
