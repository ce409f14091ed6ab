"""The course completion page and the downloads of a learner's own code. Each answers the
requesting learner only: nothing in these URLs names a learner, and every read filters on the
user of the session (teaching.selectors.completion)."""

from django.contrib.auth.views import redirect_to_login
from django.http import HttpResponse
from django.shortcuts import render
from django.utils import timezone

from courses import selectors
from courses.learner_code import notebook_build, package_build
from teaching.selectors.completion import course_record_for_learner


def _learner_course(request, course_slug: str):
    """The course, if the learner may see it (404 otherwise) and it admits them (InviteRequired);
    None for a visitor, who logs in."""
    if not request.user.is_authenticated:
        return None
    course = selectors.course_get_for_user(user=request.user, slug=course_slug)
    selectors.course_check_admitted(course=course, user=request.user)
    return course


def course_complete(request, course_slug: str):
    course = _learner_course(request, course_slug)
    if course is None:
        return redirect_to_login(request.get_full_path())
    record = course_record_for_learner(user=request.user, course=course)
    return render(request, "frontend/completion.html", {"course": course, "record": record})


def _download(request, course_slug: str, build, content_type: str):
    course = _learner_course(request, course_slug)
    if course is None:
        return redirect_to_login(request.get_full_path())
    record = course_record_for_learner(user=request.user, course=course, with_code=True)
    filename, content = build(record, learner=request.user.username, exported_at=timezone.now())
    response = HttpResponse(content, content_type=content_type)
    response["Content-Disposition"] = f'attachment; filename="{filename}"'
    # The learner's own code: never kept by a shared cache.
    response["Cache-Control"] = "private, no-store"
    return response


def code_notebook(request, course_slug: str):
    return _download(request, course_slug, notebook_build, "application/x-ipynb+json")


def code_package(request, course_slug: str):
    return _download(request, course_slug, package_build, "application/zip")
