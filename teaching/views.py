"""Instructor dashboards: the teaching landing, a course's dashboard, one learner, CSV exports,
and the cohort invite page. Access is decided by teaching.selectors: anonymous visitors
are sent to log in, everyone who does not teach the course gets 404."""

import csv
import datetime as dt
from urllib.parse import urlencode

from django.contrib import messages
from django.contrib.auth import get_user_model
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied, ValidationError
from django.core.paginator import Paginator
from django.http import Http404, StreamingHttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.http import require_POST

from teaching import selectors as dashboards
from teaching.services import cohorts


def _may_teach(user) -> bool:
    return user.is_staff or user.role in (get_user_model().Role.INSTRUCTOR, get_user_model().Role.ADMIN)


def _filters(request, course):
    """The filters from the query string, and the errors of any that were refused (then ignored)."""
    try:
        return dashboards.dashboard_filters_from_params(course=course, params=request.GET), {}
    except ValidationError as invalid:
        return dashboards.DashboardFilters(), {name: " ".join(errs) for name, errs in invalid.message_dict.items()}


@login_required
def teach_home(request):
    if not _may_teach(request.user):
        raise Http404("No such page.")
    courses = dashboards.course_list_taught_by(user=request.user).order_by("title")
    return render(request, "dashboards/home.html", {"courses": courses})


@login_required
def course_dashboard(request, course_slug: str):
    course = dashboards.course_get_for_teaching(user=request.user, slug=course_slug)
    filters, errors = _filters(request, course)
    board = dashboards.course_dashboard(course=course, filters=filters)
    context = {
        "course": course,
        "board": board,
        "filters": filters,
        "filter_errors": errors,
        "query": urlencode(filters.as_params()),
        "chart_data": board.chart_data(),
    }
    return render(request, "dashboards/course.html", context, status=400 if errors else 200)


@login_required
def learner_detail(request, course_slug: str, learner_id: int):
    course = dashboards.course_get_for_teaching(user=request.user, slug=course_slug)
    learner = dashboards.learner_get_for_teaching(course=course, learner_id=learner_id)
    detail = dashboards.learner_detail(course=course, learner=learner)
    runs = Paginator(dashboards.learner_run_list(course=course, learner=learner), dashboards.RUNS_PER_PAGE)
    page = runs.get_page(request.GET.get("page"))
    back = reverse("frontend:teach_course", args=[course.slug])
    back_query = urlencode({k: v for k, v in request.GET.items() if k in ("cohort", "start", "end")})
    context = {"course": course, "detail": detail, "runs": page, "back": f"{back}?{back_query}" if back_query else back}
    return render(request, "dashboards/learner.html", context)


# --- CSV --------------------------------------------------------------------------------------------


class _Echo:
    """csv.writer writes into this and gets each line back, so lines stream as they are made."""

    def write(self, value: str) -> str:
        return value


def _cell(value):
    if isinstance(value, dt.datetime):
        return value.isoformat()
    # A spreadsheet would run text starting with these as a formula.
    if isinstance(value, str) and value[:1] in ("=", "+", "-", "@", "\t", "\r"):
        return "'" + value
    return value


def _csv_response(*, filename: str, header: list[str], rows) -> StreamingHttpResponse:
    writer = csv.writer(_Echo())

    def lines():
        yield writer.writerow(header)
        for row in rows:
            yield writer.writerow([_cell(value) for value in row])

    response = StreamingHttpResponse(lines(), content_type="text/csv; charset=utf-8")
    response["Content-Disposition"] = f'attachment; filename="{filename}"'
    return response


def _export_name(course, filters, what: str) -> str:
    parts = [course.slug, what]
    if filters.cohort is not None:
        parts.append(f"cohort{filters.cohort.pk}")
    if filters.start or filters.end:
        parts.append(f"{filters.start or ''}_{filters.end or ''}")
    return "-".join(parts) + ".csv"


@login_required
def learners_csv(request, course_slug: str):
    course = dashboards.course_get_for_teaching(user=request.user, slug=course_slug)
    filters, _ = _filters(request, course)
    rows = dashboards.learner_progress_rows(course=course, filters=filters)
    return _csv_response(
        filename=_export_name(course, filters, "learners"), header=dashboards.LEARNER_CSV_HEADER, rows=rows
    )


@login_required
def questions_csv(request, course_slug: str):
    course = dashboards.course_get_for_teaching(user=request.user, slug=course_slug)
    filters, _ = _filters(request, course)
    rows = dashboards.question_stats_rows(course=course, filters=filters)
    return _csv_response(
        filename=_export_name(course, filters, "questions"), header=dashboards.QUESTION_CSV_HEADER, rows=rows
    )


# --- Cohorts ----------------------------------------------------------------------------------------


@login_required
@require_POST
def cohort_create(request, course_slug: str):
    course = dashboards.course_get_for_teaching(user=request.user, slug=course_slug)
    try:
        cohort = cohorts.cohort_create(course=course, name=request.POST.get("name", ""), created_by=request.user)
    except (ValidationError, PermissionDenied) as refused:
        messages.error(request, " ".join(getattr(refused, "messages", [str(refused)])))
    else:
        messages.success(request, f"Cohort “{cohort.name}” created.")
    return redirect(reverse("frontend:teach_course", args=[course.slug]) + "#cohorts")


@login_required
def cohort_join(request, invite_code: str):
    if request.method == "POST":
        cohorts.cohort_join(invite_code=invite_code, user=request.user)
        return redirect("frontend:cohort_join", invite_code=invite_code)
    cohort = dashboards.cohort_get_by_invite_code(invite_code=invite_code)
    joined = cohort.memberships.filter(user=request.user).exists()
    return render(request, "dashboards/join.html", {"cohort": cohort, "joined": joined})
