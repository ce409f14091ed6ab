"""Scores for the learning systems' gradebooks (LTI Assignment and Grade Services).

The rule, in this one place (README, "LTI"), for a learner and a graded link:

- A part: one point per exercise of the part whose check has passed (the first pass counts and
  stays), plus, once the part's quiz is finished, one point per question answered right at the first
  try. The maximum is the part's number of exercises plus its number of questions. While the part
  is not complete the score goes as activityProgress InProgress, gradingProgress Pending (a partial
  score that may still rise); once complete (quiz finished, every check passed) as Completed,
  FullyGraded. A part the learner has no point in and whose quiz they have not finished has no
  score yet: nothing is sent.
- An exercise: 1 of 1, Completed and FullyGraded, at its first pass; nothing before.
- A course: the sum of its published parts' scores and maximums, Completed and FullyGraded once
  every published part is complete.

A score is sent when it changes: an exercise's first pass, a finished quiz, a completed part. The
progress's transaction writes a note (ScoreNote), a task works out the learner's scores after the
commit and keeps each as the latest of its link (ScorePost), and posts it: off the learner's
request, retried with back-off while the platform fails, at most once per score (the same score
again changes nothing), and kept until the platform has it (the admin lists what is waiting and
why); the sweep (lti.scores_due) sends what a lost message or a dead worker left.
"""

import logging
from dataclasses import dataclass
from datetime import timedelta

import requests
from django.conf import settings
from django.db import IntegrityError, transaction
from django.db.models import F, QuerySet
from django.utils import timezone
from pylti1p3.assignments_grades import AssignmentsGradesService
from pylti1p3.exception import LtiException, LtiServiceException
from pylti1p3.grade import Grade

from courses.models import Chapter, ChapterProgress, Exercise, ExerciseState, Question
from lti.models import Identity, ResourceLink, ScoreNote, ScorePost
from lti.tool import HTTP_TIMEOUT_S, SCORE_SCOPE, CachingServiceConnector

log = logging.getLogger(__name__)

# A claimed post is another task's for this long (well above the HTTP timeouts of one try).
SEND_LEASE_S = 120
# Statuses a platform may answer for a moment and then not: tried again, like a platform that is down.
TRANSIENT_STATUSES = frozenset({401, 408, 425, 429})


@dataclass(frozen=True)
class Score:
    given: int
    maximum: int
    activity: str
    grading: str

    @classmethod
    def of(cls, *, given: int, maximum: int, complete: bool) -> "Score":
        if complete:
            return cls(given, maximum, ScorePost.Activity.COMPLETED, ScorePost.Grading.FULLY_GRADED)
        return cls(given, maximum, ScorePost.Activity.IN_PROGRESS, ScorePost.Grading.PENDING)


def part_maximum(*, chapter: Chapter) -> int:
    return Exercise.objects.filter(chapter=chapter).count() + Question.objects.filter(chapter=chapter).count()


def part_score(*, user, chapter: Chapter) -> Score | None:
    """A part's score for a learner: the rule in this module's docstring."""
    exercises = Exercise.objects.filter(chapter=chapter).count()
    questions = Question.objects.filter(chapter=chapter).count()
    passed = ExerciseState.objects.filter(user=user, exercise__chapter=chapter, passed_at__isnull=False).count()
    progress = ChapterProgress.objects.filter(user=user, chapter=chapter).first()
    quiz_finished = progress is not None and progress.quiz_finished_at is not None
    quiz_points = (progress.quiz_score or 0) if quiz_finished else 0
    if not (exercises + questions) or not (passed or quiz_finished):
        return None
    complete = progress is not None and progress.completed_at is not None
    return Score.of(given=passed + quiz_points, maximum=exercises + questions, complete=complete)


def exercise_score(*, user, exercise: Exercise) -> Score | None:
    if not ExerciseState.objects.filter(user=user, exercise=exercise, passed_at__isnull=False).exists():
        return None
    return Score.of(given=1, maximum=1, complete=True)


def course_score(*, user, course) -> Score | None:
    parts = [part for part in Chapter.objects.filter(course=course, published=True).order_by("number")]
    scores = [part_score(user=user, chapter=part) for part in parts]
    if not any(scores):
        return None
    complete = ChapterProgress.objects.filter(user=user, chapter__in=parts, completed_at__isnull=False).count() == len(
        parts
    )
    return Score.of(
        given=sum(score.given for score in scores if score),
        maximum=sum(part_maximum(chapter=part) for part in parts),
        complete=complete,
    )


def link_score(*, user, link: ResourceLink) -> Score | None:
    if link.exercise_id is not None:
        return exercise_score(user=user, exercise=link.exercise)
    if link.chapter_id is not None:
        return part_score(user=user, chapter=link.chapter)
    return course_score(user=user, course=link.course)


