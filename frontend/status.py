"""What this deployment runs on (sandbox backend, broker, database) and which parts run degraded.

`make run` prints it once when it starts serving (`python -m frontend.status URL`); the admin's home
page shows the degraded parts to staff (frontend/templates/admin/index.html).
"""

from __future__ import annotations

import sys
from dataclasses import dataclass, field
from urllib.parse import urlsplit

from django.conf import settings


@dataclass(frozen=True)
class PlatformStatus:
    backend: str
    broker: str
    database: str
    problems: list[str] = field(default_factory=list)


def _broker_describe() -> tuple[str, list[str]]:
    url = settings.CELERY_BROKER_URL
    if url.startswith("redis+socket://"):
        return f"Redis on the Unix socket {url.removeprefix('redis+socket://')}", []
    if url.startswith(("redis://", "rediss://")):
        parts = urlsplit(url)
        return f"Redis at {parts.hostname}:{parts.port or 6379}{parts.path}", []
    # Without Redis, the worker polls for new runs and the event stream polls the Run row: each run
    # waits for both. scripts/prereqs.sh installs redis-server, so only a machine without it gets here.
    poll_ms = settings.CELERY_BROKER_TRANSPORT_OPTIONS.get("polling_interval", 1.0) * 1000
    return (
        f"file-system broker (polls every {poll_ms:.0f} ms)",
        [
            "no Redis: the broker and the run event stream poll, so each run takes longer than it needs "
            "(install redis-server, or set REDIS_URL)"
        ],
    )


def _database_describe() -> str:
    db = settings.DATABASES["default"]
    if db["ENGINE"].endswith("sqlite3"):
        return f"SQLite ({db['NAME']})"
    return f"PostgreSQL at {db.get('HOST') or 'localhost'}:{db.get('PORT') or 5432}/{db['NAME']}"


def platform_status() -> PlatformStatus:
    """Cheap enough for a page view: it starts no sandbox and opens no connection but Docker's ping."""
    from runner.selectors import sandbox_backend_status

    configured = settings.RUNNER_BACKEND
    name, sandbox_problems = sandbox_backend_status(configured=configured)
    label = f"auto: {name}" if configured == "auto" else name
    broker, broker_problems = _broker_describe()
    return PlatformStatus(
        backend=label + (" (bubblewrap)" if name == "local" else ""),
        broker=broker,
        database=_database_describe(),
        problems=[*sandbox_problems, *broker_problems],
    )


def banner(url: str) -> str:
    """The lines `make run` ends with: where to go, how to log in, what it runs on, what is degraded."""
    from teaching.services.demo import DEMO_ACCOUNTS

    status = platform_status()
    lines = [
        "",
        f"EasyCompilers is serving on {url}  (Ctrl+C stops it)",
        "  log in as   " + ", ".join(f"{username} / {password}" for username, password, _ in DEMO_ACCOUNTS),
        f"              (admin: {url.rstrip('/')}/admin/)",
        f"  sandbox     {status.backend}",
        f"  broker      {status.broker}",
        f"  database    {status.database}",
    ]
    lines += [f"WARNING: degraded: {problem}" for problem in status.problems]
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    import os

    import django

    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "ecplatform.settings.dev")

    django.setup()
    sys.stdout.write(banner(sys.argv[1] if len(sys.argv) > 1 else "http://127.0.0.1:8000/"))
