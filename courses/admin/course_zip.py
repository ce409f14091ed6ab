"""Export a course as a zip and import one (dry run, then apply) from the course admin."""

import secrets
from pathlib import Path

from django.conf import settings
from django.contrib import admin, messages
from django.core.exceptions import PermissionDenied
from django.http import HttpResponse, HttpResponseNotAllowed, HttpResponseRedirect
from django.template.response import TemplateResponse
from django.urls import path, reverse
from django.utils.html import format_html

from courses.services.course_zip import MAX_BYTES, course_zip_export, course_zip_import, course_zip_plan

SESSION_KEY = "course_zip_pending"


def _pending_dir() -> Path:
    # The uploaded zip waits here between its dry run and the apply, named by a random token
    # that only the uploading admin's session knows.
    folder = Path(settings.VAR_DIR) / "course-imports"
    folder.mkdir(parents=True, exist_ok=True)
    return folder


class CourseZipAdminMixin:
    change_list_template = "admin/courses/course/change_list.html"

    def get_urls(self):
        wrap = self.admin_site.admin_view
        return [
            path("import-zip/", wrap(self.import_zip_view), name="courses_course_import_zip"),
            path("<path:object_id>/export-zip/", wrap(self.export_zip_view), name="courses_course_export_zip"),
            *super().get_urls(),
        ]

    @admin.display(description="Export")
    def export_link(self, obj):
        if not obj or not obj.pk:
            return "Save the course to export it."
        url = reverse("admin:courses_course_export_zip", args=[obj.pk])
        return format_html('<a href="{}">Download the course as a zip</a> (the course folder format)', url)

    def _may_import(self, request) -> bool:
        return request.user.is_staff and self.has_add_permission(request) and self.has_change_permission(request)

    def export_zip_view(self, request, object_id):
        course = self.get_object(request, object_id)
        if course is None or not self.has_view_or_change_permission(request, course):
            return self._get_obj_does_not_exist_redirect(request, self.opts, object_id)
        response = HttpResponse(course_zip_export(course=course), content_type="application/zip")
        response["Content-Disposition"] = f'attachment; filename="{course.slug}.zip"'
        return response

    def import_zip_view(self, request):
        if not self._may_import(request):
            raise PermissionDenied
        context = {**self.admin_site.each_context(request), "opts": self.opts, "title": "Import a course from a zip"}
        if request.method == "GET":
            return TemplateResponse(request, "admin/courses/course/import_zip.html", context)
        if request.method != "POST":
            return HttpResponseNotAllowed(["GET", "POST"])
        if "apply" in request.POST:
            return self._apply(request)
        upload = request.FILES.get("zip")
        if upload is None:
            context["error"] = "Choose a zip file to import."
            return TemplateResponse(request, "admin/courses/course/import_zip.html", context)
        if upload.size > MAX_BYTES:
            context["error"] = f"The zip is larger than {MAX_BYTES // 2**20} MiB."
            return TemplateResponse(request, "admin/courses/course/import_zip.html", context)
        data = upload.read()
        plan = course_zip_plan(data=data)
        context.update(plan=plan, name=upload.name)
        if plan.ok:
            token = secrets.token_hex(16)
            (_pending_dir() / f"{token}.zip").write_bytes(data)
            request.session[SESSION_KEY] = {"token": token, "name": upload.name}
            context["token"] = token
        return TemplateResponse(request, "admin/courses/course/import_zip.html", context)

    def _apply(self, request):
        pending = request.session.get(SESSION_KEY) or {}
        token = request.POST.get("token", "")
        if not token or pending.get("token") != token:
            self.message_user(request, "That dry run has expired: upload the zip again.", messages.ERROR)
            return HttpResponseRedirect(reverse("admin:courses_course_import_zip"))
        file = _pending_dir() / f"{token}.zip"
        try:
            data = file.read_bytes()
        except FileNotFoundError:
            self.message_user(request, "That dry run has expired: upload the zip again.", messages.ERROR)
            return HttpResponseRedirect(reverse("admin:courses_course_import_zip"))
        plan = course_zip_import(data=data, user=request.user, name=pending.get("name", ""))
        file.unlink(missing_ok=True)
        request.session.pop(SESSION_KEY, None)
        if not plan.ok:  # an exercise of a published chapter fails validation, or the database changed
            self.message_user(request, "Nothing was imported: " + " ".join(plan.problems), messages.ERROR)
            return HttpResponseRedirect(reverse("admin:courses_course_import_zip"))
        self.message_user(request, plan.summary, messages.SUCCESS)
        return HttpResponseRedirect(reverse("admin:courses_course_changelist"))
