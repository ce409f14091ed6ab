"""The chapter body's live preview in the admin: the learner page's renderer on the text being
typed, and the validator's text checks (unknown glossary terms, maths that does not parse,
constructs split across lines) with the body line each one is on."""

from django.http import HttpResponseNotAllowed, JsonResponse
from django.template.loader import render_to_string

from courses.models import Chapter, Course
from courses.rendering import chapter_render
from courses.services.validation import Validation, body_check

MAX_BODY = 500_000


def _int(value) -> int | None:
    try:
        return int(value)
    except (TypeError, ValueError):
        return None


def body_preview(*, body: str, course: Course | None, chapter: Chapter | None) -> dict:
    """{"html": the body as the learner page renders it, "problems": [{"line", "problem"}]}."""
    glossary = list(course.glossary.all()) if course else []
    exercises = list(chapter.exercises.all()) if chapter else []
    # An unsaved chapter with the typed body: the renderer's cache key includes the text.
    draft = Chapter(pk=chapter.pk if chapter else 0, course=course, body=body)
    segments = chapter_render(chapter=draft, glossary=glossary, exercises=exercises)
    html = render_to_string("admin/courses/_preview.html", {"segments": segments})
    report = Validation()
    body_check(body, 1, file="body", glossary={t.term.lower() for t in glossary}, report=report)
    problems = [{"line": p.line, "problem": p.problem} for p in sorted(report.problems, key=lambda p: p.line)]
    return {"html": html, "problems": problems}


def preview_view(model_admin, request):
    if request.method != "POST":
        return HttpResponseNotAllowed(["POST"])
    if not model_admin.has_change_permission(request) and not model_admin.has_add_permission(request):
        return JsonResponse({"error": "Not allowed."}, status=403)
    body = request.POST.get("body", "")[:MAX_BODY].replace("\r\n", "\n")
    chapter = Chapter.objects.select_related("course").filter(pk=_int(request.POST.get("chapter"))).first()
    course = chapter.course if chapter else Course.objects.filter(pk=_int(request.POST.get("course"))).first()
    return JsonResponse(body_preview(body=body, course=course, chapter=chapter))
