"""Reading pages. Every access decision is a selector call (courses.selectors); views only
gather what a template shows."""

from django.shortcuts import render

from courses import selectors
from courses.rendering import chapter_render


def catalog(request):
    courses = selectors.course_catalog_for_user(user=request.user)
    return render(request, "frontend/catalog.html", {"courses": courses})


def course_detail(request, course_slug: str):
    course = selectors.course_get_for_user(user=request.user, slug=course_slug)
    parts = selectors.course_outline_for_user(course=course, user=request.user)
    return render(request, "frontend/course.html", {"course": course, "parts": parts})


def glossary(request, course_slug: str):
    course = selectors.course_get_for_user(user=request.user, slug=course_slug)
    query = request.GET.get("q", "").strip()[:100]
    terms = selectors.glossary_list_for_course(course=course)
    # Every term stays in the page and non-matches are hidden, so the filter box (?q= without
    # JavaScript, as-you-type with it) can widen the list again.
    for term in terms:
        term.matches = query.lower() in term.term.lower()
    shown = sum(term.matches for term in terms)
    context = {"course": course, "terms": terms, "query": query, "shown": shown}
    return render(request, "frontend/glossary.html", context)


def chapter_detail(request, course_slug: str, chapter_slug: str):
    chapter = selectors.chapter_get_for_user(user=request.user, course_slug=course_slug, chapter_slug=chapter_slug)
    page = selectors.chapter_page_for(chapter=chapter, user=request.user)
    return _chapter_response(request, page, preview=False)


def chapter_preview(request, chapter_id: int):
    chapter = selectors.chapter_get_for_preview(user=request.user, chapter_id=chapter_id)
    # The surroundings a learner would see (user=None), so the preview matches the learner page.
    page = selectors.chapter_page_for(chapter=chapter, user=None)
    return _chapter_response(request, page, preview=True)


def _chapter_response(request, page: selectors.ChapterPage, *, preview: bool):
    segments = chapter_render(chapter=page.chapter, glossary=page.glossary, exercises=page.exercises)
    context = {"page": page, "chapter": page.chapter, "course": page.chapter.course, "segments": segments}
    return render(request, "frontend/chapter.html", {**context, "preview": preview})
