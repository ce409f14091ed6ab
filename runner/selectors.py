"""Reads for runs. A learner sees only their own runs; anyone else's run is answered as if it did
not exist (404), so run ids leak nothing."""

from datetime import timedelta

from django.db.models import Count, OuterRef, Q, QuerySet
from django.http import Http404
from django.utils import timezone

from runner.models import Run


def run_list_for_user(*, user) -> QuerySet[Run]:
    if not (user and user.is_authenticated):
        return Run.objects.none()
    return Run.objects.filter(user=user)


def run_list_for_outer_exercise(*, user) -> QuerySet[Run]:
    """The user's runs of the exercise an outer query stands on (`OuterRef("pk")` of an Exercise
    queryset), newest first: for annotations such as `Subquery(runs.values("pk")[:1])`."""
    return run_list_for_user(user=user).filter(exercise=OuterRef("pk")).order_by("-created_at", "-pk")


def run_get_for_user(*, user, run_id) -> Run:
    run = run_list_for_user(user=user).filter(pk=run_id).first()
    if run is None:
        raise Http404("No such run.")
    return run


def run_counts_for_caps(*, user, since) -> tuple[int, int]:
    """The learner's runs queued or running, and runs created since `since`: one query."""
    active, recent = Q(status__in=Run.ACTIVE), Q(created_at__gte=since)
    counts = Run.objects.filter(active | recent, user=user).aggregate(
        active=Count("pk", filter=active), recent=Count("pk", filter=recent)
    )
    return counts["active"], counts["recent"]


def run_created_since(*, user, since) -> QuerySet[Run]:
    return Run.objects.filter(user=user, created_at__gte=since)


def run_list_stale(*, stale_after_s: float, queued_max_s: float, now=None) -> QuerySet[Run]:
    """Runs no worker is looking after: running with an old heartbeat, or queued for too long."""
    now = now or timezone.now()
    beat_before = now - timedelta(seconds=stale_after_s)
    queued_before = now - timedelta(seconds=queued_max_s)
    stale_running = Run.objects.filter(status=Run.Status.RUNNING, heartbeat_at__lt=beat_before)
    stale_queued = Run.objects.filter(status=Run.Status.QUEUED, created_at__lt=queued_before)
    return stale_running | stale_queued


def run_snapshot(*, run_id) -> Run | None:
    """The fields an event stream needs, read fresh."""
    return (
        Run.objects.filter(pk=run_id)
        .only(
            "id",
            "status",
            "outputs",
            "exit_code",
            "reason",
            "limit",
            "cause",
            "check_passed",
            "passed",
            "duration_ms",
            "finished_at",
        )
        .first()
    )


def gpu_worker_alive() -> bool:
    """Whether a GPU exercise's run would go to a GPU worker now."""
    from runner import routing

    # Without Redis (the embedded broker) workers do not report, and the one worker serves both
    # queues: its sandbox is what it is.
    return not routing.enabled() or routing.any_host_alive(queue=Run.Queue.GPU)


def sandbox_backend_status(*, configured: str) -> tuple[str, list[str]]:
    """The sandbox backend a worker here would use for `configured` (a RUNNER_BACKEND value), and
    what this machine lacks for it: cheap enough for a page view (it starts no sandbox; Docker's
    ping at most). "auto" resolves as backend_get("auto") does: docker when an engine and the
    image are there, else local."""
    from sandbox import backend_problems
    from sandbox.docker import DockerBackend

    name = configured
    if name == "auto":
        name = "local" if DockerBackend.unavailable_reason() else "docker"
    return name, backend_problems(name)


# --- a learner's attempts at one exercise ----------------------------------------------------------

ATTEMPTS_PAGE = 50
ATTEMPT_FIELDS = ("id", "exercise_id", "created_at", "status", "passed", "failure", "error_name")


def attempt_list_for_learner(*, user, exercise, before: Run | None = None, limit: int = ATTEMPTS_PAGE) -> list[Run]:
    """The user's own runs of `exercise` (each one an attempt), newest first, `limit` of them (and
    one more, which says there are more), older than `before` when given. Without their code or
    output: the history lists them; one attempt's code is read on its own (attempt_get_for_learner).
    On the (exercise, user, created_at) index whatever the number of attempts."""
    runs = run_list_for_user(user=user).filter(exercise=exercise)
    if before is not None:
        runs = runs.filter(Q(created_at__lt=before.created_at) | Q(created_at=before.created_at, pk__lt=before.pk))
    return list(runs.order_by("-created_at", "-pk").only(*ATTEMPT_FIELDS)[: limit + 1])


def attempt_count_for_learner(*, user, exercise) -> int:
    return run_list_for_user(user=user).filter(exercise=exercise).count()


def attempt_get_for_learner(*, user, exercise, run_id) -> Run:
    """One of the user's own attempts at `exercise`, with its code; 404 for anyone else's run, a
    run of another exercise, or no run."""
    run = run_list_for_user(user=user).filter(exercise=exercise, pk=run_id).only(*ATTEMPT_FIELDS, "code").first()
    if run is None:
        raise Http404("No such attempt.")
    return run
