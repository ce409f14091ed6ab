"""Celery entry points of the dashboards: each calls one service and holds no logic of its own."""

from celery import shared_task
from django.conf import settings

from teaching.services import outbox


@shared_task(name="teaching.counts_left")
def counts_left_task() -> None:
    outbox.counts_left(older_than_s=settings.DASHBOARD_COUNT_LEFT_AFTER_S)