def target_maximum(*, course, chapter=None, exercise=None) -> int:
    """The scoreMaximum of a link to this target (deep linking's line item)."""
    if exercise is not None:
        return 1
    if chapter is not None:
        return part_maximum(chapter=chapter)
    return sum(part_maximum(chapter=part) for part in Chapter.objects.filter(course=course, published=True))


# --- the outbox --------------------------------------------------------------------------------------


def graded_links_for(*, user_id: int, course_id: int) -> QuerySet[ResourceLink]:
    """The graded links of a course placed in a class the learner is in (its cohort of the course)."""
    return (
        ResourceLink.objects.filter(course_id=course_id)
        .exclude(lineitem_url="")
        .filter(context__cohorts__course_id=course_id, context__cohorts__cohort__memberships__user_id=user_id)
        .distinct()
    )


def scores_note(*, user_id: int, course_id: int) -> None:
    """In the transaction of a learner's progress: note that their scores in the course are to be
    worked out (when any graded link of it is placed in their class), and ask for it after the commit."""
    if not graded_links_for(user_id=user_id, course_id=course_id).exists():
        return
    now = timezone.now()
    if not ScoreNote.objects.filter(user_id=user_id, course_id=course_id).update(noted_at=now):
        try:
            with transaction.atomic():
                ScoreNote.objects.create(user_id=user_id, course_id=course_id, noted_at=now)
        except IntegrityError:  # noted by a concurrent transaction in the meantime
            ScoreNote.objects.filter(user_id=user_id, course_id=course_id).update(noted_at=now)
    transaction.on_commit(lambda: _queue("lti.scores_refresh", user_id, course_id))


def _queue(task_name: str, *args, countdown: float | None = None) -> None:
    """Hand work to a worker; a broker that is down loses nothing: the note or the pending post
    stays, and the sweep (lti.scores_due) queues it again."""
    from ecplatform.celery import app

    try:
        app.send_task(task_name, args=args, countdown=countdown)
    except Exception:
        log.warning("LTI: could not queue %s%r; the sweep will", task_name, args, exc_info=True)


def score_keep(*, link: ResourceLink, user, score: Score) -> ScorePost | None:
    """Keep `score` as the learner's latest for the link. The same score as the one kept changes
    nothing (None); a new one replaces it, waiting to be sent."""
    now = timezone.now()
    values = {
        "score_given": score.given,
        "score_maximum": score.maximum,
        "activity_progress": score.activity,
        "grading_progress": score.grading,
    }
    with transaction.atomic():
        post = ScorePost.objects.select_for_update().filter(link=link, user=user).first()
        if post is not None and all(getattr(post, name) == value for name, value in values.items()):
            return None
        fresh = {
            **values,
            "scored_at": now,
            "status": ScorePost.Status.PENDING,
            "attempts": 0,
            "last_error": "",
            "next_try_at": now,
            "sent_at": None,
        }
        if post is None:
            try:
                with transaction.atomic():
                    return ScorePost.objects.create(link=link, user=user, **fresh)
            except IntegrityError:
                post = ScorePost.objects.select_for_update().get(link=link, user=user)
        for name, value in fresh.items():
            setattr(post, name, value)
        post.save()
        return post


def scores_refresh(*, user_id: int, course_id: int) -> list[int]:
    """Work out the learner's scores for the course's graded links in their classes, keep each that
    changed, and send those. Returns the ids of the posts it kept."""
    from django.contrib.auth import get_user_model

    note = ScoreNote.objects.filter(user_id=user_id, course_id=course_id).first()
    user = get_user_model().objects.filter(pk=user_id).first()
    kept = []
    if user is not None:
        links = graded_links_for(user_id=user_id, course_id=course_id).select_related("chapter", "exercise", "course")
        for link in links:
            score = link_score(user=user, link=link)
            if score is not None and score.maximum > 0:
                post = score_keep(link=link, user=user, score=score)
                if post is not None:
                    kept.append(post.pk)
    if note is not None:
        # A note written again since it was read stays, for the task its writer queued.
        ScoreNote.objects.filter(pk=note.pk, noted_at=note.noted_at).delete()
    for post_id in kept:
        score_send(post_id=post_id)
    return kept


def _backoff(attempts: int) -> timedelta:
    seconds = settings.LTI_SCORE_RETRY_FIRST_S * 2 ** max(0, attempts - 1)
    return timedelta(seconds=min(seconds, settings.LTI_SCORE_RETRY_MAX_S))


