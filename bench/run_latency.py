#!/usr/bin/env python
"""End-to-end run latency: from `POST /api/runs/` to the terminal status on the run's event stream.

It starts what it measures itself, against the PostgreSQL and Redis named by DATABASE_URL and
REDIS_URL: a fresh database (`--database`, default ec_bench), the demo course, learners with API
tokens, the ASGI web app under uvicorn, and one worker per sandbox backend (2 processes). Then:

1. per backend, `--runs` sequential runs of the Part 2 attention exercise ("one-query-three-keys",
   its starter code) by one learner: p50 and p95;
2. baselines on the same code, as many runs: a bare `python` (the project's interpreter) and a
   bare `docker run` of the sandbox image (where an engine and the image exist), and with `--warm`
   the floor under a warm run: the same program forked from a process with torch loaded
   (bench/fork_floor.py), every figure as a ratio to it;
3. per backend, `--learners` concurrent learners x `--per-learner` runs each: throughput, p95 and
   lost runs (not ended `succeeded`; must be 0).

The per-minute run cap is raised for the benchmark (it measures latency, not the cap); the
per-learner cap of 2 active runs stays, and each learner waits for its run before the next.

`--warm` measures every backend twice, cold (RUNNER_WARM=0) and warm (RUNNER_WARM=1, sandboxes per
learner forked from a torch-imported server), with 50 sequential runs and 20 learners x 10 by
default; before the concurrent part each learner makes one untimed run (so it is an active
learner with a sandbox); it adds the memory of an idle warm sandbox and, per part, where the
time went (from the Run rows: queue, sandbox, worker's own work, web and event stream).

`--embedded` measures what `make run` serves with: the local backend, warm, one learner's `--runs`
sequential runs (30) on a fresh SQLite file in a folder of its own, with the embedded broker (a Redis
of its own where redis-server is installed, as scripts/serve.sh starts it), beside PostgreSQL +
Redis measured in the same run, and each setup's CPU use while idle. `--setups` picks others:
`filesystem@0.02` is the file-system broker polled every 20 ms (what runs without redis-server).

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/easycompilers REDIS_URL=redis://127.0.0.1:6379/0 \\
        .venv/bin/python bench/run_latency.py [--runs 30] [--backends local,docker]
    .venv/bin/python bench/run_latency.py --embedded [--setups postgresql,default,filesystem@0.02]
"""

from __future__ import annotations

import argparse
import contextlib
import json
import math
import os
import re
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

import requests

ROOT = Path(__file__).resolve().parents[1]
PY = sys.executable
EXERCISE_SLUG = "one-query-three-keys"
COURSE_DIR = ROOT / "courses" / "content" / "transformers"
FALLBACK_CODE = """import torch
q = torch.tensor([1.0, 0.0])
k = torch.tensor([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]])
w = torch.softmax(k @ q / 2 ** 0.5, dim=0)
print(w)
"""
SANDBOX_IMAGE = os.environ.get("RUNNER_DOCKER_IMAGE", "easycompilers-sandbox:latest")
RUN_TIMEOUT_S = 300


