"""The review's clock, moved by the tests instead of waiting (courses.services.review.now), and the
steps of a learner's review the tests repeat."""

import datetime as dt

import pytest
from django.utils import timezone

from courses.services import review


class Clock:
    def __init__(self):
        self.at = timezone.now()

    def __call__(self) -> dt.datetime:
        return self.at

    def move(self, **delta) -> None:
        self.at += dt.timedelta(**delta)


@pytest.fixture
def clock(monkeypatch) -> Clock:
    moved = Clock()
    monkeypatch.setattr(review, "now", moved)
    return moved
