"""Celery entry points of the dashboards: each calls one service and holds no logic of its own."""

from celery import shared_task
from django.conf import settings

from teaching.services import run_counts


@shared_task(name="teaching.runs_count_left")
def runs_count_left_task() -> None:
    run_counts.runs_count_left(older_than_s=settings.DASHBOARD_COUNT_LEFT_AFTER_S)
