"""The Run: one press of Run by a learner, and the record of what happened to it.

The row is the record (Celery keeps no results): the worker appends output events to it as they
arrive, keeps `heartbeat_at` fresh while the sandbox runs, and writes the terminal status last.
"""

import json
import uuid
from typing import TYPE_CHECKING

from django.conf import settings
from django.db import models
from django.utils import timezone

from courses.models import Exercise

if TYPE_CHECKING:
    # The field's value is a list (set and read), not a TextField's str. Django's field classes
    # take no type arguments at run time.
    _JSONTextField = models.TextField[list[dict], list[dict]]
else:
    _JSONTextField = models.TextField


class EventListField(_JSONTextField):
    """A list of events kept as JSON text. Not jsonb: PostgreSQL's jsonb (and text) cannot hold a
    NUL character, and a learner's program may print one; as JSON text it is the escape \\u0000."""

    def from_db_value(self, value, expression, connection):
        return [] if value in (None, "") else json.loads(value)

    def to_python(self, value):
        if isinstance(value, list):
            return value
        return [] if value in (None, "") else json.loads(value)

    def get_prep_value(self, value):
        return json.dumps(value if value is not None else [])

    def value_to_string(self, obj):
        return self.get_prep_value(self.value_from_object(obj))


class Run(models.Model):
    class Status(models.TextChoices):
        QUEUED = "queued", "Queued"
        RUNNING = "running", "Running"
        SUCCEEDED = "succeeded", "Succeeded"
        FAILED = "failed", "Failed"
        TIMED_OUT = "timed_out", "Timed out"
        ERROR = "error", "Error"

    ACTIVE = (Status.QUEUED, Status.RUNNING)
    TERMINAL = (Status.SUCCEEDED, Status.FAILED, Status.TIMED_OUT, Status.ERROR)

    class Queue(models.TextChoices):
        CPU = "cpu", "CPU"
        GPU = "gpu", "GPU"

    class Limit(models.TextChoices):
        """Which of the sandbox's limits ended the run; NONE for a run no limit stopped."""

        NONE = "none", "None"
        TIME = "time", "Time"
        MEMORY = "memory", "Memory"
        OUTPUT = "output", "Output"
        PROCESSES = "processes", "Processes"
        FILES = "files", "Files"

    class Cause(models.TextChoices):
        """Who ended the run: the learner's program (by finishing, failing or hitting a limit), the
        learner (Stop), or the platform (a sandbox that broke, a worker that vanished)."""

        PROGRAM = "program", "Program"
        LEARNER = "learner", "Learner"
        PLATFORM = "platform", "Platform"

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="runs")
    exercise = models.ForeignKey(Exercise, on_delete=models.CASCADE, related_name="runs")
    code = models.TextField(blank=True)
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.QUEUED)
    queue = models.CharField(max_length=8, choices=Queue.choices, default=Queue.CPU)
    # Output events in the order they arrived (DESIGN.md, output protocol); the terminal status is
    # not one of them: it lives in the fields below.
    outputs = EventListField(default=list, blank=True)
    stdout = models.TextField(blank=True, help_text="The stdout stream events joined, capped.")
    stderr = models.TextField(blank=True, help_text="The stderr stream events joined, capped.")
    exit_code = models.IntegerField(null=True, blank=True)
    # The English sentence is for people; code reads the facts below it (empty while the run is active).
    reason = models.CharField(max_length=500, blank=True, help_text="Which limit stopped the run, or what broke.")
    limit = models.CharField(max_length=16, choices=Limit.choices, blank=True)
    cause = models.CharField(max_length=16, choices=Cause.choices, blank=True)
    duration_ms = models.PositiveIntegerField(null=True, blank=True)
    backend = models.CharField(max_length=32, blank=True)
    # Whether the run went to a warm sandbox (a learner's, or a spare started ahead) or a cold one.
    warm = models.BooleanField(null=True, blank=True)
    worker = models.CharField(max_length=255, blank=True)
    stop_requested = models.BooleanField(default=False)
    created_at = models.DateTimeField(default=timezone.now)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    heartbeat_at = models.DateTimeField(null=True, blank=True)
    # Copied from the output events when the run ends, so the instructor dashboards can count
    # error types and passes in the database: the first error's `ename`, and the check's verdict
    # (None when the run had no check event).
    error_name = models.CharField(max_length=100, blank=True)
    check_passed = models.BooleanField(null=True, blank=True)
    # What went wrong, in one line, as the learner's attempt history lists it (runner/verdict.py,
    # failure_line): empty for a pass and for a run still going.
    failure = models.CharField(max_length=200, blank=True)
    # The run's verdict (runner/verdict.py), stored with its status: it succeeded and its check
    # passed. Everything that asks "did this run pass" reads this column or the status event's copy.
    passed = models.BooleanField(default=False)

    class Meta:
        ordering = ["-created_at"]
        indexes = [
            models.Index(fields=["user", "status"], name="run_user_status"),
            models.Index(fields=["user", "created_at"], name="run_user_created"),
            models.Index(fields=["status", "heartbeat_at"], name="run_status_heartbeat"),
            models.Index(fields=["exercise", "user", "created_at"], name="run_exercise_user_created"),
        ]
        constraints = [
            models.CheckConstraint(
                condition=models.Q(status__in=["queued", "running", "succeeded", "failed", "timed_out", "error"]),
                name="run_status_valid",
            ),
            models.CheckConstraint(condition=models.Q(queue__in=["cpu", "gpu"]), name="run_queue_valid"),
            # A finished run says when it finished; an unfinished one does not.
            models.CheckConstraint(
                condition=models.Q(status__in=["queued", "running"], finished_at__isnull=True)
                | models.Q(status__in=["succeeded", "failed", "timed_out", "error"], finished_at__isnull=False),
                name="run_finished_at_matches_status",
            ),
            # Only a run that succeeded can have passed.
            models.CheckConstraint(
                condition=models.Q(passed=False) | models.Q(status="succeeded"), name="run_passed_only_if_succeeded"
            ),
        ]

    def __str__(self):
        return f"run {self.id} ({self.status})"

    @property
    def is_finished(self) -> bool:
        return self.status in self.TERMINAL

    def status_event(self) -> dict:
        """The event that ends a run's event stream: DESIGN.md's fields, then the facts (which limit
        stopped the run, who ended it, the check's verdict, the run's verdict) that code reads
        instead of `reason`."""
        return {
            "type": "status",
            "status": self.status,
            "exit_code": self.exit_code,
            "reason": self.reason,
            "duration_ms": self.duration_ms,
            "limit": self.limit,
            "cause": self.cause,
            "check_passed": self.check_passed,
            "passed": self.passed,
        }
