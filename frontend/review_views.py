"""The Review page of a course: the learner's due quiz questions, one at a time, oldest due first.

Like the quiz, it is a plain form: without JavaScript an answer posts here and comes back to the
page (?answered=<id> shows what it said, so a reload repeats nothing); quiz.js posts the same
form with an X-Fragment header and swaps in the fragment returned.
"""

from django import forms
from django.contrib.auth.views import redirect_to_login
from django.http import Http404
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.http import require_POST

from courses import selectors, selectors_review
from courses.models import Choice, Course
from courses.services import review


def _course_for_review(request, course_slug: str):
    """The course as its chapter pages decide (404 where it is not seen, 403 for a course by
    invitation); None for visitors, who are sent to log in."""
    course = selectors.course_get_for_user(user=request.user, slug=course_slug)
    if not request.user.is_authenticated:
        return course, redirect_to_login(reverse("frontend:review", args=[course_slug]))
    selectors.course_check_admitted(course=course, user=request.user)
    return course, None


class ReviewAnswerForm(forms.Form):
    question = forms.IntegerField(min_value=1)
    choice = forms.IntegerField(min_value=1, error_messages={"required": "Choose an answer first."})


def _wants_fragment(request) -> bool:
    return request.headers.get("X-Fragment") == "quiz"  # what quiz.js sends


def _review_context(request, course: Course, *, feedback=None, review_error: str = "") -> dict:
    at = review.now()
    card = None
    if feedback is None:  # after an answer the page shows what it said and a Next link
        card = selectors_review.review_next_for_learner(user=request.user, course=course, at=at)
    return {
        "course": course,
        "now": at,
        "summary": selectors_review.review_summary_for_learner(user=request.user, course=course, at=at),
        "card": card,
        # What the question type's template reads (frontend/templates/frontend/questions/).
        "asked": _asked(request, card) if card else None,
        "feedback": feedback,
        "review_error": review_error,
    }


def _asked(request, card) -> dict:
    """The question as the quiz's question templates read it: `current`, its choices in the order
    the learner sees them (`current_choices`), and no wrong answer marked."""
    question = card.question
    choices = selectors_review.review_choices_for_learner(question=question, user=request.user)
    return {"current": question, "current_choices": choices, "wrong_choice": None}


def due_counts_for_catalog(request, courses) -> dict[int, int]:
    """{course id: questions due for review} for the catalog's cards, in one query."""
    course_ids = [course.pk for course in courses]
    return selectors_review.review_due_counts(user=request.user, course_ids=course_ids, at=review.now())


def summary_for_course_page(request, course: Course) -> selectors_review.ReviewSummary | None:
    """The due count on the course outline (None for visitors)."""
    return selectors_review.review_summary_for_learner(user=request.user, course=course, at=review.now())


def review_page(request, course_slug: str):
    course, login = _course_for_review(request, course_slug)
    if login is not None:
        return login
    feedback = None
    if "answered" in request.GET:
        feedback = selectors_review.review_feedback_for_learner(
            user=request.user, course=course, answer_id=request.GET["answered"]
        )
    return render(request, "frontend/review.html", _review_context(request, course, feedback=feedback))


@require_POST
def review_answer(request, course_slug: str):
    course, login = _course_for_review(request, course_slug)
    if login is not None:
        return login
    form = ReviewAnswerForm(request.POST)
    error, status, result = "", 200, None
    if not form.is_valid():
        error, status = next(iter(form.errors.values()))[0], 400
    else:
        question = selectors.question_get_for_user(user=request.user, question_id=form.cleaned_data["question"])
        if question.chapter.course_id != course.pk:
            raise Http404("No such question in this course.")
        choice = Choice.objects.filter(pk=form.cleaned_data["choice"]).first()
        try:
            if choice is None:
                raise review.ReviewAnswerInvalidError("That choice belongs to another question.")
            result = review.review_answer(user=request.user, question=question, choice=choice)
        except review.ReviewAnswerInvalidError as invalid:
            error, status = str(invalid), 400
        except review.ReviewNotDueError as not_due:
            error, status = str(not_due), 409
    back = reverse("frontend:review", args=[course_slug])
    if result is not None and not _wants_fragment(request):
        return redirect(f"{back}?answered={result.answer_id}")
    feedback = None
    if result is not None:
        feedback = selectors_review.review_feedback_for_learner(
            user=request.user, course=course, answer_id=result.answer_id
        )
    context = _review_context(request, course, feedback=feedback, review_error=error)
    template = "frontend/_review_body.html" if _wants_fragment(request) else "frontend/review.html"
    return render(request, template, context, status=status)