def main() -> int:
    args = parse_args()
    if args.embedded:
        return main_embedded(args)
    database_url, redis_url = os.environ.get("DATABASE_URL", ""), os.environ.get("REDIS_URL", "")
    if not database_url.startswith("postgres") or not redis_url:
        print("bench/run_latency.py needs DATABASE_URL (PostgreSQL) and REDIS_URL", file=sys.stderr)
        return 2
    backends = args.backends.split(",") if args.backends else available_backends()
    modes = tuple(args.modes.split(",")) if args.warm else ("",)
    if args.warm:
        args.runs = args.runs or 50
        args.learners = 20 if args.learners is None else args.learners
        args.per_learner = 10 if args.per_learner is None else args.per_learner
    args.runs = args.runs or 30
    args.learners = 10 if args.learners is None else args.learners
    args.per_learner = 5 if args.per_learner is None else args.per_learner
    logs = Path(tempfile.mkdtemp(prefix="ec-bench-"))
    bench = Bench(database_url=database_url, redis_url=redis_url, database=args.database, logs=logs)
    rows: list[dict] = []
    breakdowns: list[tuple[str, dict]] = []
    memory: list[tuple[str, float | None]] = []
    try:
        bench.prepare(learners=max(args.learners, 1) + 1)
        code = bench.code
        print(f"exercise {EXERCISE_SLUG!r} (id {bench.exercise_id}); logs in {logs}", flush=True)
        for backend in backends:
            for mode in modes:
                label = f"{backend} backend" + (f", {mode}" if mode else "")
                with bench.worker(backend, mode=mode, learners=args.learners):
                    bench.sequential(backend=backend, runs=min(2, args.runs), learner=0)  # warm-up
                    if mode == "warm":
                        bench.warm_up(learners=[0])
                    wait_until_quiet(timeout_s=args.settle_s)
                    mark = bench.mark()
                    progress(f"{label}: {args.runs} sequential runs")
                    latencies, lost = bench.sequential(backend=backend, runs=args.runs, learner=0)
                    rows.append(row(f"API, {label}, sequential", latencies, lost=lost))
                    breakdowns.append((rows[-1]["name"], bench.breakdown(since=mark, latencies=latencies)))
                    if mode == "warm":
                        memory.append((backend, idle_warm_memory_mib(backend)))
                    if args.learners and args.per_learner:
                        if mode == "warm":
                            bench.warm_up(learners=list(range(1, args.learners + 1)))
                        wait_until_quiet(timeout_s=args.settle_s)
                        mark = bench.mark()
                        progress(f"{label}: {args.learners} learners x {args.per_learner}")
                        started = time.monotonic()
                        latencies, lost = bench.concurrent(learners=args.learners, per_learner=args.per_learner)
                        wall = time.monotonic() - started
                        rows.append(
                            row(
                                f"API, {label}, {args.learners} learners x {args.per_learner}",
                                latencies,
                                lost=lost,
                                throughput=len(latencies) / wall if wall else 0.0,
                            )
                        )
                        breakdowns.append((rows[-1]["name"], bench.breakdown(since=mark, latencies=latencies)))
        if args.warm:
            rows.append(row(FLOOR, fork_floor(code, args.runs), lost=0))
        rows.append(row("bare python", baseline([PY, "-"], code, args.runs), lost=0))
        if docker_image_available():
            docker = ["docker", "run", "--rm", "-i", "--network", "none", "--entrypoint", "/opt/venv/bin/python"]
            rows.append(row("bare docker run", baseline([*docker, SANDBOX_IMAGE, "-"], code, args.runs), lost=0))
    finally:
        bench.close(keep_db=args.keep_db)
    print_table(rows)
    if args.warm:
        print_warm(rows, breakdowns, memory)
    lost = sum(r["lost"] for r in rows)
    if lost:
        print(f"LOST RUNS: {lost}", file=sys.stderr)
        return 1
    return 0


# --- the embedded default beside the production path ---------------------------------------------

EMBEDDED_SETUPS = {
    # name: (what the table calls it, extra environment, whether an embedded Redis is started)
    "postgresql": ("PostgreSQL + Redis", {}, False),
    "redis": ("SQLite + embedded Redis", {}, True),
    "filesystem": ("SQLite + file-system broker", {}, False),
}


def embedded_default() -> str:
    """What `make run` serves with (scripts/serve.sh): an embedded Redis where redis-server is
    installed, else the file-system broker."""
    return "redis" if shutil.which("redis-server") else "filesystem"


