"""A learner's own pieces of the course's module (courses/own_module.py says how runs use them)."""

from django.conf import settings
from django.db import models


class OwnPiece(models.Model):
    """What a learner's latest passing run of a write-the-body exercise defines: the source their
    copy of the course module holds for the exercise's pieces (`names`)."""

    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="own_pieces")
    exercise = models.ForeignKey("courses.Exercise", on_delete=models.CASCADE, related_name="own_pieces")
    names = models.JSONField(help_text="The pieces the exercise asks for, as its starter names them.")
    source = models.TextField()
    passed_at = models.DateTimeField(help_text="When the run this source comes from passed.")

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["user", "exercise"], name="own_piece_one_per_exercise"),
            models.CheckConstraint(condition=~models.Q(source=""), name="own_piece_has_source"),
        ]

    def __str__(self):
        return f"{', '.join(self.names)} of {self.user_id}"
