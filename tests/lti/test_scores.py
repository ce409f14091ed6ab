"""Scores to the real platform's line items (AGS): the rule of a part's score, one post per score,
and a platform that fails or hangs, whose scores wait, visible to staff, and go later.

The learner's progress is made with the platform's own services (an exercise's pass, quiz answers),
whose signals write the score note; the task's work (lti.services.scores) runs here in the test's
process, over HTTP to the platform. The Celery path is the acceptance test's
(test_browser_acceptance.py)."""

import logging
import threading

import pytest
from django.test import Client

from courses.models import Exercise, Question
from courses.services.progress import exercise_record_pass
from courses.services.quizzes import quiz_answer
from lti.models import Identity, ScoreNote, ScorePost
from lti.services import scores
from tests.lti.conftest import client_launch
from tests.lti.platform import LEARNER


@pytest.fixture
def queued(monkeypatch):
    """What the services hand to the broker (retries, the sweep's work), recorded: the worker is
    the acceptance test's."""
    calls = []
    monkeypatch.setattr(scores, "_queue", lambda name, *args, countdown=None: calls.append((name, args, countdown)))
    return calls


@pytest.fixture
def launched(platform, registered, lti_course):
    """Ada launched a graded link to part 1 (two exercises, two questions: a maximum of 4)."""
    platform.person("stu-1", "Ada Lovelace", LEARNER)
    platform.link_add(link_id="part-1", custom={"course": lti_course.slug, "part": "1"}, graded=True)
    assert client_launch(Client(), platform, user_id="stu-1", link_id="part-1").status_code == 302
    return Identity.objects.get(subject="stu-1").user


def passes(user, slug):
    exercise_record_pass(user=user, exercise=Exercise.objects.get(slug=slug))


def answers_right_at_first_try(user, course):
    for question in Question.objects.filter(chapter__course=course, chapter__number=1).order_by("position"):
        quiz_answer(user=user, question=question, choice=question.choices.get(is_correct=True))


def refresh(user, course):
    return scores.scores_refresh(user_id=user.pk, course_id=course.pk)


def test_a_part_s_score_rises_with_each_pass_and_the_finished_quiz_and_is_complete_at_the_end(
    platform, launched, lti_course, queued
):
    passes(launched, "warm-up")
    assert ScoreNote.objects.filter(user=launched, course=lti_course).exists()
    refresh(launched, lti_course)

    assert platform.scores_for("part-1")["stu-1"] | {"timestamp": None} == {
        "userId": "stu-1",
        "scoreGiven": 1,
        "scoreMaximum": 4,
        "activityProgress": "InProgress",
        "gradingProgress": "Pending",
        "timestamp": None,
    }
    assert not ScoreNote.objects.exists()

    answers_right_at_first_try(launched, lti_course)
    passes(launched, "softmax-by-hand")
    refresh(launched, lti_course)

    final = platform.scores_for("part-1")["stu-1"]
    assert (final["scoreGiven"], final["scoreMaximum"]) == (4, 4)
    assert (final["activityProgress"], final["gradingProgress"]) == ("Completed", "FullyGraded")
    assert ScorePost.objects.get(user=launched).status == ScorePost.Status.SENT


def test_the_same_score_twice_is_one_post(platform, launched, lti_course, queued):
    passes(launched, "warm-up")
    refresh(launched, lti_course)
    passes(launched, "warm-up")  # passing again changes nothing
    refresh(launched, lti_course)
    scores.score_send(post_id=ScorePost.objects.get(user=launched).pk)  # a task delivered twice

    assert len(platform.posts_for("part-1", "stu-1")) == 1


def test_a_learner_with_no_point_yet_has_no_score_and_a_wrong_first_answer_counts_nothing(
    platform, launched, lti_course, queued
):
    first, second = Question.objects.filter(chapter__number=1, chapter__course=lti_course).order_by("position")
    quiz_answer(user=launched, question=first, choice=first.choices.get(is_correct=False))
    refresh(launched, lti_course)
    assert platform.posts_for("part-1", "stu-1") == []

    quiz_answer(user=launched, question=first, choice=first.choices.get(is_correct=True))
    quiz_answer(user=launched, question=second, choice=second.choices.get(is_correct=True))
    refresh(launched, lti_course)

    score = platform.scores_for("part-1")["stu-1"]
    assert (score["scoreGiven"], score["scoreMaximum"], score["activityProgress"]) == (1, 4, "InProgress")


def test_an_exercise_link_scores_its_first_pass_only(platform, launched, lti_course, queued):
    platform.link_add(
        link_id="ex-1", custom={"course": lti_course.slug, "part": "1", "exercise": "softmax-by-hand"}, graded=True
    )
    client_launch(Client(), platform, user_id="stu-1", link_id="ex-1")

    passes(launched, "warm-up")
    refresh(launched, lti_course)
    assert platform.posts_for("ex-1", "stu-1") == []
    passes(launched, "softmax-by-hand")
    refresh(launched, lti_course)

    score = platform.scores_for("ex-1")["stu-1"]
    assert (score["scoreGiven"], score["scoreMaximum"], score["gradingProgress"]) == (1, 1, "FullyGraded")