def _put(post: ScorePost, subject: str) -> None:
    grade = (
        Grade()
        .set_score_given(post.score_given)
        .set_score_maximum(post.score_maximum)
        .set_activity_progress(post.activity_progress)
        .set_grading_progress(post.grading_progress)
        .set_timestamp(post.scored_at.isoformat(timespec="milliseconds"))
        .set_user_id(subject)
    )
    connector = CachingServiceConnector(post.link.context.platform)
    service = AssignmentsGradesService(connector, {"scope": [SCORE_SCOPE], "lineitem": post.link.lineitem_url})
    try:
        service.put_grade(grade)
    except LtiServiceException as error:
        if error.response.status_code != 401:
            raise
        # A token the platform no longer takes (revoked, or kept past its life): one fresh token.
        connector.forget_token([SCORE_SCOPE])
        service.put_grade(grade)


def score_send(*, post_id: int) -> str:
    """Post one kept score to its line item, if it is due and no other task has it. Returns what
    happened: "sent", "refused", "retry", or "not due"."""
    now = timezone.now()
    claimed = ScorePost.objects.filter(pk=post_id, status=ScorePost.Status.PENDING, next_try_at__lte=now).update(
        next_try_at=now + timedelta(seconds=SEND_LEASE_S)
    )
    if not claimed:
        return "not due"
    post = ScorePost.objects.select_related("link__context__platform", "user").get(pk=post_id)
    platform = post.link.context.platform
    this_score = ScorePost.objects.filter(pk=post.pk, scored_at=post.scored_at)
    identity = Identity.objects.filter(issuer=platform.issuer, user=post.user).first()
    if identity is None:
        this_score.update(status=ScorePost.Status.REFUSED, last_error="The learner has no identity at this platform.")
        return "refused"
    try:
        _put(post, identity.subject)
    except LtiServiceException as error:
        status = error.response.status_code
        message = f"HTTP {status} from {error.response.url}: {error.response.text[:300]}"
        if status == 409:
            # The platform holds a later score of this learner for the line item (AGS: timestamps).
            this_score.update(status=ScorePost.Status.SENT, sent_at=now, attempts=F("attempts") + 1, last_error=message)
            return "sent"
        if 400 <= status < 500 and status not in TRANSIENT_STATUSES:
            log.warning("LTI score %s refused by %s: %s", post.pk, platform, message)
            this_score.update(status=ScorePost.Status.REFUSED, attempts=F("attempts") + 1, last_error=message)
            return "refused"
        return _failed(post, platform, message)
    except requests.Timeout:
        return _failed(post, platform, f"No answer from {platform.name} within {sum(HTTP_TIMEOUT_S)} s (timed out).")
    except requests.RequestException as error:
        return _failed(post, platform, f"Could not reach {platform.name}: {error}")
    except LtiException as error:
        return _failed(post, platform, str(error))
    this_score.update(status=ScorePost.Status.SENT, sent_at=timezone.now(), attempts=F("attempts") + 1, last_error="")
    return "sent"


def _failed(post: ScorePost, platform, message: str) -> str:
    attempts = post.attempts + 1
    delay = _backoff(attempts)
    ScorePost.objects.filter(pk=post.pk, scored_at=post.scored_at).update(
        attempts=attempts, last_error=message[:2000], next_try_at=timezone.now() + delay
    )
    log.warning(
        "LTI score %s for %s on %s not sent (attempt %s), next try in %s s: %s",
        post.pk,
        post.user,
        post.link,
        attempts,
        int(delay.total_seconds()),
        message,
    )
    if delay.total_seconds() <= settings.LTI_SCORE_RETRY_QUEUED_MAX_S:
        _queue("lti.score_send", post.pk, countdown=delay.total_seconds())
    return "retry"


def score_send_again(*, post_ids) -> int:
    """Staff: send these scores again now (a refused one too, once its cause is fixed)."""
    now = timezone.now()
    count = (
        ScorePost.objects.filter(pk__in=post_ids)
        .exclude(status=ScorePost.Status.SENT)
        .update(status=ScorePost.Status.PENDING, next_try_at=now)
    )
    for post_id in post_ids:
        transaction.on_commit(lambda post_id=post_id: _queue("lti.score_send", post_id))
    return count


def scores_due(*, note_older_than_s: int) -> tuple[int, int]:
    """The sweep: notes that no task worked out (a lost message, a dead worker) and pending scores
    whose next try is due. Returns (notes, posts) queued."""
    now = timezone.now()
    notes = list(
        ScoreNote.objects.filter(noted_at__lte=now - timedelta(seconds=note_older_than_s)).values_list(
            "user_id", "course_id"
        )
    )
    for user_id, course_id in notes:
        _queue("lti.scores_refresh", user_id, course_id)
    posts = list(
        ScorePost.objects.filter(status=ScorePost.Status.PENDING, next_try_at__lte=now).values_list("pk", flat=True)
    )
    for post_id in posts:
        _queue("lti.score_send", post_id)
    return len(notes), len(posts)
