#!/usr/bin/env python
"""Soak: many learners pressing Run twice, streaming every run's events, some of them hostile.

It starts what it needs, like bench/run_latency.py: the ASGI web app under uvicorn and one worker
as deployed (a thread per run, one warm pool), then `--learners` learners (20) for `--minutes` (5).
Each learner, over and over: submits two runs at once (a double click), follows each run's
`GET /api/runs/<id>/events/` to its end, then reads the run; about one run in eight is hostile
(error events past the output cap, bytes without a newline on the protocol fd, a NUL in an error's
name: tests/runner/hostile.py). A sampler watches, every second, the worker's warm sandboxes
(containers with its warm label, or its bubblewrap servers), the memory of the worker and its
sandboxes, and the database connections in use.

Modes:
- `postgres`: PostgreSQL and Redis from DATABASE_URL and REDIS_URL (a fresh database,
  `--database`, default ec_soak), the docker backend (`--backend` to change);
- `embedded`: the `make run` default: SQLite, no Redis, the local backend, and whatever broker
  the settings then give (settings.CELERY_BROKER_URL), all under a fresh VAR_DIR.

It prints runs started / ended / lost, peak warm sandboxes against RUNNER_WARM_MAX, peak worker
memory, peak database connections, and the 5xx count; it exits 1 unless lost, leaked sandboxes
(any sample above RUNNER_WARM_MAX, or any left above it at the end) and 5xx are all 0.

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/easycompilers REDIS_URL=redis://127.0.0.1:6379/0 \\
        .venv/bin/python bench/soak.py --mode postgres [--minutes 5] [--learners 20]
    .venv/bin/python bench/soak.py --mode embedded --minutes 1
"""

from __future__ import annotations

import argparse
import json
import os
import random
import socket
import sys
import tempfile
import threading
import time
from collections import Counter
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

import requests

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.run_latency import PY, free_port, progress, stop, wait_for  # noqa: E402
from tests.runner.hostile import ERROR_FLOOD, NO_NEWLINE_FLOOD, NUL_NAME  # noqa: E402

HOSTILE = {"error_flood": ERROR_FLOOD, "no_newline": NO_NEWLINE_FLOOD, "nul_name": NUL_NAME}
HOSTILE_SHARE = 1 / 8
WARM_MAX = 6
TERMINAL = {"succeeded", "failed", "timed_out", "error"}
# How long, after the soak, runs still going get to end before they count as lost.
GRACE_S = 90


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--mode", choices=("postgres", "embedded"), default="postgres")
    parser.add_argument("--minutes", type=float, default=5.0)
    parser.add_argument("--learners", type=int, default=20)
    parser.add_argument("--backend", default="", help="sandbox backend (postgres: docker; embedded: local)")
    parser.add_argument("--database", default="ec_soak", help="postgres: the database to (re)create")
    parser.add_argument("--seed", type=int, default=1)
    return parser.parse_args()


