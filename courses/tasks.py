"""Celery entry points of the courses app: each calls one service and holds no logic of its own."""

from celery import shared_task

from courses.services import authoring


@shared_task(name="courses.exercise_validate_in_sandbox", ignore_result=True)
def exercise_validate_in_sandbox_task(reply_key: str, payload: dict) -> None:
    authoring.validation_serve(reply_key=reply_key, payload=payload)
