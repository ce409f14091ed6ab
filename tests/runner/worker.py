"""Real processes for run tests: a Celery worker and an ASGI web server, both on the test database.

pytest-django creates the test database once per session; a test that needs a worker to see its
rows must commit them, so such tests use `transactional_db`. The processes get the test
database's URL, the test settings and REDIS_URL through their environment.

tests/conftest.py imports the fixtures once for every test (imported into each module instead, a
session fixture would be a separate fixture per module: a worker and a web server each).
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest
import requests
from django.conf import settings
from django.db import connection

from accounts.models import User
from accounts.services import user_create
from courses.models import Chapter, Course, Exercise
from tests.services import service_missing

# The fixtures (a star import makes them, and the fixtures they depend on, visible to a module).
__all__ = [
    "any_backend_worker",
    "make_exercise",
    "make_learner",
    "run_worker",
    "web_server",
    "worker_backend",
    "worker_switch",
]

ROOT = Path(__file__).resolve().parents[2]
READY_TIMEOUT_S = 90
BACKENDS = ("local", "docker")


def services_required() -> None:
    if connection.vendor != "postgresql":
        service_missing("run tests with a worker need PostgreSQL (set DATABASE_URL)")
    if not settings.REDIS_URL:
        service_missing("run tests with a worker need Redis (set REDIS_URL)")
    try:
        import redis

        redis.Redis.from_url(settings.REDIS_URL, socket_connect_timeout=2).ping()
    except Exception as exc:
        service_missing(f"Redis at REDIS_URL does not answer: {exc}")


def backend_required(name: str) -> None:
    if name == "local":
        if not shutil.which("bwrap"):
            service_missing("bubblewrap (bwrap) is not installed")
        return
    from sandbox.docker import DockerBackend

    if not DockerBackend.available():
        service_missing("no Docker engine or no sandbox image (runner/image/build.sh)")


def database_url() -> str:
    db = connection.settings_dict
    auth = db.get("USER") or ""
    if db.get("PASSWORD"):
        auth += f":{db['PASSWORD']}"
    return f"postgres://{auth}@{db.get('HOST') or '127.0.0.1'}:{db.get('PORT') or 5432}/{db['NAME']}"


def process_env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    env.update(
        DJANGO_SETTINGS_MODULE="ecplatform.settings.test",
        DATABASE_URL=database_url(),
        REDIS_URL=settings.REDIS_URL,
        PYTHONUNBUFFERED="1",
    )
    env.update(extra)
    return env


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class WorkerProcess:
    """`python -m celery -A ecplatform worker -Q cpu,gpu`, in its own process group, with the pool
    and concurrency the settings give a worker (a thread per run) unless `concurrency` is set."""

    def __init__(
        self, *, backend: str, log_dir: Path, concurrency: int | None = None, queues: str = "cpu,gpu", **env: str
    ):
        self.backend = backend
        self.queues = queues
        self.nodename = f"runs-test-{backend}-{os.getpid()}-{time.monotonic_ns() % 100000}@%h"
        self.log_path = log_dir / f"worker-{backend}-{time.monotonic_ns()}.log"
        self.concurrency = concurrency
        self.env = process_env(RUNNER_BACKEND=backend, **env)
        self.proc: subprocess.Popen | None = None

    @property
    def hostname(self) -> str:
        return self.nodename.replace("%h", socket.gethostname())

    def start(self) -> WorkerProcess:
        argv = [
            sys.executable,
            "-m",
            "celery",
            "-A",
            "ecplatform",
            "worker",
            "-Q",
            self.queues,
            *(["-c", str(self.concurrency)] if self.concurrency else []),
            "-n",
            self.nodename,
            "--loglevel",
            "INFO",
            "--without-gossip",
            "--without-mingle",
        ]
        with open(self.log_path, "ab") as log:
            self.proc = subprocess.Popen(
                argv, cwd=ROOT, env=self.env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True
            )
        deadline = time.monotonic() + READY_TIMEOUT_S
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"the worker exited ({self.proc.returncode}):\n{self.log()}")
            if " ready." in self.log():
                return self
            time.sleep(0.2)
        self.kill()
        raise RuntimeError(f"the worker did not get ready:\n{self.log()}")

    def alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def log(self) -> str:
        return self.log_path.read_text(errors="replace") if self.log_path.exists() else ""

    def ping(self, timeout: float = 5.0) -> bool:
        from ecplatform.celery import app

        return bool(app.control.ping(destination=[self.hostname], timeout=timeout))

    def kill(self) -> None:
        """SIGKILL to the whole process group: the main process and its pool children at once."""
        if self.proc is None or self.proc.poll() is not None:
            return
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.proc.pid, signal.SIGKILL)
        self.proc.wait(timeout=30)

    def stop(self) -> None:
        if self.proc is None or self.proc.poll() is not None:
            return
        os.killpg(self.proc.pid, signal.SIGTERM)
        try:
            self.proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            self.kill()


class WebProcess:
    """The ASGI app under uvicorn, as `make run` and production serve it."""

    def __init__(self, *, log_dir: Path, **env: str):
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.log_path = log_dir / f"web-{self.port}.log"
        self.env = process_env(**env)
        self.proc: subprocess.Popen | None = None

    def start(self) -> WebProcess:
        argv = [
            sys.executable,
            "-m",
            "uvicorn",
            "ecplatform.asgi:application",
            "--app-dir",
            "platform",
            "--host",
            "127.0.0.1",
            "--port",
            str(self.port),
            "--log-level",
            "warning",
        ]
        with open(self.log_path, "ab") as log:
            self.proc = subprocess.Popen(
                argv, cwd=ROOT, env=self.env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True
            )
        deadline = time.monotonic() + READY_TIMEOUT_S
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"the web server exited:\n{self.log_path.read_text()}")
            try:
                requests.get(f"{self.url}/api/exercises/", timeout=2)
                return self
            except requests.ConnectionError:
                time.sleep(0.2)
        self.stop()
        raise RuntimeError(f"the web server did not answer:\n{self.log_path.read_text()}")

    def stop(self) -> None:
        if self.proc is None or self.proc.poll() is not None:
            return
        os.killpg(self.proc.pid, signal.SIGTERM)
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait()


# --- fixtures ------------------------------------------------------------------------------------


def process_log_dir(tmp_path_factory) -> Path:
    path = tmp_path_factory.getbasetemp() / "processes"
    path.mkdir(exist_ok=True)
    return path


class WorkerSwitch:
    """The session's worker on the cpu and gpu queues: one at a time, so a run goes to the backend
    a test asked for, restarted only when a test asks for another backend."""

    def __init__(self, log_dir: Path):
        self.log_dir = log_dir
        self.current: WorkerProcess | None = None

    def use(self, backend: str) -> WorkerProcess:
        if self.current is not None and self.current.backend == backend and self.current.alive():
            return self.current
        self.close()
        self.current = WorkerProcess(backend=backend, log_dir=self.log_dir).start()
        return self.current

    def close(self) -> None:
        if self.current is not None:
            self.current.stop()
            self.current = None


@pytest.fixture(scope="session")
def worker_switch(django_db_setup, django_db_blocker, tmp_path_factory):
    with django_db_blocker.unblock():
        services_required()
    switch = WorkerSwitch(process_log_dir(tmp_path_factory))
    yield switch
    switch.close()


def worker_after_end_wait(timeout_s: float = 10) -> None:
    """Wait until the worker has done what it does after a run's end (the dashboards count the run,
    and a first pass's progress, once its learner has the result): a test that stops at the status event would otherwise have
    its database flushed under that write (seen: a deadlock between the flush's TRUNCATE and the
    count)."""
    from teaching.models import AnswerToCount, ProgressToCount, RunToCount

    deadline = time.monotonic() + timeout_s
    notes = (RunToCount, AnswerToCount, ProgressToCount)
    while any(model.objects.exists() for model in notes) and time.monotonic() < deadline:
        time.sleep(0.02)


@pytest.fixture
def run_worker(worker_switch, transactional_db) -> WorkerProcess:
    """The session worker on the local backend (quick to start a sandbox). `transactional_db`
    first, so the test database is flushed after the worker's last write of the test."""
    backend_required("local")
    yield worker_switch.use("local")
    worker_after_end_wait()