class Platform:
    """The web app and one worker, on a fresh database."""

    def __init__(self, args: argparse.Namespace, workdir: Path):
        self.mode = args.mode
        self.workdir = workdir
        self.backend = args.backend or ("docker" if args.mode == "postgres" else "local")
        env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "DATABASE_URL", "REDIS_URL")}
        env.update(
            DJANGO_SETTINGS_MODULE="ecplatform.settings.dev",
            DEBUG="0",
            VAR_DIR=str(workdir / "var"),
            RUNNER_BACKEND=self.backend,
            RUNNER_WARM_MAX=str(WARM_MAX),
            # The soak is about the run path, not the per-minute cap (the 2-active cap stays).
            RUNNER_MAX_RUNS_PER_MINUTE="100000",
            LOG_LEVEL="WARNING",
            PYTHONUNBUFFERED="1",
        )
        self.database = ""
        if self.mode == "postgres":
            server = os.environ.get("DATABASE_URL") or "postgres://postgres@127.0.0.1:5432/postgres"
            self.server_url = server
            self.database = args.database
            env["DATABASE_URL"] = urlunsplit(urlsplit(server)._replace(path=f"/{self.database}"))
            env["REDIS_URL"] = os.environ.get("REDIS_URL") or "redis://127.0.0.1:6379/0"
        self.env = env
        self.processes = []
        self.worker = None
        self.web_url = ""

    def prepare(self, learners: int) -> tuple[int, list[str]]:
        if self.mode == "postgres":
            self._database('DROP DATABASE IF EXISTS "{}" WITH (FORCE)', 'CREATE DATABASE "{}"')
        self._manage("migrate", "--noinput", "-v", "0")
        script = f"""
import json
from rest_framework.authtoken.models import Token
from accounts.services import user_create
from courses.models import Chapter, Course, Exercise
course = Course.objects.create(slug="soak", title="Soak", published=True)
chapter = Chapter.objects.create(course=course, number=1, slug="soak", title="Soak", published=True)
exercise = Exercise.objects.create(chapter=chapter, slug="soak", title="Soak", time_limit_s=10)
tokens = [Token.objects.create(user=user_create(username=f"soak{{i}}", password="soak-pw-1")).key
          for i in range({learners})]
from django.conf import settings
print(json.dumps({{"exercise": exercise.id, "tokens": tokens, "broker": settings.CELERY_BROKER_URL}}))
"""
        data = json.loads(self._manage("shell", "-c", script).strip().splitlines()[-1])
        self.broker = urlsplit(data["broker"]).scheme
        port = free_port()
        self.web_url = f"http://127.0.0.1:{port}"
        argv = [PY, "-m", "uvicorn", "ecplatform.asgi:application", "--app-dir", "platform"]
        self._start("web", [*argv, "--port", str(port), "--log-level", "warning"])
        wait_for(self._answers, "the web app")
        log = self.workdir / "worker.log"
        argv = [PY, "-m", "celery", "-A", "ecplatform", "worker", "-Q", "cpu,gpu", "-n", "soak@%h"]
        self.worker = self._start("worker", [*argv, "--without-gossip", "--without-mingle", "--loglevel", "INFO"])
        wait_for(lambda: " ready." in log.read_text(errors="replace"), "the worker", proc=self.worker)
        return data["exercise"], data["tokens"]

    def _database(self, *statements: str) -> None:
        import psycopg

        admin = urlunsplit(urlsplit(self.server_url)._replace(path="/postgres"))
        with psycopg.connect(admin, autocommit=True) as conn:
            for statement in statements:
                conn.execute(statement.format(self.database))

    def _manage(self, *argv: str) -> str:
        import subprocess

        out = subprocess.run([PY, "manage.py", *argv], cwd=ROOT, env=self.env, capture_output=True, text=True)
        if out.returncode:
            raise RuntimeError(f"manage.py {argv[0]} failed:\n{out.stdout}\n{out.stderr}")
        return out.stdout

    def _start(self, name: str, argv: list[str]):
        import subprocess

        log = open(self.workdir / f"{name}.log", "ab")  # noqa: SIM115 - lives as long as the process
        proc = subprocess.Popen(
            argv, cwd=ROOT, env=self.env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True
        )
        self.processes.append(proc)
        return proc

    def _answers(self) -> bool:
        try:
            return requests.get(f"{self.web_url}/api/exercises/", timeout=2).status_code in (401, 403)
        except requests.ConnectionError:
            return False

    # -- what the sampler reads ----------------------------------------------------------------
    def warm_sandboxes(self) -> list[str]:
        """The worker's warm sandboxes: container ids, or the pids of its bubblewrap servers."""
        pid = self.worker.pid
        if self.backend == "docker":
            import docker

            client = docker.from_env()
            try:
                label = f"easycompilers.warm={socket.gethostname()}:{pid}"
                return [c.id for c in client.containers.list(filters={"label": label})]
            finally:
                client.close()
        found = []
        for child in _children(pid):
            argv = _cmdline(child)
            if argv and os.path.basename(argv[0]) == "bwrap" and "--serve" in argv:
                found.append(str(child))
        return found

    def memory_mib(self, sandboxes: list[str]) -> float:
        """RSS of the worker and every process under it, plus the containers' memory."""
        total_kib = sum(_rss_kib(pid) for pid in _tree(self.worker.pid))
        if self.backend == "docker":
            total_kib += sum(_container_memory_kib(cid) for cid in sandboxes)
        return total_kib / 1024

    def db_connections(self) -> int | None:
        if self.mode != "postgres":
            return None
        import psycopg

        admin = urlunsplit(urlsplit(self.server_url)._replace(path="/postgres"))
        with psycopg.connect(admin, autocommit=True) as conn:
            row = conn.execute("SELECT count(*) FROM pg_stat_activity WHERE datname = %s", [self.database]).fetchone()
        return int(row[0])

    def close(self) -> None:
        for proc in reversed(self.processes):
            stop(proc)
        if self.mode == "postgres":
            try:
                self._database('DROP DATABASE IF EXISTS "{}" WITH (FORCE)')
            except Exception as exc:
                print(f"could not drop {self.database}: {exc}", file=sys.stderr)