def main_embedded(args: argparse.Namespace) -> int:
    """`--embedded`: the local backend, warm, one learner's sequential runs on each setup named in
    --setups (default: PostgreSQL + Redis, and the embedded default), and each setup's idle CPU."""
    runs = args.runs or 30
    database_url, redis_url = os.environ.get("DATABASE_URL", ""), os.environ.get("REDIS_URL", "")
    setups = args.setups.split(",") if args.setups else ["postgresql", "default"]
    logs = Path(tempfile.mkdtemp(prefix="ec-bench-"))
    print(f"logs in {logs}", flush=True)
    rows: list[dict] = []
    breakdowns: list[tuple[str, dict]] = []
    failed = False
    for index, setup in enumerate(setups):
        name, _, poll = setup.partition("@")
        name = embedded_default() if name == "default" else name
        if name not in EMBEDDED_SETUPS:
            print(f"unknown setup {setup!r}: choose from {', '.join(EMBEDDED_SETUPS)}, default", file=sys.stderr)
            return 2
        label, env, with_redis = EMBEDDED_SETUPS[name]
        env = {**env, **({"BROKER_POLL_INTERVAL_S": poll} if poll else {})}
        label += f", polls every {float(poll) * 1000:.0f} ms" if poll else ""
        if name == "postgresql":
            if not database_url.startswith("postgres") or not redis_url:
                progress("PostgreSQL + Redis skipped: set DATABASE_URL (PostgreSQL) and REDIS_URL")
                continue
            bench = Bench(database_url=database_url, redis_url=redis_url, database=args.database, logs=logs, **env)
        else:
            var_dir = logs / f"var-{name}-{index}"
            var_dir.mkdir()
            socket_url = f"unix://{var_dir / 'redis'}/redis.sock" if with_redis else ""
            bench = Bench(database_url="", redis_url=socket_url, database="", logs=logs, var_dir=var_dir, **env)
        try:
            if with_redis:
                script = str(ROOT / "scripts" / "embedded-redis.sh")
                bench._start(f"redis-{index}", ["bash", script, str(var_dir / "redis")])
                wait_for(lambda v=var_dir: (v / "redis" / "redis.sock").exists(), "the embedded Redis")
            bench.prepare(learners=1)
            # The worker as `make run` starts it (scripts/serve.sh): with the sweeper's schedule.
            beat = ("--beat", "--schedule", str(logs / f"celerybeat-{index}"))
            with bench.worker("local", mode="warm", learners=1, extra=beat):
                bench.sequential(backend="local", runs=2, learner=0)
                bench.warm_up(learners=[0])
                wait_until_quiet(timeout_s=args.settle_s)
                mark = bench.mark()
                progress(f"{label}: {runs} sequential runs")
                latencies, lost = bench.sequential(backend="local", runs=runs, learner=0)
                rows.append(row(f"{label}, local, warm", latencies, lost=lost))
                breakdowns.append((rows[-1]["name"], bench.breakdown(since=mark, latencies=latencies)))
                time.sleep(5)  # the last run's writes and the pool's refill settle
                rows[-1]["idle_cpu"] = bench.idle_cpu_percent(args.idle_seconds)
            r = rows[-1]
            progress(
                f"{r['name']}: p50 {r['p50'] * 1000:.0f} ms, p95 {r['p95'] * 1000:.0f} ms, lost {r['lost']}, "
                f"idle CPU {r['idle_cpu']:.1f}%"
            )
        except Exception as exc:
            progress(f"{label}: failed: {exc} (logs in {logs})")
            failed = True
        finally:
            bench.close(keep_db=args.keep_db)
    print()
    what = f"setup ({runs} sequential runs of one learner)"
    head = f"{what:<60} {'n':>3} {'p50 ms':>7} {'p95 ms':>7} {'lost':>5} {'idle CPU':>9}"
    print(head)
    print("-" * len(head))
    for r in rows:
        print(
            f"{r['name']:<60} {r['n']:>3} {r['p50'] * 1000:>7.0f} {r['p95'] * 1000:>7.0f} {r['lost']:>5}"
            f" {r['idle_cpu']:>8.1f}%"
        )
    print("\np50/p95: POST /api/runs/ to the status event on /api/runs/<id>/events/.")
    print(f"idle CPU: web app, worker (with its sandboxes and beat) and any embedded Redis, {args.idle_seconds:.0f} s")
    print("after the last run, as a share of one core (a shared PostgreSQL or Redis is not counted).")
    print("\nwhere the time went (medians, ms; see --warm):")
    for name, parts in breakdowns:
        if parts:
            print(
                f"  {name:<60} queue {parts['queue']:5.0f}  sandbox {parts['sandbox']:5.1f}  "
                f"finish {parts['finish']:5.1f}  response {parts['response']:5.0f}"
            )
    if any(r["lost"] for r in rows):
        print(f"LOST RUNS: {sum(r['lost'] for r in rows)}", file=sys.stderr)
        return 1
    return 1 if failed else 0


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=0, help="sequential runs per backend and baseline (30; --warm 50)")
    parser.add_argument("--backends", default="", help="comma-separated: local,docker (default: those available)")
    parser.add_argument("--learners", type=int, default=None, help="concurrent learners (10; --warm 20; 0 skips)")
    parser.add_argument("--per-learner", type=int, default=None, help="runs per concurrent learner (5; --warm 10)")
    parser.add_argument("--warm", action="store_true", help="each backend cold and warm, side by side")
    parser.add_argument("--modes", default="cold,warm", help="with --warm: which of cold,warm to measure")
    parser.add_argument("--database", default="ec_bench", help="database to (re)create for the benchmark")
    parser.add_argument("--keep-db", action="store_true", help="keep the database afterwards")
    parser.add_argument(
        "--settle-s",
        type=float,
        default=120.0,
        help="before each timed part, wait up to this long for the machine to be 85%% idle (0: no wait)",
    )
    parser.add_argument(
        "--embedded",
        action="store_true",
        help="the embedded default (SQLite, embedded broker) beside PostgreSQL + Redis",
    )
    parser.add_argument(
        "--setups",
        default="",
        help="with --embedded: postgresql, default, redis, filesystem[@POLL_S] (default: postgresql,default)",
    )
    parser.add_argument("--idle-seconds", type=float, default=20.0, help="with --embedded: idle CPU measured over")
    return parser.parse_args()


# --- the platform under test ---------------------------------------------------------------------


def bench_from_env(*, embedded: bool, database: str, prefix: str) -> tuple[Bench, str] | None:
    """The benches' one choice of set-up: SQLite in a folder of its own (`--embedded`, as `make
    run`), or PostgreSQL (+ Redis) from DATABASE_URL and REDIS_URL; None when neither is given."""
    logs = Path(tempfile.mkdtemp(prefix=prefix))
    if embedded:
        (logs / "var").mkdir()
        return Bench(database_url="", redis_url="", database="", logs=logs, var_dir=logs / "var"), (
            "SQLite (the embedded default)"
        )
    if not os.environ.get("DATABASE_URL"):
        return None
    redis_url = os.environ.get("REDIS_URL", "")
    bench = Bench(database_url=os.environ["DATABASE_URL"], redis_url=redis_url, database=database, logs=logs)
    return bench, "PostgreSQL" + (" + Redis" if redis_url else "")


