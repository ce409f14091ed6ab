"""Reading pages. Every access decision is a selector call (courses.selectors); views only
gather what a template shows."""

from django import forms
from django.conf import settings
from django.contrib.auth.views import redirect_to_login
from django.http import Http404, HttpResponse, HttpResponseBadRequest
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils.http import url_has_allowed_host_and_scheme
from django.views.decorators.http import require_POST
from django.views.defaults import permission_denied

from accounts.models import User
from accounts.services import user_theme_set
from courses import selectors, selectors_progress
from courses.models import Choice
from courses.rendering import chapter_render, hint_html
from courses.services.hints import HintOutOfTurnError
from courses.services.hints import hint_reveal as hint_reveal_record
from courses.services.progress import enrolment_place_save, enrolment_visit
from courses.services.quizzes import QuizAnswerInvalidError
from courses.services.quizzes import quiz_answer as quiz_answer_record
from frontend import review_views
from runner.selectors import gpu_worker_alive


def catalog(request):
    courses = list(selectors.course_catalog_for_user(user=request.user))
    progress = selectors_progress.catalog_progress_for_learner(user=request.user, courses=courses)
    due = review_views.due_counts_for_catalog(request, courses)
    for course in courses:
        course.learner_progress = progress.get(course.pk)
        course.review_due = due.get(course.pk, 0)
    return render(request, "frontend/catalog.html", {"courses": courses})


def forbidden(request, exception=None):
    """Every 403 page (the project's handler403). A course by invitation, to someone it does not
    admit (courses.selectors.InviteRequired, from any page of it): say how to join; nothing was
    written, no one enrolled."""
    if isinstance(exception, selectors.InviteRequired):
        return render(request, "frontend/invite_required.html", {"course": exception.course}, status=403)
    return permission_denied(request, exception)


def course_detail(request, course_slug: str):
    course = selectors.course_get_for_user(user=request.user, slug=course_slug)
    selectors.course_check_admitted(course=course, user=request.user)
    parts = selectors.course_outline_for_user(course=course, user=request.user)
    minutes = sum(part.chapter.reading_minutes for part in parts if part.is_open)
    # Read before the visit is noted, so "Continue" still points where the learner was.
    progress = selectors_progress.course_progress_for_learner(user=request.user, course=course, parts=parts)
    if progress is not None:
        enrolment_visit(user=request.user, course=course)
        for part in parts:
            part.chapter.learner_progress = progress.parts.get(part.chapter.pk)
    review = review_views.summary_for_course_page(request, course)
    context = {"course": course, "parts": parts, "minutes": minutes, "progress": progress, "review": review}
    return render(request, "frontend/course.html", context)


def glossary(request, course_slug: str):
    course = selectors.course_get_for_user(user=request.user, slug=course_slug)
    selectors.course_check_admitted(course=course, user=request.user)
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
    if request.user.is_authenticated:
        enrolment_visit(user=request.user, course=chapter.course, chapter=chapter)
    return _chapter_response(request, page, preview=False)


def chapter_preview(request, chapter_id: int):
    chapter = selectors.chapter_get_for_preview(user=request.user, chapter_id=chapter_id)
    # The surroundings a learner would see (user=None), so the preview matches the learner page.
    page = selectors.chapter_page_for(chapter=chapter, user=None)
    return _chapter_response(request, page, preview=True)


def _chapter_response(request, page: selectors.ChapterPage, *, preview: bool):
    segments = chapter_render(chapter=page.chapter, glossary=page.glossary, exercises=page.exercises)
    for exercise in page.exercises:
        for hint in exercise.learner_hints.revealed if exercise.learner_hints else []:
            hint.html = hint_html(text=hint.text, glossary=page.glossary)
    context = {
        "page": page,
        "chapter": page.chapter,
        "course": page.chapter.course,
        "segments": segments,
        # The editor keeps no draft it could not save (ecplatform/code.py: the same limit, the same words).
        "code_limit": settings.RUNNER_MAX_CODE_BYTES,
    }
    if any(exercise.needs_gpu for exercise in page.exercises):
        # Where a GPU exercise will run, said before the learner presses Run (runner/services.py).
        context["gpu_worker_alive"] = gpu_worker_alive()
    # A preview shows the quiz as a visitor sees it, and takes no answers.
    context["quiz"] = selectors.quiz_state_for_learner(chapter=page.chapter, user=None if preview else request.user)
    return render(request, "frontend/chapter.html", {**context, "preview": preview})