def _children(pid: int) -> list[int]:
    found = []
    try:
        for task in Path(f"/proc/{pid}/task").iterdir():
            found += [int(c) for c in (task / "children").read_text().split()]
    except OSError:
        pass
    return found


def _tree(pid: int) -> list[int]:
    pids, seen = [pid], []
    while pids:
        p = pids.pop()
        seen.append(p)
        pids += _children(p)
    return seen


def _cmdline(pid: int) -> list[str]:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().decode(errors="replace").split("\0")
    except OSError:
        return []


def _rss_kib(pid: int) -> int:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    except OSError:
        pass
    return 0


def _container_memory_kib(container_id: str) -> int:
    for path in (
        f"/sys/fs/cgroup/system.slice/docker-{container_id}.scope/memory.current",
        f"/sys/fs/cgroup/docker/{container_id}/memory.current",
        f"/sys/fs/cgroup/memory/docker/{container_id}/memory.usage_in_bytes",
    ):
        try:
            return int(Path(path).read_text()) // 1024
        except (OSError, ValueError):
            continue
    return 0


class Soak:
    def __init__(self, platform: Platform, exercise: int, tokens: list[str], seed: int):
        self.platform = platform
        self.exercise = exercise
        self.tokens = tokens
        self.seed = seed
        self.lock = threading.Lock()
        self.started: dict[str, str] = {}  # run id -> its learner's token
        self.ended: dict[str, str] = {}
        self.counts: Counter = Counter()
        self.statuses: Counter = Counter()
        self.errors: list[str] = []
        self.peak = {"sandboxes": 0, "memory_mib": 0.0, "db": 0}
        self.over_max = 0

    def count(self, what: str, n: int = 1) -> None:
        with self.lock:
            self.counts[what] += n

    def _check(self, response: requests.Response, what: str) -> None:
        if response.status_code >= 500:
            self.count("5xx")
            with self.lock:
                self.errors.append(f"{what}: {response.status_code} {response.text[:200]}")

    def learner(self, index: int, deadline: float) -> None:
        rng = random.Random(self.seed * 1000 + index)
        session = requests.Session()
        session.headers["Authorization"] = f"Token {self.tokens[index]}"
        while time.monotonic() < deadline:
            codes = [self._code(rng) for _ in range(2)]
            runs = []
            for kind, code in codes:  # a double click: both presses before either run ends
                try:
                    response = session.post(
                        f"{self.platform.web_url}/api/runs/",
                        json={"exercise": self.exercise, "code": code},
                        timeout=60,
                    )
                except requests.RequestException as exc:
                    self.count("request failures")
                    self.errors.append(f"POST: {exc}")
                    continue
                self._check(response, "POST /api/runs/")
                if response.status_code == 201:
                    run_id = response.json()["id"]
                    with self.lock:
                        self.started[run_id] = self.tokens[index]
                    self.count(f"started {kind}")
                    runs.append(run_id)
                elif response.status_code == 429:
                    self.count("429 (learner's cap)")
                    time.sleep(float(response.headers.get("Retry-After", "1")))
            followers = [threading.Thread(target=self.follow, args=(session, run_id)) for run_id in runs]
            for thread in followers:
                thread.start()
            for thread in followers:
                thread.join()

    def _code(self, rng: random.Random) -> tuple[str, str]:
        if rng.random() < HOSTILE_SHARE:
            kind = rng.choice(sorted(HOSTILE))
            return kind, HOSTILE[kind]
        return "plain", f"import time\ntime.sleep({rng.choice((0, 0.1, 0.5))})\nprint({rng.randrange(1000)})\n"

    def follow(self, session: requests.Session, run_id: str) -> None:
        """Reads the run's event stream to its end, then the run."""
        base = f"{self.platform.web_url}/api/runs/{run_id}"
        try:
            with session.get(f"{base}/events/", stream=True, timeout=(10, 120)) as response:
                self._check(response, "GET events")
                for _line in response.iter_lines():
                    pass
            body = session.get(f"{base}/", timeout=60)
            self._check(body, "GET run")
            if body.status_code == 200 and body.json()["status"] in TERMINAL:
                with self.lock:
                    self.ended[run_id] = body.json()["status"]
                    self.statuses[body.json()["status"]] += 1
                    self.counts["largest run record (bytes)"] = max(
                        self.counts["largest run record (bytes)"], len(body.content)
                    )
        except requests.RequestException as exc:
            self.count("request failures")
            with self.lock:
                self.errors.append(f"follow {run_id}: {exc}")

    def sample(self, done: threading.Event) -> None:
        while not done.is_set():
            try:
                sandboxes = self.platform.warm_sandboxes()
                memory = self.platform.memory_mib(sandboxes)
                db = self.platform.db_connections()
            except Exception as exc:  # a sample that fails is skipped, and said
                self.count("failed samples")
                self.errors.append(f"sample: {exc}")
                done.wait(1)
                continue
            with self.lock:
                self.peak["sandboxes"] = max(self.peak["sandboxes"], len(sandboxes))
                self.peak["memory_mib"] = max(self.peak["memory_mib"], memory)
                if db is not None:
                    self.peak["db"] = max(self.peak["db"], db)
                if len(sandboxes) > WARM_MAX:
                    self.over_max += 1
            done.wait(1)

    def settle(self) -> None:
        """Runs not seen ending (their stream or read failed) get GRACE_S to end, read from the API."""
        deadline = time.monotonic() + GRACE_S
        while time.monotonic() < deadline:
            with self.lock:
                pending = {run_id: token for run_id, token in self.started.items() if run_id not in self.ended}
            if not pending:
                return
            for run_id, token in pending.items():
                headers = {"Authorization": f"Token {token}"}
                body = requests.get(f"{self.platform.web_url}/api/runs/{run_id}/", headers=headers, timeout=30)
                if body.status_code == 200 and body.json()["status"] in TERMINAL:
                    with self.lock:
                        self.ended[run_id] = body.json()["status"]
                        self.statuses[body.json()["status"]] += 1
            time.sleep(1)


