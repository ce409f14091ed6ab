"""What the tool keeps of the learning systems that launch it.

- Platform and Deployment: a registration, made by an admin (issuer, client id, the platform's
  URLs, the deployment ids it may launch with, the courses it may place).
- ToolKey: the tool's own signing keys, published at /lti/jwks/ (two during a rotation).
- Identity: a person of a platform, found by (issuer, subject) and nothing else, tied to an account
  of this platform made for them at their first launch (or roster sync).
- Context and ContextCohort: an LMS class, and the cohort of each course it uses (one per course).
- ResourceLink: a placed link, with what it opens (a course, a part, an exercise) and its line item.
- ScoreNote and ScorePost: the outbox of scores (lti.services.scores): a learner whose score may
  have changed, and the latest score of each learner and link with whether the platform has it.
"""

from urllib.parse import urlsplit

from django.conf import settings
from django.db import models

from courses.models import Chapter, Course, Exercise
from teaching.models import Cohort


def origin_of(url: str) -> str:
    """scheme://host[:port] of a URL; empty for anything that is not http(s)."""
    parts = urlsplit(url.strip())
    if parts.scheme not in ("http", "https") or not parts.netloc:
        return ""
    return f"{parts.scheme}://{parts.netloc}"


class Platform(models.Model):
    """A learning system registered with this tool (an LTI 1.3 registration)."""

    name = models.CharField(max_length=200, help_text="Shown to staff and in the names of the LMS classes' cohorts.")
    issuer = models.CharField(
        max_length=255, help_text="The platform's issuer (iss), e.g. https://canvas.instructure.com."
    )
    client_id = models.CharField(
        "client ID", max_length=255, help_text="The client ID the platform gave this tool (the token's aud)."
    )
    auth_login_url = models.URLField(
        "OIDC login URL", max_length=500, help_text="The platform's OIDC authorization endpoint (auth request)."
    )
    token_url = models.URLField(
        "access token URL", max_length=500, help_text="The platform's OAuth 2 token endpoint (scores, rosters)."
    )
    keyset_url = models.URLField(
        "key set URL", max_length=500, help_text="The platform's public key set (JWKS) its launches are signed with."
    )
    token_audience = models.CharField(
        max_length=500,
        blank=True,
        help_text="The aud of this tool's token requests, where the platform wants other than its token URL "
        "(Brightspace); empty: the token URL.",
    )
    frame_origins = models.TextField(
        blank=True,
        help_text="Origins whose pages may frame this tool in a launch, one per line (https://school.instructure.com); "
        "the issuer's, the login URL's and the launch's return URL's are allowed without being listed.",
    )
    courses = models.ManyToManyField(
        Course,
        related_name="+",
        blank=True,
        help_text="The courses this learning system may place and launch; its instructors become instructors of "
        "these only, each of the course its class uses.",
    )
    is_active = models.BooleanField(default=True, help_text="Off: every launch from this platform is refused.")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["name"]
        constraints = [
            models.UniqueConstraint(
                fields=["issuer", "client_id"],
                name="lti_platform_unique_client",
                violation_error_message="This issuer already has a registration with this client ID.",
            )
        ]

    def __str__(self):
        return self.name

    def frame_origin_list(self) -> list[str]:
        listed = [origin_of(line) for line in self.frame_origins.splitlines()]
        found = [origin_of(self.issuer), origin_of(self.auth_login_url), *listed]
        return list(dict.fromkeys(origin for origin in found if origin))


class Deployment(models.Model):
    """A deployment id the platform launches with (a placement of the tool in an account or course)."""

    platform = models.ForeignKey(Platform, on_delete=models.CASCADE, related_name="deployments")
    deployment_id = models.CharField("deployment ID", max_length=255)

    class Meta:
        ordering = ["platform", "deployment_id"]
        constraints = [
            models.UniqueConstraint(
                fields=["platform", "deployment_id"],
                name="lti_deployment_unique",
                violation_error_message="The platform already has this deployment ID.",
            )
        ]

    def __str__(self):
        return f"{self.platform}: {self.deployment_id}"


class ToolKey(models.Model):
    """One of the tool's RSA key pairs. The newest unretired key signs; every unretired key is
    published in the JWKS, so a platform that cached the previous set still verifies during a
    rotation (lti.services.keys)."""

    kid = models.CharField("key ID", max_length=100, unique=True)
    private_pem = models.TextField(editable=False)
    public_pem = models.TextField(editable=False)
    created_at = models.DateTimeField(auto_now_add=True)
    retired_at = models.DateTimeField(null=True, blank=True, help_text="No longer published nor used.")

    class Meta:
        ordering = ["-created_at", "-pk"]
        verbose_name = "tool key"

    def __str__(self):
        return self.kid