# --- Quizzes, the learner's place and the theme -------------------------------------------------
# The quiz is a plain form: without JavaScript it posts here and comes back to the chapter at
# #quiz; quiz.js posts the same form with an X-Fragment header and swaps in the fragment returned.


class QuizAnswerForm(forms.Form):
    question = forms.IntegerField(min_value=1)
    choice = forms.IntegerField(min_value=1, error_messages={"required": "Choose an answer first."})


def _wants_fragment(request) -> bool:
    return request.headers.get("X-Fragment") == "quiz"


@require_POST
def quiz_answer(request, course_slug: str, chapter_slug: str):
    chapter = selectors.chapter_get_for_user(user=request.user, course_slug=course_slug, chapter_slug=chapter_slug)
    back = reverse("frontend:chapter", args=[course_slug, chapter_slug]) + "#quiz"
    if not request.user.is_authenticated:
        return redirect_to_login(back)
    form = QuizAnswerForm(request.POST)
    error = ""
    if not form.is_valid():
        error = next(iter(form.errors.values()))[0]
    else:
        question = chapter.questions.filter(pk=form.cleaned_data["question"]).first()
        if question is None:
            raise Http404("No such question in this chapter.")
        question.chapter = chapter
        choice = Choice.objects.filter(pk=form.cleaned_data["choice"], question=question).first()
        try:
            if choice is None:
                raise QuizAnswerInvalidError("That choice belongs to another question.")
            quiz_answer_record(user=request.user, question=question, choice=choice)
        except QuizAnswerInvalidError as invalid:
            error = str(invalid)
    status = 400 if error else 200
    if _wants_fragment(request):
        quiz = selectors.quiz_state_for_learner(user=request.user, chapter=chapter)
        context = {"quiz": quiz, "chapter": chapter, "course": chapter.course, "quiz_error": error}
        return render(request, "frontend/_quiz_body.html", context, status=status)
    if error:
        context = {"chapter": chapter, "course": chapter.course, "error": error, "back": back}
        return render(request, "frontend/quiz_error.html", context, status=status)
    return redirect(back)


@require_POST
def hint_reveal(request, course_slug: str, chapter_slug: str, exercise_id: int):
    """The "Show hint" button without JavaScript (hints.js calls the API instead): reveal the next
    hint and come back to the exercise, where it now shows."""
    chapter = selectors.chapter_get_for_user(user=request.user, course_slug=course_slug, chapter_slug=chapter_slug)
    exercise = chapter.exercises.filter(pk=exercise_id).first()
    if exercise is None:
        raise Http404("No such exercise in this chapter.")
    back = reverse("frontend:chapter", args=[course_slug, chapter_slug]) + f"#exercise-{exercise.slug}"
    if not request.user.is_authenticated:
        return redirect_to_login(back)
    position = request.POST.get("position", "")
    if not position.isdigit():
        return HttpResponseBadRequest("Which hint? The form sent no hint number.")
    try:
        hint_reveal_record(user=request.user, exercise=exercise, position=int(position))
    except HintOutOfTurnError as invalid:
        return HttpResponseBadRequest(str(invalid))
    return redirect(back)


@require_POST
def place_save(request, course_slug: str, chapter_slug: str):
    """Where the learner is on a chapter page, sent by the page as they scroll and work."""
    chapter = selectors.chapter_get_for_user(user=request.user, course_slug=course_slug, chapter_slug=chapter_slug)
    if not request.user.is_authenticated:
        return HttpResponse(status=204)  # visitors are never enrolled
    try:
        enrolment_place_save(user=request.user, chapter=chapter, place=request.POST.get("place", ""))
    except ValueError as invalid:
        return HttpResponseBadRequest(str(invalid))
    return HttpResponse(status=204)


@require_POST
def theme_save(request):
    """The header's theme choice, kept on the learner's profile; visitors keep theirs in the
    browser (theme.js), so this only answers them with a redirect."""
    theme = request.POST.get("theme", "")
    if theme not in User.Theme.values:
        return HttpResponseBadRequest("Unknown theme.")
    if request.user.is_authenticated:
        user_theme_set(user=request.user, theme=theme)
    if request.headers.get("X-Fragment") == "theme":
        return HttpResponse(status=204)
    back = request.POST.get("next", "")
    if not url_has_allowed_host_and_scheme(back, allowed_hosts={request.get_host()}, require_https=request.is_secure()):
        back = reverse("frontend:catalog")
    return redirect(back)
