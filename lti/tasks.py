"""Celery entry points for scores: each takes ids and calls one service."""

from celery import shared_task
from django.conf import settings

from lti.services import scores


@shared_task(name="lti.scores_refresh")
def scores_refresh_task(user_id: int, course_id: int) -> None:
    scores.scores_refresh(user_id=user_id, course_id=course_id)


@shared_task(name="lti.score_send")
def score_send_task(post_id: int) -> None:
    scores.score_send(post_id=post_id)


@shared_task(name="lti.scores_due")
def scores_due_task() -> None:
    scores.scores_due(note_older_than_s=settings.LTI_SCORE_NOTE_LEFT_AFTER_S)
