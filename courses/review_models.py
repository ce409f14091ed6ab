"""Spaced review of quiz questions: one schedule card per learner and question, and every answer
given on the Review page (courses.services.review writes both; courses.selectors_review reads).

A card holds the scheduler's state of one question for one learner, as the `fsrs` package keeps
it (fsrs.Card): its state, its learning step, stability, difficulty, when it is due and when it
was last answered. The database keeps the ranges of these numbers; which fields a state needs
(a card in the Review state has a stability and a difficulty and no step) is the package's rule,
checked where a row is read into a fsrs.Card (courses.selectors_review.review_card_as_fsrs), which
skips a row it rejects with a log line instead of failing the learner's page.

Review answers are kept apart from quiz answers (QuizAnswer): they never change a quiz score or
the quiz dashboards' first-try figures, and have figures of their own.
"""

from django.conf import settings
from django.db import models


class ReviewState(models.IntegerChoices):
    """The values of fsrs.State (tests/learning/test_review_service.py holds them together)."""

    LEARNING = 1, "Learning"
    REVIEW = 2, "Review"
    RELEARNING = 3, "Relearning"


class ReviewRating(models.IntegerChoices):
    """The values of fsrs.Rating. A right answer is rated Good, a wrong one Again."""

    AGAIN = 1, "Again"
    HARD = 2, "Hard"
    GOOD = 3, "Good"
    EASY = 4, "Easy"


class ReviewCard(models.Model):
    """When a learner is next asked a quiz question again, and what the scheduler knows of how well
    they hold it. Made by the learner's first answer to the question in its quiz."""

    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="review_cards")
    question = models.ForeignKey("courses.Question", on_delete=models.CASCADE, related_name="review_cards")
    # The question's course, copied so a learner's due cards in a course (and a course's, for the
    # dashboard) are read from one index.
    course = models.ForeignKey("courses.Course", on_delete=models.CASCADE, related_name="+")
    state = models.PositiveSmallIntegerField(choices=ReviewState.choices)
    step = models.PositiveSmallIntegerField(null=True, blank=True, help_text="The learning step; none in Review.")
    stability = models.FloatField(null=True, blank=True, help_text="Days until recall falls to 90 %.")
    difficulty = models.FloatField(null=True, blank=True, help_text="1 (easy) to 10 (hard).")
    due = models.DateTimeField()
    last_review = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["user", "question"], name="review_card_unique"),
            models.CheckConstraint(condition=models.Q(state__in=ReviewState.values), name="review_card_state_valid"),
            models.CheckConstraint(
                condition=models.Q(stability__isnull=True) | models.Q(stability__gt=0),
                name="review_card_stability_positive",
            ),
            models.CheckConstraint(
                condition=models.Q(difficulty__isnull=True) | models.Q(difficulty__gte=1, difficulty__lte=10),
                name="review_card_difficulty_range",
            ),
        ]
        indexes = [
            # A learner's due cards in a course, oldest first (the Review page, the due counts).
            models.Index(fields=["user", "course", "due"], name="review_card_learner_due"),
            # A course's due cards across its learners (the course dashboard).
            models.Index(fields=["course", "due"], name="review_card_course_due"),
        ]

    def __str__(self):
        return f"{self.user} reviews question {self.question_id} on {self.due:%Y-%m-%d %H:%M}"


class ReviewAnswer(models.Model):
    """One answer on the Review page, with the rating it gave the card."""

    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="review_answers")
    question = models.ForeignKey("courses.Question", on_delete=models.CASCADE, related_name="review_answers")
    choice = models.ForeignKey("courses.Choice", on_delete=models.CASCADE, related_name="review_answers")
    # The question's chapter and course, copied so the dashboards count a course's review answers
    # in a date range from one index.
    chapter = models.ForeignKey("courses.Chapter", on_delete=models.CASCADE, related_name="+")
    course = models.ForeignKey("courses.Course", on_delete=models.CASCADE, related_name="+")
    is_correct = models.BooleanField()
    rating = models.PositiveSmallIntegerField(choices=ReviewRating.choices)
    answered_at = models.DateTimeField()

    class Meta:
        constraints = [
            models.CheckConstraint(
                condition=models.Q(rating__in=ReviewRating.values), name="review_answer_rating_valid"
            ),
        ]
        indexes = [
            models.Index(fields=["course", "answered_at"], name="review_answer_course_time"),
            models.Index(fields=["user", "question", "answered_at"], name="review_answer_learner"),
        ]

    def __str__(self):
        return f"{self.user} reviewed question {self.question_id} at {self.answered_at:%Y-%m-%d %H:%M}"