def test_a_learner_of_no_lms_class_writes_no_note(lti_course, learner, queued):
    exercise_record_pass(user=learner, exercise=Exercise.objects.get(slug="warm-up"))

    assert not ScoreNote.objects.exists()
    assert not ScorePost.objects.exists()


def test_a_grade_endpoint_answering_500_keeps_the_score_for_staff_and_sends_it_later(
    platform, launched, lti_course, queued, caplog, admin_client
):
    caplog.set_level(logging.WARNING, logger="lti.services.scores")
    platform.score_status = 500
    passes(launched, "warm-up")

    refresh(launched, lti_course)

    post = ScorePost.objects.get(user=launched)
    assert post.status == ScorePost.Status.PENDING
    assert post.attempts == 1
    assert "HTTP 500" in post.last_error
    assert platform.scores_for("part-1") == {}
    assert any("not sent" in r.getMessage() and "HTTP 500" in r.getMessage() for r in caplog.records)
    assert queued[-1][0] == "lti.score_send" and queued[-1][2] == 10  # tried again in 10 s, then 20, 40...
    listing = admin_client.get("/admin/lti/scorepost/?status=pending")
    assert "HTTP 500" in listing.content.decode()

    # Not due yet: a task that comes early does nothing.
    assert scores.score_send(post_id=post.pk) == "not due"
    platform.score_status = None
    ScorePost.objects.filter(pk=post.pk).update(next_try_at=post.scored_at)  # the back-off has passed
    assert scores.scores_due(note_older_than_s=30) == (0, 1)
    assert scores.score_send(post_id=post.pk) == "sent"

    assert platform.scores_for("part-1")["stu-1"]["scoreGiven"] == 1
    assert ScorePost.objects.get(pk=post.pk).status == ScorePost.Status.SENT


def test_a_grade_endpoint_that_hangs_times_out_and_the_score_waits(platform, launched, lti_course, queued, monkeypatch):
    from lti import tool

    monkeypatch.setattr(tool, "HTTP_TIMEOUT_S", (1, 1))
    platform.score_hang = threading.Event()
    passes(launched, "warm-up")

    refresh(launched, lti_course)

    post = ScorePost.objects.get(user=launched)
    assert post.status == ScorePost.Status.PENDING
    assert "timed out" in post.last_error
    platform.score_hang.set()
    platform.score_hang = None


def test_a_score_the_platform_refuses_is_kept_as_refused_until_staff_send_it_again(
    platform, launched, lti_course, queued, django_capture_on_commit_callbacks
):
    platform.score_status = 404  # the line item was deleted in the gradebook
    passes(launched, "warm-up")
    refresh(launched, lti_course)

    post = ScorePost.objects.get(user=launched)
    assert post.status == ScorePost.Status.REFUSED
    assert "HTTP 404" in post.last_error
    assert scores.scores_due(note_older_than_s=30) == (0, 0)  # no retry loop on a refusal

    platform.score_status = None
    with django_capture_on_commit_callbacks(execute=True):
        assert scores.score_send_again(post_ids=[post.pk]) == 1
    assert ("lti.score_send", (post.pk,), None) in queued
    assert scores.score_send(post_id=post.pk) == "sent"


def test_a_broker_that_is_down_loses_no_score(
    platform, launched, lti_course, monkeypatch, django_capture_on_commit_callbacks
):
    from ecplatform.celery import app

    def broker_down(*args, **kwargs):
        raise ConnectionError("broker down")

    monkeypatch.setattr(app, "send_task", broker_down)
    with django_capture_on_commit_callbacks(execute=True):
        passes(launched, "warm-up")  # the learner's pass commits; queueing its score fails quietly

    note = ScoreNote.objects.get(user=launched, course=lti_course)
    sent = []
    monkeypatch.setattr(app, "send_task", lambda name, args=(), countdown=None: sent.append((name, tuple(args))))
    ScoreNote.objects.filter(pk=note.pk).update(noted_at=note.noted_at.replace(year=2000))
    assert scores.scores_due(note_older_than_s=30) == (1, 0)
    assert sent == [("lti.scores_refresh", (launched.pk, lti_course.pk))]


def test_a_kept_token_the_platform_no_longer_takes_is_replaced_once(platform, launched, lti_course, queued):
    from django.core.cache import cache

    from lti.models import ResourceLink
    from lti.tool import SCORE_SCOPE, CachingServiceConnector

    connector = CachingServiceConnector(ResourceLink.objects.get(link_id="part-1").context.platform)
    cache.set(connector._token_key([SCORE_SCOPE]), "a-token-from-before", 600)
    passes(launched, "warm-up")

    refresh(launched, lti_course)

    assert ScorePost.objects.get(user=launched).status == ScorePost.Status.SENT
    assert platform.scores_for("part-1")["stu-1"]["scoreGiven"] == 1
    assert platform.token_requests == 1
