"""Health of a process, for the stack's healthchecks and a load balancer.

- `/healthz`: the process answers (liveness). Touches nothing else: a database outage must not get
  every web replica restarted.
- `/readyz`: the process can serve (readiness): the database and Redis answer. 200 with the checks,
  or 503 naming what failed.
- `python -m ecplatform.health --worker`: the same checks for a worker host, plus its sandbox
  backend (for docker: the engine answers and the sandbox image is there). Exit 0 or 1.
- `python -m ecplatform.health --web URL`: GET URL, exit 0 on 200 (the web container's check,
  with no curl in the image).

Both paths are answered by a middleware placed first, before host validation and the HTTPS
redirect: the container's own check calls http://127.0.0.1:8000 with no proxy in front.
"""

from __future__ import annotations

import json
import sys

from django.http import HttpResponse, JsonResponse

PATHS = ("/healthz", "/readyz")


def health_checks(*, worker: bool = False) -> dict[str, str]:
    """Each check's name -> "ok" or what is wrong."""
    checks = {"database": _database(), "redis": _redis()}
    if worker:
        checks["sandbox"] = _sandbox()
    return checks


def _database() -> str:
    from django.db import connection

    try:
        with connection.cursor() as cursor:
            cursor.execute("SELECT 1")
    except Exception as exc:
        return f"the database does not answer: {type(exc).__name__}: {exc}"[:300]
    return "ok"


def _redis() -> str:
    from django.conf import settings

    if not settings.REDIS_URL:
        return "ok"  # the embedded broker (make run): nothing to reach
    import redis

    try:
        redis.Redis.from_url(settings.REDIS_URL, socket_connect_timeout=2, socket_timeout=2).ping()
    except Exception as exc:
        return f"Redis does not answer: {type(exc).__name__}: {exc}"[:300]
    return "ok"


def _sandbox() -> str:
    from django.conf import settings

    from sandbox import backend_problems

    problems = backend_problems(settings.RUNNER_BACKEND)
    return "; ".join(problems)[:500] if problems else "ok"


class HealthMiddleware:
    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        if request.path == "/healthz":
            return HttpResponse("ok\n", content_type="text/plain")
        if request.path == "/readyz":
            checks = health_checks()
            ready = all(value == "ok" for value in checks.values())
            return JsonResponse({"ready": ready, "checks": checks}, status=200 if ready else 503)
        return self.get_response(request)


def main(argv: list[str]) -> int:
    if argv[:1] == ["--web"] and len(argv) == 2:
        from urllib.request import urlopen

        try:
            with urlopen(argv[1], timeout=5) as response:  # noqa: S310 (a URL the container's own check names)
                return 0 if response.status == 200 else 1
        except Exception as exc:
            print(f"{argv[1]}: {exc}", file=sys.stderr)
            return 1
    if argv == ["--worker"]:
        import django

        django.setup()
        checks = health_checks(worker=True)
        print(json.dumps(checks))
        return 0 if all(value == "ok" for value in checks.values()) else 1
    print("usage: python -m ecplatform.health --worker | --web URL", file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
