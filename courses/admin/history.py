"""History and one-click revert for authored content.

django-reversion rather than django-simple-history: an author edits a chapter's exercises and
questions inline on the chapter's page, and reversion stores one revision per admin save holding
the chapter with every row saved alongside it, so reverting a chapter brings its exercises back as
they were at that save; simple-history keeps a history table per model, each row on its own, and
reverting a chapter would leave its exercises as they are. Revisions also carry who saved and a
comment, which is the "who changed what, when". Versions are stored as serialised rows (no table
per model to migrate along with every model change).
"""

import difflib

import reversion
from django.contrib import messages
from django.db import IntegrityError, transaction
from django.http import HttpResponseNotAllowed, HttpResponseRedirect
from django.shortcuts import get_object_or_404
from django.template.response import TemplateResponse
from django.urls import path, reverse
from django.utils import timezone
from reversion.admin import VersionAdmin
from reversion.models import Version

from courses.models import Chapter
from courses.services.chapters import chapter_exercises_follow_body, chapter_reading_time_refresh

BASELINE_COMMENT = "As it was before its first edit in the admin."


def _text(value) -> list[str]:
    # Browsers post textareas with CRLF line ends and the admin's form fields strip the text: a
    # save that only changed those is no change to show.
    return ("" if value is None else str(value)).replace("\r\n", "\n").strip().split("\n")


def version_diff(*, version: Version, previous: Version | None) -> list[dict]:
    """Field by field, what this version changed from the one before it: a unified diff of each
    field whose value differs (every field for the first version of a row)."""
    try:
        now = version.field_dict
        before = previous.field_dict if previous else {}
    except Exception:  # a version of a model whose fields have since changed
        return [{"field": "(all)", "diff": "This version no longer matches the model and cannot be compared."}]
    changes = []
    for name, value in now.items():
        if name in ("id", "updated_at", "reading_minutes") or (previous and _text(before.get(name)) == _text(value)):
            continue
        lines = difflib.unified_diff(_text(before.get(name)), _text(value), "before", "after", lineterm="", n=2)
        changes.append({"field": name, "diff": "\n".join(list(lines)[2:])})
    return changes


def _previous(version: Version) -> Version | None:
    return (
        Version.objects.filter(content_type_id=version.content_type_id, object_id=version.object_id, pk__lt=version.pk)
        .order_by("-pk")
        .first()
    )


def revision_entries(*, obj) -> list[dict]:
    """Every revision that saved `obj`, newest first, with who, when, the comment, and the diff of
    each row it saved (a chapter's revision holds its exercises and questions too)."""
    versions = Version.objects.get_for_object(obj).select_related("revision__user")
    entries = []
    for version in versions:
        rows = []
        for saved in version.revision.version_set.select_related("content_type").order_by("pk"):
            diff = version_diff(version=saved, previous=_previous(saved))
            if diff:
                rows.append({"label": f"{saved.content_type.name}: {saved.object_repr}", "changes": diff})
        entries.append({"version": version, "revision": version.revision, "rows": rows})
    return entries


def object_revert(*, version: Version, user) -> None:
    """Put back every row the version's revision saved, as one new revision (itself revertible)."""
    with transaction.atomic(), reversion.create_revision():
        version.revision.revert(delete=False)
        reversion.set_user(user)
        when = timezone.localtime(version.revision.date_created).strftime("%Y-%m-%d %H:%M:%S")
        reversion.set_comment(f"Reverted to the version of {when}.")
    obj = version.object
    if isinstance(obj, Chapter):
        chapter_exercises_follow_body(chapter=obj)
        chapter_reading_time_refresh(chapter=obj)


class HistoryAdmin(VersionAdmin):
    """Records a revision on every admin save and shows the history with diffs and a revert button."""

    history_template = "admin/courses/history.html"

    def get_urls(self):
        revert = path(
            "<path:object_id>/history/<int:version_id>/revert/",
            self.admin_site.admin_view(self.revert_view),
            name=f"{self.opts.app_label}_{self.opts.model_name}_revert",
        )
        return [revert, *super().get_urls()]

    def change_view(self, request, object_id, form_url="", extra_context=None):
        # Before VersionAdmin opens the revision of this save (a revision opened inside it would
        # be merged into that one).
        if request.method == "POST":
            obj = self.get_object(request, object_id)
            if obj is not None and not Version.objects.get_for_object(obj).exists():
                # Rows imported from files have no history yet: keep what they were before this edit,
                # so the first admin edit can be reverted too.
                with reversion.create_revision():
                    reversion.add_to_revision(obj)
                    reversion.set_comment(BASELINE_COMMENT)
        return super().change_view(request, object_id, form_url, extra_context)

    def history_view(self, request, object_id, extra_context=None):
        obj = self.get_object(request, object_id)
        if obj is None or not self.has_view_or_change_permission(request, obj):
            return self._get_obj_does_not_exist_redirect(request, self.opts, object_id)
        entries = revision_entries(obj=obj)
        context = {
            **self.admin_site.each_context(request),
            "title": f"History: {obj}",
            "subtitle": None,
            "opts": self.opts,
            "object": obj,
            "entries": entries,
            "can_revert": self.has_change_permission(request, obj),
            "revert_url_name": f"admin:{self.opts.app_label}_{self.opts.model_name}_revert",
            **(extra_context or {}),
        }
        return TemplateResponse(request, self.history_template, context)

    def revert_view(self, request, object_id, version_id):
        if request.method != "POST":
            return HttpResponseNotAllowed(["POST"])
        obj = self.get_object(request, object_id)
        if obj is None or not self.has_change_permission(request, obj):
            return self._get_obj_does_not_exist_redirect(request, self.opts, object_id)
        version = get_object_or_404(Version.objects.get_for_object(obj), pk=version_id)
        try:
            object_revert(version=version, user=request.user)
        except IntegrityError as error:
            self.message_user(request, f"Could not revert: the rows no longer fit together ({error}).", messages.ERROR)
        else:
            self.message_user(
                request, f"Reverted '{obj}' to the version of {version.revision.date_created:%Y-%m-%d %H:%M:%S}."
            )
        return HttpResponseRedirect(
            reverse(f"admin:{self.opts.app_label}_{self.opts.model_name}_change", args=[obj.pk])
        )
