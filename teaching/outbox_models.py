"""The dashboards' outbox: what they have still to count (teaching.services.outbox).

Each note is written in the transaction of what it tells of (so none is forgotten) and deleted in
the transaction that counts it (so nothing is counted twice).
"""

from django.db import models
from django.db.models import Q
from django.utils import timezone


class RunToCount(models.Model):
    """A finished run the dashboards have not counted yet."""

    run = models.OneToOneField("runner.Run", on_delete=models.CASCADE, primary_key=True, related_name="+")
    noted_at = models.DateTimeField(default=timezone.now, db_index=True)  # the sweeper reads the oldest

    def __str__(self):
        return f"run {self.run_id} to count"


class AnswerToCount(models.Model):
    """A quiz answer the dashboards have not counted yet. The counts, summaries and enrolment shares
    read a learner's answers without these (teaching.services.course_counts)."""

    answer = models.OneToOneField("courses.QuizAnswer", on_delete=models.CASCADE, primary_key=True, related_name="+")
    noted_at = models.DateTimeField(default=timezone.now, db_index=True)

    def __str__(self):
        return f"answer {self.answer_id} to count"


class ProgressToCount(models.Model):
    """A chapter progress row changed since the dashboards last counted it, and how it stood then:
    the counts take the difference between the row now and this (`existed` false: there was no
    row). Later changes before the count keep the note as it is."""

    progress = models.OneToOneField(
        "courses.ChapterProgress", on_delete=models.CASCADE, primary_key=True, related_name="+"
    )
    existed = models.BooleanField()
    quiz_finished_at = models.DateTimeField(null=True, blank=True)
    completed_at = models.DateTimeField(null=True, blank=True)
    noted_at = models.DateTimeField(default=timezone.now, db_index=True)

    class Meta:
        constraints = [
            models.CheckConstraint(
                condition=Q(existed=True) | Q(quiz_finished_at__isnull=True, completed_at__isnull=True),
                name="progress_to_count_absent_is_empty",
            )
        ]

    def __str__(self):
        return f"progress {self.progress_id} to count"