@pytest.fixture(scope="session", params=BACKENDS)
def worker_backend(request) -> str:
    # Session scope: pytest groups the tests by backend, so the worker restarts once per backend.
    return request.param


@pytest.fixture
def any_backend_worker(worker_switch, worker_backend, transactional_db) -> WorkerProcess:
    """The session worker on each sandbox backend in turn: a test using it runs once per backend."""
    backend_required(worker_backend)
    yield worker_switch.use(worker_backend)
    worker_after_end_wait()


@pytest.fixture(scope="session")
def web_server(django_db_setup, django_db_blocker, tmp_path_factory):
    with django_db_blocker.unblock():
        services_required()
    web = WebProcess(log_dir=process_log_dir(tmp_path_factory)).start()
    yield web
    web.stop()


# --- data ------------------------------------------------------------------------------------------


@pytest.fixture
def make_exercise(transactional_db):
    counter = iter(range(1, 10_000))

    def make(*, published: bool = True, check_code: str = "", time_limit_s: int = 20, needs_gpu: bool = False):
        n = next(counter)
        course = Course.objects.create(slug=f"runs-course-{n}", title=f"Runs course {n}", published=published)
        chapter = Chapter.objects.create(course=course, number=1, slug="one", title="One", published=published)
        return Exercise.objects.create(
            chapter=chapter,
            slug=f"exercise-{n}",
            title=f"Exercise {n}",
            check_code=check_code,
            time_limit_s=time_limit_s,
            needs_gpu=needs_gpu,
        )

    return make


@pytest.fixture
def make_learner(transactional_db):
    counter = iter(range(1, 10_000))

    def make() -> User:
        return user_create(username=f"runner-learner-{next(counter)}", password="pw-for-tests-1")

    return make


def wait_for_run(client, run_id, timeout_s: float = 120) -> dict:
    """Polls GET /api/runs/<id>/ until the run ends (the deadline only stops a hung test)."""
    deadline = time.monotonic() + timeout_s
    while True:
        body = client.get(f"/api/runs/{run_id}/").json()
        if body["status"] not in ("queued", "running"):
            return body
        if time.monotonic() > deadline:
            raise AssertionError(f"run {run_id} did not end: {body}")
        time.sleep(0.2)