def learner_browser(web_url: str, *, username: str = "bench0", password: str = "bench-pw-1") -> requests.Session:
    """A session logged in through the login page, as the learner's browser is."""
    browser = requests.Session()
    login = f"{web_url}/accounts/login/"
    browser.get(login, timeout=30).raise_for_status()
    browser.post(
        login,
        data={"username": username, "password": password, "csrfmiddlewaretoken": browser.cookies["csrftoken"]},
        headers={"Referer": login},
        timeout=30,
    ).raise_for_status()
    assert "sessionid" in browser.cookies, "the learner could not log in"
    return browser


class Bench:
    def __init__(
        self, *, database_url: str, redis_url: str, database: str, logs: Path, var_dir: Path | None = None, **env: str
    ):
        """PostgreSQL (`database_url` names the server, `database` the database to create) or, with
        `var_dir`, the embedded default: SQLite in var_dir, and Redis only if `redis_url` says so."""
        self.server_url = database_url
        self.database = database
        self.sqlite = var_dir / "db.sqlite3" if var_dir else None
        parts = urlsplit(database_url)
        self.database_url = urlunsplit(parts._replace(path=f"/{database}")) if not var_dir else ""
        dropped = {"PYTHONPATH", "DATABASE_URL", "REDIS_URL", "VAR_DIR"}
        self.env = {
            **{k: v for k, v in os.environ.items() if k not in dropped},
            "DJANGO_SETTINGS_MODULE": "ecplatform.settings.dev",
            "DEBUG": "0",
            "RUNNER_MAX_RUNS_PER_MINUTE": "100000",
            "LOG_LEVEL": "WARNING",
            "PYTHONUNBUFFERED": "1",
            **({"VAR_DIR": str(var_dir)} if var_dir else {"DATABASE_URL": self.database_url}),
            **({"REDIS_URL": redis_url} if redis_url else {}),
            **env,
        }
        self.logs = logs
        self.processes: list[subprocess.Popen] = []
        self.web_url = ""
        self.tokens: list[str] = []
        self.exercise_id = 0
        self.run_ids: list[str] = []
        self.code = FALLBACK_CODE
        self.worker_log: Path | None = None
        # Each client thread keeps its connection open, as a browser does.
        self._local = threading.local()

    def _session(self) -> requests.Session:
        session = getattr(self._local, "session", None)
        if session is None:
            session = self._local.session = requests.Session()
        return session

    # set-up
    def prepare(self, *, learners: int) -> None:
        self._database_recreate()
        self._manage("migrate", "--noinput", "-v", "0")
        if COURSE_DIR.exists():
            # Validated here, before any worker runs (the publish rule: every exercise in the sandbox).
            self._manage("import_course", str(COURSE_DIR), "--backend", "local")
        script = f"""
import json
from rest_framework.authtoken.models import Token
from accounts.services import user_create
from courses.models import Chapter, Course, Exercise
exercise = Exercise.objects.filter(slug={EXERCISE_SLUG!r}).first()
if exercise is None:
    course = Course.objects.create(slug="bench", title="Bench", published=True)
    chapter = Chapter.objects.create(course=course, number=1, slug="bench", title="Bench", published=True)
    exercise = Exercise.objects.create(chapter=chapter, slug={EXERCISE_SLUG!r}, title="Bench",
                                       starter_code={FALLBACK_CODE!r})
tokens = [Token.objects.create(user=user_create(username=f"bench{{i}}", password="bench-pw-1")).key
          for i in range({learners})]
print(json.dumps({{"exercise": exercise.id, "code": exercise.starter_code, "tokens": tokens}}))
"""
        out = self._manage("shell", "-c", script, capture=True)
        data = json.loads(out.strip().splitlines()[-1])
        self.exercise_id, self.code, self.tokens = data["exercise"], data["code"] or FALLBACK_CODE, data["tokens"]
        port = free_port()
        self.web_url = f"http://127.0.0.1:{port}"
        argv = [PY, "-m", "uvicorn", "ecplatform.asgi:application", "--app-dir", "platform"]
        self._start("web", [*argv, "--port", str(port), "--log-level", "warning"])
        wait_for(lambda: self._answers(), "the web app")

    def _query(self, postgresql: str, sqlite: str, params: list) -> list[tuple]:
        """Rows from the benchmark's database, in the SQL of its engine."""
        if self.sqlite:
            import sqlite3

            with contextlib.closing(sqlite3.connect(self.sqlite, timeout=30)) as conn:
                return conn.execute(sqlite, params).fetchall()
        import psycopg

        with psycopg.connect(self.database_url) as conn:
            return conn.execute(postgresql, params).fetchall()

    def _database_recreate(self) -> None:
        if self.sqlite:
            for path in self.sqlite.parent.glob(self.sqlite.name + "*"):
                path.unlink()
            return
        import psycopg

        parts = urlsplit(self.server_url)
        admin = urlunsplit(parts._replace(path="/postgres"))
        with psycopg.connect(admin, autocommit=True) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{self.database}" WITH (FORCE)')
            conn.execute(f'CREATE DATABASE "{self.database}"')

    def _manage(self, *argv: str, capture: bool = False) -> str:
        out = subprocess.run(
            [PY, "manage.py", *argv], cwd=ROOT, env=self.env, capture_output=True, text=True, check=False
        )
        if out.returncode != 0:
            raise RuntimeError(f"manage.py {argv[0]} failed:\n{out.stdout}\n{out.stderr}")
        return out.stdout

    def _start(self, name: str, argv: list[str], **env: str) -> subprocess.Popen:
        log = open(self.logs / f"{name}.log", "ab")  # noqa: SIM115 - lives as long as the process
        proc = subprocess.Popen(
            argv, cwd=ROOT, env={**self.env, **env}, stdout=log, stderr=subprocess.STDOUT, start_new_session=True
        )
        self.processes.append(proc)
        return proc

    def _answers(self) -> bool:
        try:
            return requests.get(f"{self.web_url}/api/exercises/", timeout=2).status_code in (401, 403)
        except requests.ConnectionError:
            return False

    class _Worker:
        def __init__(self, bench: Bench, backend: str, mode: str, learners: int, extra: tuple[str, ...] = ()):
            self.bench, self.backend, self.mode, self.extra = bench, backend, mode, extra
            self.env = {"RUNNER_BACKEND": backend}
            if mode:
                # Room for a sandbox per learner in each worker process, plus the spares.
                self.env.update(RUNNER_WARM="1" if mode == "warm" else "0", RUNNER_WARM_MAX=str(learners + 4))

        def __enter__(self):
            name = f"worker-{self.backend}{'-' + self.mode if self.mode else ''}"
            log = self.bench.worker_log = self.bench.logs / f"{name}.log"
            # The worker as deployed: the pool and concurrency come from the settings.
            argv = [PY, "-m", "celery", "-A", "ecplatform", "worker", "-Q", "cpu,gpu"]
            argv += ["-n", f"bench-{self.backend}@%h", "--without-gossip", "--without-mingle", "--loglevel", "INFO"]
            argv += self.extra
            self.proc = self.bench._start(name, argv, **self.env)
            wait_for(lambda: " ready." in log.read_text(errors="replace"), f"the {self.backend} worker", proc=self.proc)
            return self

        def __exit__(self, *exc):
            stop(self.proc)

    def worker(self, backend: str, *, mode: str = "", learners: int = 0, extra: tuple[str, ...] = ()) -> Bench._Worker:
        return Bench._Worker(self, backend, mode, learners, extra)

    def idle_cpu_percent(self, seconds: float) -> float:
        """CPU time the processes this benchmark started (and theirs) used over `seconds` of doing
        nothing, as a share of one core."""
        sessions = {str(p.pid) for p in self.processes if p.poll() is None}

        def ticks() -> int:
            total = 0
            for pid in filter(str.isdigit, os.listdir("/proc")):
                try:
                    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
                except (OSError, IndexError):
                    continue
                if fields[3] in sessions:  # session id: each process was started in a session of its own
                    total += int(fields[11]) + int(fields[12])
            return total

        before = ticks()
        time.sleep(seconds)
        return (ticks() - before) / os.sysconf("SC_CLK_TCK") / seconds * 100

    def warm_up(self, *, learners: list[int], rounds: int = 12) -> None:
        """Untimed rounds (each learner one run, all at once) until nine runs in ten of a round
        ran warm: every learner is then active, with a sandbox of their own."""
        for _ in range(rounds):
            self.run_ids = []
            threads = [threading.Thread(target=self.one_run, kwargs={"learner": i}) for i in learners]
            for thread in threads:
                thread.start()
            for thread in threads:
                thread.join()
            # Django stores a UUID in SQLite as 32 hex digits.
            hex_ids = [i.replace("-", "") for i in self.run_ids]
            holes = ",".join("?" * len(hex_ids))
            warm = self._query(
                "SELECT count(*) FROM runner_run WHERE id = ANY(%s) AND warm",
                f"SELECT count(*) FROM runner_run WHERE id IN ({holes}) AND warm",
                [self.run_ids] if not self.sqlite else hex_ids,
            )
            share = warm[0][0] / max(1, len(self.run_ids))
            print(f"  warm-up round: {share:.0%} warm", flush=True)
            if share >= 0.9:
                return

    def mark(self):
        return self._query("SELECT now()", "SELECT strftime('%Y-%m-%d %H:%M:%f', 'now')", [])[0][0]

    def breakdown(self, *, since, latencies: list[float]) -> dict:
        """Medians, in ms, of where a run's time went, from the Run rows made since `since`."""
        rows = self._query(
            "SELECT extract(epoch FROM started_at - created_at) * 1000,"
            " extract(epoch FROM finished_at - created_at) * 1000, warm, id::text"
            " FROM runner_run WHERE created_at >= %s AND finished_at IS NOT NULL",
            "SELECT (julianday(started_at) - julianday(created_at)) * 86400000,"
            " (julianday(finished_at) - julianday(created_at)) * 86400000, warm,"
            " substr(id, 1, 8) || '-' || substr(id, 9, 4) || '-' || substr(id, 13, 4) || '-' ||"
            " substr(id, 17, 4) || '-' || substr(id, 21)"
            " FROM runner_run WHERE created_at >= ? AND finished_at IS NOT NULL",
            [since],
        )
        if not rows:
            return {}
        median = statistics.median
        server = median(float(r[1]) for r in rows)
        timings = worker_timings(self.worker_log, {r[3] for r in rows})

        def part(key: str) -> float:
            values = [t[key] for t in timings if t[key] is not None]
            return median(values) if values else float("nan")

        return {
            "queue": median(float(r[0]) for r in rows),
            "claim": part("claim"),
            "sandbox": part("sandbox"),
            "program": part("program"),
            "finish": part("finish"),
            "counted": part("after"),
            "response": max(0.0, median(latencies) * 1000 - server),
            "warm": sum(1 for r in rows if r[2]) / len(rows),
        }

    # measurements
    def one_run(self, *, learner: int) -> tuple[float, str]:
        """Seconds from POST to the status event, and the status."""
        headers = {"Authorization": f"Token {self.tokens[learner]}"}
        http = self._session()
        started = time.perf_counter()
        while True:
            response = http.post(
                f"{self.web_url}/api/runs/",
                json={"exercise": self.exercise_id, "code": self.code},
                headers=headers,
                timeout=30,
            )
            if response.status_code != 429:
                break
            time.sleep(0.05)  # a learner's earlier run is still being counted; try again
        response.raise_for_status()
        run_id = response.json()["id"]
        self.run_ids.append(run_id)
        status = "lost"
        with http.get(
            f"{self.web_url}/api/runs/{run_id}/events/",
            headers={**headers, "Accept": "text/event-stream"},
            stream=True,
            timeout=RUN_TIMEOUT_S,
        ) as stream:
            final = False
            for line in stream.iter_lines(decode_unicode=True):
                if line == "event: status":
                    final = True
                elif final and line.startswith("data:"):
                    status = json.loads(line[5:])["status"]
                    break
        return time.perf_counter() - started, status

    def sequential(self, *, backend: str, runs: int, learner: int) -> tuple[list[float], int]:
        latencies, lost = [], 0
        for _ in range(runs):
            seconds, status = self.one_run(learner=learner)
            latencies.append(seconds)
            lost += status != "succeeded"
        return latencies, lost

    def concurrent(self, *, learners: int, per_learner: int) -> tuple[list[float], int]:
        latencies: list[float] = []
        lost = [0]
        lock = threading.Lock()

        def learner_runs(index: int) -> None:
            for _ in range(per_learner):
                try:
                    seconds, status = self.one_run(learner=index + 1)
                except requests.RequestException:
                    with lock:
                        lost[0] += 1
                    continue
                with lock:
                    latencies.append(seconds)
                    lost[0] += status != "succeeded"

        threads = [threading.Thread(target=learner_runs, args=(i,)) for i in range(learners)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        return latencies, lost[0]

    def close(self, *, keep_db: bool) -> None:
        for proc in reversed(self.processes):
            stop(proc)
        if not keep_db:
            try:
                self._database_drop()
            except Exception as exc:
                print(f"could not drop {self.database}: {exc}", file=sys.stderr)

    def _database_drop(self) -> None:
        if self.sqlite:
            return  # the folder it lives in goes with the logs' temporary folder
        import psycopg

        admin = urlunsplit(urlsplit(self.server_url)._replace(path="/postgres"))
        with psycopg.connect(admin, autocommit=True) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{self.database}" WITH (FORCE)')


# --- helpers -----------------------------------------------------------------------------------


def available_backends() -> list[str]:
    backends = ["local"] if shutil.which("bwrap") else []
    if docker_image_available():
        backends.append("docker")
    return backends


def docker_image_available() -> bool:
    if not shutil.which("docker"):
        return False
    out = subprocess.run(["docker", "image", "inspect", SANDBOX_IMAGE], capture_output=True, check=False)
    return out.returncode == 0


WORKER_TIMING = re.compile(
    r"run (?P<id>[0-9a-f-]{36}) \w+, \w+: claim (?P<claim>[\d.]+) ms, sandbox (?P<sandbox>[\d.]+) ms "
    r"\(program (?P<program>[\d.]+|-) ms\), finish (?P<finish>[\d.]+) ms, after (?P<after>[\d.]+) ms"
)


def worker_timings(log: Path | None, run_ids: set[str]) -> list[dict]:
    """The worker's own timings of these runs (runner.services.run_execute logs one line a run)."""
    if log is None or not log.exists():
        return []
    found = []
    for match in WORKER_TIMING.finditer(log.read_text(errors="replace")):
        if match["id"] in run_ids:
            parts = ("claim", "sandbox", "program", "finish", "after")
            found.append({k: None if match[k] == "-" else float(match[k]) for k in parts})
    return found


def baseline(argv: list[str], code: str, runs: int) -> list[float]:
    latencies = []
    for _ in range(runs):
        started = time.perf_counter()
        out = subprocess.run(argv, input=code, capture_output=True, text=True, check=False)
        latencies.append(time.perf_counter() - started)
        if out.returncode != 0:
            raise RuntimeError(f"{' '.join(argv[:3])} failed: {out.stderr[-2000:]}")
    return latencies


FLOOR = "bare fork + exec, torch loaded (floor)"


def fork_floor(code: str, runs: int) -> list[float]:
    """The same program forked from a process that has torch, numpy and matplotlib imported, as
    a warm sandbox has: what a warm run would cost if the platform added nothing (bench/fork_floor.py)."""
    script = str(ROOT / "bench" / "fork_floor.py")
    out = subprocess.run([PY, script, str(runs)], input=code, capture_output=True, text=True, check=False)
    if out.returncode != 0:
        raise RuntimeError(f"bench/fork_floor.py failed: {out.stderr[-2000:]}")
    return json.loads(out.stdout)


def percentile(values: list[float], q: float) -> float:
    """Nearest rank: the smallest value with at least q of the values at or below it."""
    ordered = sorted(values)
    return ordered[max(0, math.ceil(q * len(ordered)) - 1)]


def row(name: str, latencies: list[float], *, lost: int, throughput: float | None = None) -> dict:
    return {
        "name": name,
        "n": len(latencies),
        "p50": percentile(latencies, 0.5) if latencies else float("nan"),
        "p95": percentile(latencies, 0.95) if latencies else float("nan"),
        "throughput": throughput,
        "lost": lost,
    }


def print_table(rows: list[dict]) -> None:
    python = next((r["p50"] for r in rows if r["name"] == "bare python"), None)
    docker = next((r["p50"] for r in rows if r["name"] == "bare docker run"), None)
    floor = next((r["p50"] for r in rows if r["name"] == FLOOR), None)
    head = f"{'what':<42} {'n':>4} {'p50 ms':>8} {'p95 ms':>8} {'runs/s':>7} {'lost':>5} {'/python':>8} {'/docker':>8}"
    head += f" {'/floor':>8}" if floor else ""
    print()
    print(head)
    print("-" * len(head))
    for r in rows:
        ratio_python = f"{r['p50'] / python:.2f}x" if python else "-"
        ratio_docker = f"{r['p50'] / docker:.2f}x" if docker else "-"
        throughput = f"{r['throughput']:.2f}" if r["throughput"] is not None else "-"
        print(
            f"{r['name']:<42} {r['n']:>4} {r['p50'] * 1000:>8.0f} {r['p95'] * 1000:>8.0f} {throughput:>7} "
            f"{r['lost']:>5} {ratio_python:>8} {ratio_docker:>8}" + (f" {r['p50'] / floor:>7.2f}x" if floor else "")
        )
    print("\np50/p95: POST /api/runs/ to the status event on /api/runs/<id>/events/;")
    print("baselines: process start to exit; the floor: fork to exit of the same program, figure drawn,")
    print("in a process that already imported torch, numpy and matplotlib (bench/fork_floor.py).")
    print("/python, /docker, /floor: p50 over the bare python, bare docker run and floor p50 of the same code.")


def idle_warm_memory_mib(backend: str) -> float | None:
    """Median memory of an idle warm sandbox: PSS of a local server, or a container's memory
    without page cache."""
    time.sleep(1)
    values: list[float] = []
    if backend == "local":
        # A sandbox's processes (its server, and the child forked ahead for the next run) are
        # summed under the bubblewrap process that holds them.
        parents, commands = {}, {}
        for pid in filter(str.isdigit, os.listdir("/proc")):
            try:
                parents[pid] = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[1]
                commands[pid] = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
            except (OSError, IndexError):
                continue
        per_sandbox: dict[str, float] = {}
        for pid, cmd in commands.items():
            if b"--serve" not in cmd or not any(c.endswith(b"/harness") for c in cmd) or cmd[0].endswith(b"bwrap"):
                continue
            holder = parents.get(pid, "")
            while holder and not commands.get(holder, [b""])[0].endswith(b"bwrap"):
                holder = parents.get(holder, "")
            try:
                pss = next(
                    line
                    for line in Path(f"/proc/{pid}/smaps_rollup").read_text().splitlines()
                    if line.startswith("Pss:")
                )
            except (OSError, StopIteration):
                continue
            per_sandbox[holder] = per_sandbox.get(holder, 0.0) + int(pss.split()[1]) / 1024
        values = list(per_sandbox.values())
    else:
        import docker

        client = docker.from_env()
        for container in client.containers.list(filters={"label": "easycompilers.warm"}):
            try:
                stats = container.stats(stream=False).get("memory_stats", {})
            except docker.errors.NotFound:  # closed meanwhile
                continue
            inner = stats.get("stats", {})
            used = inner.get("rss", inner.get("anon", stats.get("usage", 0)))
            values.append(int(used) / 1024**2)
    return statistics.median(values) if values else None


def print_warm(rows: list[dict], breakdowns: list[tuple[str, dict]], memory: list[tuple[str, float | None]]) -> None:
    by_name = {r["name"]: r for r in rows}
    print("\nwarm beside cold (p50 ms / p95 ms / runs/s):")
    for r in rows:
        if ", warm," not in r["name"]:
            continue
        cold = by_name.get(r["name"].replace(", warm,", ", cold,"))
        if cold:
            share = r["p50"] / cold["p50"] * 100 if cold["p50"] else float("nan")
            print(
                f"  {r['name'].replace(', warm', ''):<46} cold {cold['p50'] * 1000:6.0f} / {cold['p95'] * 1000:6.0f}"
                f"   warm {r['p50'] * 1000:6.0f} / {r['p95'] * 1000:6.0f}   warm p50 = {share:.1f}% of cold"
            )
    print("\nwhere the time went (medians, ms): queue = POST's commit to the worker's claim; claim = the")
    print("worker's claim and read; sandbox = the backend, of which program = the run's own process")
    print("(request to exit, warm only); finish = last write and publish; response = POST, event stream")
    print("and client, i.e. latency p50 minus created->finished; counted = from the publish until the")
    print("dashboards have counted the run (after the learner has it, off the path):")
    for name, parts in breakdowns:
        if parts:
            print(
                f"  {name:<46} queue {parts['queue']:6.0f}  claim {parts['claim']:5.1f}  "
                f"sandbox {parts['sandbox']:6.1f} (program {parts['program']:5.1f})  finish {parts['finish']:5.1f}  "
                f"counted {parts['counted']:5.1f}  "
                f"response {parts['response']:5.0f}  warm {parts['warm'] * 100:3.0f}%"
            )
    for backend, mib in memory:
        print(f"idle warm sandbox, {backend}: {mib:.0f} MiB" if mib else f"idle warm sandbox, {backend}: not measured")


def cpu_idle_share(seconds: float = 1.0) -> float:
    """The machine's idle share of CPU time over the next `seconds` (/proc/stat)."""

    def sample() -> tuple[int, int]:
        values = [int(v) for v in Path("/proc/stat").read_text().splitlines()[0].split()[1:]]
        return values[3] + values[4], sum(values)  # idle + iowait, all

    idle0, total0 = sample()
    time.sleep(seconds)
    idle1, total1 = sample()
    return (idle1 - idle0) / max(1, total1 - total0)


def wait_until_quiet(idle: float = 0.85, *, timeout_s: float) -> None:
    """Waits until the machine is mostly idle, so a timed part does not share the CPUs with
    what came before it (a warm pool starting spares takes a core for seconds)."""
    if timeout_s <= 0:
        return
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        share = cpu_idle_share()
        if share >= idle:
            return
    progress(f"the machine stayed busy (idle {share:.0%}); measuring anyway")


def progress(what: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {what}", flush=True)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_for(predicate, what: str, timeout_s: float = 120, proc: subprocess.Popen | None = None) -> None:
    deadline = time.monotonic() + timeout_s
    while not predicate():
        if proc is not None and proc.poll() is not None:
            raise RuntimeError(f"{what} exited ({proc.returncode})")
        if time.monotonic() > deadline:
            raise RuntimeError(f"{what} did not start")
        time.sleep(0.2)


def stop(proc: subprocess.Popen) -> None:
    if proc.poll() is not None:
        return
    os.killpg(proc.pid, signal.SIGTERM)
    try:
        proc.wait(timeout=20)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()


if __name__ == "__main__":
    sys.exit(main())