def main() -> int:
    args = parse_args()
    workdir = Path(tempfile.mkdtemp(prefix="ec-soak-"))
    platform = Platform(args, workdir)
    try:
        progress(f"preparing ({args.mode}, {platform.backend} backend, logs in {workdir})")
        exercise, tokens = platform.prepare(args.learners)
        soak = Soak(platform, exercise, tokens, args.seed)
        done = threading.Event()
        sampler = threading.Thread(target=soak.sample, args=(done,))
        sampler.start()
        progress(f"{args.learners} learners for {args.minutes:g} min")
        deadline = time.monotonic() + args.minutes * 60
        learners = [threading.Thread(target=soak.learner, args=(i, deadline)) for i in range(args.learners)]
        for thread in learners:
            thread.start()
        for thread in learners:
            thread.join()
        soak.settle()
        time.sleep(3)  # the last sandboxes of ended runs close
        left = len(platform.warm_sandboxes())
        done.set()
        sampler.join()
        ok = report(args, platform, soak, left)
    finally:
        platform.close()
    return 0 if ok else 1


def report(args, platform: Platform, soak: Soak, left: int) -> bool:
    started = len(soak.started)
    ended = len(soak.ended)
    lost = started - ended
    leaked = soak.over_max + max(0, left - WARM_MAX)
    fivexx = soak.counts["5xx"]
    rows = [
        ("mode", f"{args.mode}: {platform.backend} backend, broker {platform.broker}"),
        ("learners x minutes", f"{args.learners} x {args.minutes:g}"),
        ("runs started", started),
        ("  of them hostile", sum(n for k, n in soak.counts.items() if k.startswith("started ") and "plain" not in k)),
        ("runs ended", f"{ended} ({', '.join(f'{k} {n}' for k, n in sorted(soak.statuses.items()))})"),
        ("runs lost", lost),
        ("429 answers (cap of 2 active)", soak.counts["429 (learner's cap)"]),
        ("peak warm sandboxes", f"{soak.peak['sandboxes']} (RUNNER_WARM_MAX {WARM_MAX}; {left} at the end)"),
        ("samples over RUNNER_WARM_MAX", soak.over_max),
        ("peak worker memory", f"{soak.peak['memory_mib']:.0f} MiB (worker and its sandboxes)"),
        ("peak DB connections", soak.peak["db"] if args.mode == "postgres" else "n/a (SQLite)"),
        ("largest GET /api/runs/<id>/", f"{soak.counts['largest run record (bytes)'] / 1024:.0f} KiB"),
        ("5xx answers", fivexx),
        ("request failures", soak.counts["request failures"]),
    ]
    width = max(len(name) for name, _ in rows)
    print()
    for name, value in rows:
        print(f"{name:<{width}}  {value}")
    for error in soak.errors[:10]:
        print(f"  ! {error}")
    ok = lost == 0 and leaked == 0 and fivexx == 0
    print(f"\n{'PASS' if ok else 'FAIL'}: lost {lost}, leaked sandboxes {leaked}, 5xx {fivexx}")
    return ok


if __name__ == "__main__":
    sys.exit(main())
