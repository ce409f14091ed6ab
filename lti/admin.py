"""Registration of learning systems, the tool's keys, and what staff watch: the scores waiting for a
platform (and why), the LMS classes with their roster sync."""

from django.contrib import admin, messages
from django.db import models
from django.urls import reverse

from lti.models import Context, Deployment, Identity, Platform, ResourceLink, ScorePost, ToolKey
from lti.services.keys import key_rotate
from lti.services.launch import LaunchRefused
from lti.services.roster import roster_sync
from lti.services.scores import score_send_again


class DeploymentInline(admin.TabularInline):
    model = Deployment
    extra = 1


@admin.register(Platform)
class PlatformAdmin(admin.ModelAdmin):
    list_display = ("name", "issuer", "client_id", "is_active")
    list_filter = ("is_active",)
    search_fields = ("name", "issuer", "client_id")
    filter_horizontal = ("courses",)
    inlines = [DeploymentInline]
    change_form_template = "admin/lti/platform/change_form.html"
    # A learning system's URLs are HTTPS; one typed without a scheme is taken as such.
    formfield_overrides = {models.URLField: {"assume_scheme": "https"}}
    fieldsets = (
        (None, {"fields": ("name", "is_active", "courses")}),
        (
            "The platform (from its registration of this tool)",
            {"fields": ("issuer", "client_id", "auth_login_url", "token_url", "keyset_url", "token_audience")},
        ),
        ("Iframes", {"fields": ("frame_origins",)}),
    )

    def changeform_view(self, request, object_id=None, form_url="", extra_context=None):
        tool_urls = {
            name: request.build_absolute_uri(reverse(f"lti:{view}"))
            for name, view in (
                ("OIDC login initiation URL", "login"),
                ("Redirect / launch / target link URI", "launch"),
                ("Deep linking URL", "launch"),
                ("Public key set (JWKS) URL", "jwks"),
            )
        }
        return super().changeform_view(request, object_id, form_url, {**(extra_context or {}), "tool_urls": tool_urls})


@admin.register(ToolKey)
class ToolKeyAdmin(admin.ModelAdmin):
    list_display = ("kid", "created_at", "retired_at")
    readonly_fields = ("kid", "created_at", "retired_at")
    actions = ["rotate"]

    def has_add_permission(self, request):
        return False

    @admin.action(description="Rotate the tool's key (the previous one stays published until the next rotation)")
    def rotate(self, request, queryset):
        key = key_rotate()
        self.message_user(request, f"New signing key {key.kid}.", messages.SUCCESS)


@admin.register(Identity)
class IdentityAdmin(admin.ModelAdmin):
    list_display = ("subject", "issuer", "user", "name", "last_launch_at")
    search_fields = ("subject", "name", "user__username")
    readonly_fields = ("issuer", "subject", "user", "platform", "name", "email", "created_at", "last_launch_at")

    def has_add_permission(self, request):
        return False


@admin.register(Context)
class ContextAdmin(admin.ModelAdmin):
    list_display = ("__str__", "platform", "context_id", "roster_synced_at")
    list_filter = ("platform",)
    readonly_fields = (
        "platform",
        "deployment_id",
        "context_id",
        "title",
        "label",
        "memberships_url",
        "roster_synced_at",
    )
    filter_horizontal = ("instructors",)
    actions = ["sync_roster"]

    def has_add_permission(self, request):
        return False

    @admin.action(description="Sync the roster from the learning system")
    def sync_roster(self, request, queryset):
        for context in queryset.select_related("platform"):
            try:
                result = roster_sync(context=context)
            except LaunchRefused as refusal:
                self.message_user(request, f"{context}: {refusal.reason}", messages.ERROR)
                continue
            self.message_user(
                request, f"{context}: {result.learners} learners, {result.added} added, {result.removed} removed."
            )


@admin.register(ResourceLink)
class ResourceLinkAdmin(admin.ModelAdmin):
    list_display = ("__str__", "context", "course", "chapter", "exercise", "lineitem_url")
    list_filter = ("context__platform",)
    raw_id_fields = ("context", "course", "chapter", "exercise")


@admin.register(ScorePost)
class ScorePostAdmin(admin.ModelAdmin):
    """Every score kept for a platform: a pending or refused one says why it is not there yet."""

    list_display = ("user", "link", "score", "status", "attempts", "next_try_at", "sent_at", "last_error_short")
    list_filter = ("status", "link__context__platform")
    search_fields = ("user__username", "link__title")
    readonly_fields = [field.name for field in ScorePost._meta.fields]
    actions = ["send_again"]

    def has_add_permission(self, request):
        return False

    def get_queryset(self, request):
        return super().get_queryset(request).select_related("user", "link")

    @admin.display(description="score")
    def score(self, post):
        return f"{post.score_given} / {post.score_maximum} ({post.activity_progress}, {post.grading_progress})"

    @admin.display(description="last error")
    def last_error_short(self, post):
        return post.last_error[:120]

    @admin.action(description="Send again now")
    def send_again(self, request, queryset):
        count = score_send_again(post_ids=list(queryset.values_list("pk", flat=True)))
        self.message_user(request, f"{count} score(s) queued to send again.")
