"""The embedded default as `make run` serves it: SQLite, the embedded broker, the local backend, a real
worker process and the real ASGI server, sharing one database file.

Nothing here uses DATABASE_URL or REDIS_URL: the processes get a fresh VAR_DIR of their own, and an
embedded Redis where redis-server is installed (scripts/serve.sh does the same).
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
import requests

from tests.services import service_missing

ROOT = Path(__file__).resolve().parents[2]
READY_TIMEOUT_S = 120
CODE = "import torch\nprint(torch.ones(2, 2).sum().item())\n"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Embedded:
    """The processes of `make run`, in a folder of their own."""

    def __init__(self, var_dir: Path):
        self.var_dir = var_dir
        self.env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "DATABASE_URL", "REDIS_URL")}
        self.env.update(
            DJANGO_SETTINGS_MODULE="ecplatform.settings.dev",
            DEBUG="0",
            VAR_DIR=str(var_dir),
            RUNNER_BACKEND="local",
            PYTHONUNBUFFERED="1",
        )
        self.procs: list[subprocess.Popen] = []
        self.url = ""

    def start(self, name: str, argv: list[str]) -> Path:
        log = self.var_dir / f"{name}.log"
        with open(log, "ab") as out:
            self.procs.append(
                subprocess.Popen(
                    argv, cwd=ROOT, env=self.env, stdout=out, stderr=subprocess.STDOUT, start_new_session=True
                )
            )
        return log

    def wait_for(self, predicate, what: str) -> None:
        deadline = time.monotonic() + READY_TIMEOUT_S
        while not predicate():
            for proc in self.procs:
                if proc.poll() is not None:
                    raise RuntimeError(f"{what}: a process exited ({proc.args[:4]}):\n{self.logs()}")
            if time.monotonic() > deadline:
                raise RuntimeError(f"{what} did not get ready:\n{self.logs()}")
            time.sleep(0.2)

    def logs(self) -> str:
        return "\n".join(f"--- {p.name}\n{p.read_text(errors='replace')[-3000:]}" for p in self.var_dir.glob("*.log"))

    def manage(self, *argv: str) -> str:
        out = subprocess.run(
            [sys.executable, "manage.py", *argv], cwd=ROOT, env=self.env, capture_output=True, text=True, check=False
        )
        assert out.returncode == 0, out.stdout + out.stderr
        return out.stdout

    def serve(self) -> None:
        if shutil.which("redis-server"):
            redis_dir = self.var_dir / "redis"
            self.start("redis", ["bash", str(ROOT / "scripts" / "embedded-redis.sh"), str(redis_dir)])
            self.wait_for((redis_dir / "redis.sock").exists, "the embedded Redis")
            self.env["REDIS_URL"] = f"unix://{redis_dir}/redis.sock"
        worker = [sys.executable, "-m", "celery", "-A", "ecplatform", "worker", "-Q", "cpu,gpu", "--loglevel", "INFO"]
        worker_log = self.start("worker", [*worker, "--without-gossip", "--without-mingle"])
        port = free_port()
        self.url = f"http://127.0.0.1:{port}"
        uvicorn = [sys.executable, "-m", "uvicorn", "ecplatform.asgi:application", "--app-dir", "platform"]
        self.start("web", [*uvicorn, "--port", str(port), "--log-level", "warning"])
        self.wait_for(lambda: " ready." in worker_log.read_text(errors="replace"), "the worker")
        self.wait_for(self._answers, "the web server")

    def _answers(self) -> bool:
        try:
            requests.get(f"{self.url}/api/exercises/", timeout=2)
            return True
        except requests.ConnectionError:
            return False

    def stop(self) -> None:
        for proc in reversed(self.procs):
            if proc.poll() is None:
                os.killpg(proc.pid, signal.SIGTERM)
        for proc in self.procs:
            try:
                proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()


@pytest.fixture
def embedded(tmp_path):
    if not shutil.which("bwrap"):
        service_missing("bubblewrap (bwrap) is not installed")
    platform = Embedded(tmp_path / "var")
    platform.var_dir.mkdir()
    platform.manage("migrate", "--noinput", "-v", "0")
    script = """
import json
from rest_framework.authtoken.models import Token
from accounts.services import user_create
from courses.models import Chapter, Course, Exercise
course = Course.objects.create(slug="embedded", title="Embedded", published=True)
chapter = Chapter.objects.create(course=course, number=1, slug="one", title="One", published=True)
exercise = Exercise.objects.create(chapter=chapter, slug="sum", title="Sum")
tokens = [Token.objects.create(user=user_create(username=f"learner{i}", password="pw-for-tests-1")).key
          for i in range(2)]
print(json.dumps({"exercise": exercise.id, "tokens": tokens}))
"""
    data = json.loads(platform.manage("shell", "-c", script).strip().splitlines()[-1])
    platform.exercise_id, platform.tokens = data["exercise"], data["tokens"]
    try:
        platform.serve()
        yield platform
    finally:
        platform.stop()


@pytest.mark.services
def test_twenty_runs_submitted_at_once_by_two_learners_are_accepted_or_capped_and_every_accepted_run_succeeds(
    embedded,
):
    start = threading.Barrier(20)
    answers: list[tuple[str, int, dict]] = []
    lock = threading.Lock()

    def submit(token: str) -> None:
        http = requests.Session()
        start.wait()
        response = http.post(
            f"{embedded.url}/api/runs/",
            json={"exercise": embedded.exercise_id, "code": CODE},
            headers={"Authorization": f"Token {token}"},
            timeout=60,
        )
        body = response.json() if response.headers.get("content-type", "").startswith("application/json") else {}
        with lock:
            answers.append((token, response.status_code, body))

    threads = [threading.Thread(target=submit, args=(embedded.tokens[i % 2],)) for i in range(20)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()

    statuses = sorted(code for _, code, _ in answers)
    assert set(statuses) <= {201, 429}, (statuses, [b for _, c, b in answers if c not in (201, 429)])
    accepted = [(token, body["id"]) for token, code, body in answers if code == 201]
    # Each learner gets runs in (the per-learner cap admits two at a time).
    assert {token for token, _ in accepted} == set(embedded.tokens)

    for token, run_id in accepted:
        deadline = time.monotonic() + 120
        while True:
            run = requests.get(
                f"{embedded.url}/api/runs/{run_id}/", headers={"Authorization": f"Token {token}"}, timeout=30
            ).json()
            if run["status"] not in ("queued", "running") or time.monotonic() > deadline:
                break
            time.sleep(0.1)
        assert run["status"] == "succeeded", (run, embedded.logs())
        assert run["stdout"] == "4.0\n"