class Identity(models.Model):
    """A person of a learning system: (issuer, subject) is all that finds them, never an e-mail or
    a name, so no platform can take over an account made here. The account is theirs alone."""

    issuer = models.CharField(max_length=255)
    subject = models.CharField(max_length=255)
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="lti_identities")
    platform = models.ForeignKey(Platform, on_delete=models.SET_NULL, null=True, related_name="identities")
    # What the platform last said of them, for staff (never used to find anyone).
    name = models.CharField(max_length=300, blank=True)
    email = models.CharField(max_length=300, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    last_launch_at = models.DateTimeField(null=True, blank=True, help_text="Empty: known from a roster only.")

    class Meta:
        verbose_name_plural = "identities"
        constraints = [
            models.UniqueConstraint(fields=["issuer", "subject"], name="lti_identity_unique_subject"),
            models.UniqueConstraint(fields=["issuer", "user"], name="lti_identity_one_per_issuer"),
        ]

    def __str__(self):
        return f"{self.subject} at {self.issuer}"


class Context(models.Model):
    """An LMS class (the launch's context), within one deployment."""

    platform = models.ForeignKey(Platform, on_delete=models.CASCADE, related_name="contexts")
    deployment_id = models.CharField(max_length=255)
    context_id = models.CharField(max_length=255)
    title = models.CharField(max_length=500, blank=True)
    label = models.CharField(max_length=255, blank=True)
    # Names and Role Provisioning Services: where the class's roster is read (empty: not offered).
    memberships_url = models.URLField(max_length=1000, blank=True)
    instructors = models.ManyToManyField(settings.AUTH_USER_MODEL, related_name="lti_contexts_taught", blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    roster_synced_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["platform", "deployment_id", "context_id"], name="lti_context_unique_per_deployment"
            )
        ]

    def __str__(self):
        return self.title or self.label or self.context_id


class ContextCohort(models.Model):
    """The cohort of a course that an LMS class is: one per class and course, made at the class's
    first launch of the course, filled by launches and roster syncs."""

    context = models.ForeignKey(Context, on_delete=models.CASCADE, related_name="cohorts")
    course = models.ForeignKey(Course, on_delete=models.CASCADE, related_name="+")
    cohort = models.OneToOneField(Cohort, on_delete=models.CASCADE, related_name="lti_context")

    class Meta:
        constraints = [models.UniqueConstraint(fields=["context", "course"], name="lti_context_cohort_unique")]

    def __str__(self):
        return f"{self.context} in {self.course}"


class ResourceLink(models.Model):
    """A link placed in an LMS class, and what it opens: a course, one of its parts, or one exercise.
    With a line item, learners' scores for it go to the platform's gradebook."""

    context = models.ForeignKey(Context, on_delete=models.CASCADE, related_name="links")
    link_id = models.CharField(max_length=255)
    title = models.CharField(max_length=500, blank=True)
    course = models.ForeignKey(Course, on_delete=models.CASCADE, related_name="+")
    chapter = models.ForeignKey(Chapter, on_delete=models.CASCADE, null=True, blank=True, related_name="+")
    exercise = models.ForeignKey(Exercise, on_delete=models.CASCADE, null=True, blank=True, related_name="+")
    lineitem_url = models.URLField(
        "line item URL", max_length=1000, blank=True, help_text="Where scores go; empty: the link is not graded."
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["context", "link_id"], name="lti_link_unique"),
            models.CheckConstraint(
                condition=models.Q(exercise__isnull=True) | models.Q(chapter__isnull=False),
                name="lti_link_exercise_has_chapter",
            ),
        ]

    def __str__(self):
        return self.title or self.link_id


class ScoreNote(models.Model):
    """A learner's progress in a course changed and their scores there are still to be worked out:
    written in the progress's transaction, deleted once lti.services.scores has worked them out, so
    a worker that died in between leaves it for the sweep."""

    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    course = models.ForeignKey(Course, on_delete=models.CASCADE, related_name="+")
    noted_at = models.DateTimeField()

    class Meta:
        constraints = [models.UniqueConstraint(fields=["user", "course"], name="lti_score_note_unique")]

    def __str__(self):
        return f"scores of {self.user} in {self.course} to work out"


class ScorePost(models.Model):
    """A learner's latest score for a graded link, and whether the platform has it. One row per
    learner and link: a changed score replaces the one not yet sent, the same score again changes
    nothing, and a score the platform did not take stays here (admin: LTI scores) until it does."""

    class Status(models.TextChoices):
        PENDING = "pending", "Waiting to be sent"
        SENT = "sent", "Sent"
        REFUSED = "refused", "Refused by the platform"

    class Activity(models.TextChoices):
        INITIALIZED = "Initialized"
        STARTED = "Started"
        IN_PROGRESS = "InProgress"
        SUBMITTED = "Submitted"
        COMPLETED = "Completed"

    class Grading(models.TextChoices):
        NOT_READY = "NotReady"
        FAILED = "Failed"
        PENDING = "Pending"
        PENDING_MANUAL = "PendingManual"
        FULLY_GRADED = "FullyGraded"

    link = models.ForeignKey(ResourceLink, on_delete=models.CASCADE, related_name="scores")
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    score_given = models.PositiveIntegerField()
    score_maximum = models.PositiveIntegerField()
    activity_progress = models.CharField(max_length=16, choices=Activity.choices)
    grading_progress = models.CharField(max_length=16, choices=Grading.choices)
    # The score's own time, sent as its timestamp: a platform keeps the latest and ignores an older one.
    scored_at = models.DateTimeField()
    status = models.CharField(max_length=8, choices=Status.choices, default=Status.PENDING)
    attempts = models.PositiveSmallIntegerField(default=0)
    last_error = models.TextField(blank=True)
    next_try_at = models.DateTimeField(help_text="A pending score is sent at or after this time.")
    sent_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        verbose_name = "LTI score"
        constraints = [
            models.UniqueConstraint(fields=["link", "user"], name="lti_score_unique"),
            models.CheckConstraint(
                condition=models.Q(score_given__lte=models.F("score_maximum")), name="lti_score_range"
            ),
            models.CheckConstraint(
                condition=models.Q(status__in=["pending", "sent", "refused"]), name="lti_score_status"
            ),
        ]
        indexes = [models.Index(fields=["status", "next_try_at"])]

    def __str__(self):
        return f"{self.score_given}/{self.score_maximum} for {self.user} on {self.link}"
