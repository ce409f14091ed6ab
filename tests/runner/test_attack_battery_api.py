"""The attack battery (tests/runner/attacks.py) submitted through the API as a learner, run by a
real worker on each sandbox backend, answered by the ASGI web app. Each run must end contained,
with a clear status and reason, and the web app and the worker must stay healthy throughout.

The worker runs as deployed, with warm sandboxes on, and each attack runs in the attacker's own warm
sandbox (the test waits until the attacker has one). The same battery runs in cold sandboxes straight
against each backend in test_sandbox_attacks.py."""

import math
import subprocess
import threading
import time
import uuid

import pytest
import requests
from django.db import connection
from django.db.models import Count, Q
from rest_framework.authtoken.models import Token

from accounts.models import User
from runner.models import Run
from tests.runner.attacks import ATTACKS, MARKER

pytestmark = pytest.mark.services


class Learner:
    """A learner talking to the web app over HTTP with a token."""

    def __init__(self, web, user):
        self.web = web
        self.user = user
        self.headers = {"Authorization": f"Token {Token.objects.create(user=user).key}"}

    def submit(self, exercise, code: str) -> requests.Response:
        return requests.post(
            f"{self.web.url}/api/runs/", json={"exercise": exercise.id, "code": code}, headers=self.headers, timeout=30
        )

    def get(self, path: str) -> requests.Response:
        return requests.get(f"{self.web.url}{path}", headers=self.headers, timeout=30)

    def wait(self, run_id, timeout_s: float = 180) -> dict:
        deadline = time.monotonic() + timeout_s
        while True:
            body = self.get(f"/api/runs/{run_id}/").json()
            if body["status"] not in ("queued", "running"):
                return body
            assert time.monotonic() < deadline, f"run {run_id} did not end: {body}"
            time.sleep(0.2)

    def run(self, exercise, code: str) -> dict:
        response = self.submit(exercise, code)
        assert response.status_code == 201, response.text
        return self.wait(response.json()["id"])


def warm_up(learner: Learner, exercise) -> None:
    """Runs as the learner until a run goes warm: the learner then has a warm sandbox of their
    own, which their next run takes."""
    for _ in range(25):
        body = learner.run(exercise, "print('warming up')")
        if Run.objects.get(pk=body["id"]).warm:
            return
        time.sleep(2)  # a spare is starting
    raise AssertionError("no warm sandbox became ready for the learner")


@pytest.fixture
def learner_over_http(web_server, make_learner):
    return lambda: Learner(web_server, make_learner())


def processes_with(marker: str) -> list[str]:
    out = subprocess.run(["ps", "-eww", "-o", "pid=,args="], capture_output=True, text=True, check=True).stdout
    return [line for line in out.splitlines() if marker in line and "ps -eww" not in line]


@pytest.mark.parametrize("attack", ATTACKS, ids=[a.name for a in ATTACKS])
def test_it_contains_the_attack_submitted_through_the_api(any_backend_worker, learner_over_http, make_exercise, attack):
    exercise = make_exercise(time_limit_s=math.ceil(attack.wall_s), check_code=attack.check)
    if attack.before:
        first = learner_over_http().run(exercise, attack.before)
        assert first["status"] == "succeeded", first

    learner = learner_over_http()
    warm_up(learner, exercise)
    body = learner.run(exercise, attack.code)

    assert Run.objects.get(pk=body["id"]).warm is True, "the attack ran cold"
    attack.expect(body["status"], body["reason"], body["outputs"], body["exit_code"])
    assert body["finished_at"] and body["duration_ms"] is not None
    if attack.marker:
        assert processes_with(attack.marker) == [], "a process of the run outlived it"
    after = learner.run(exercise, "print('fine')")
    assert (after["status"], after["stdout"]) == ("succeeded", "fine\n"), after


def test_it_keeps_one_learners_code_and_files_from_another(any_backend_worker, learner_over_http, make_exercise):
    secret = f"ecsecret{uuid.uuid4().hex[:12]}"
    exercise = make_exercise(time_limit_s=10)
    owner, snoop = learner_over_http(), learner_over_http()
    owner_code = (
        f"SECRET = '{secret}'\nopen('/tmp/mine', 'w').write(SECRET)\n"
        "import time\nprint('ready', flush=True)\ntime.sleep(8)\n"
    )
    owner_run = owner.submit(exercise, owner_code).json()["id"]
    deadline = time.monotonic() + 60
    while "ready" not in owner.get(f"/api/runs/{owner_run}/").json()["stdout"]:
        assert time.monotonic() < deadline
        time.sleep(0.2)

    snoop_code = f"""
import os
needle = {secret!r}.encode()
paths = [f"/proc/{{p}}/{{f}}" for p in os.listdir("/proc") if p.isdigit() for f in ("cmdline", "environ")]
for root in ("/tmp", "/var/tmp", "/dev/shm"):
    for dirpath, _, filenames in os.walk(root):
        paths += [os.path.join(dirpath, name) for name in filenames]
seen = []
for path in paths:
    try:
        with open(path, "rb") as f:
            if needle in f.read(1 << 20):
                seen.append(path)
    except OSError:
        pass
print(("LEAK", seen) if seen else "OK nothing of the other run", len(paths), flush=True)
"""
    snooped = snoop.run(exercise, snoop_code)

    assert snooped["status"] == "succeeded", snooped
    assert "OK nothing of the other run" in snooped["stdout"]
    assert secret not in str(snooped["outputs"])
    assert owner.wait(owner_run)["status"] == "succeeded"


def test_it_holds_the_caps_in_a_burst_of_20_runs_from_two_learners(
    any_backend_worker, learner_over_http, make_exercise
):
    exercise = make_exercise(time_limit_s=10)
    learners = [learner_over_http(), learner_over_http()]
    accepted: dict[int, list[str]] = {x.user.pk: [] for x in learners}
    refusals: list[requests.Response] = []
    most_active = {x.user.pk: 0 for x in learners}
    done = threading.Event()

    def presses_run(learner: Learner) -> None:
        while len(accepted[learner.user.pk]) < 10:
            # Each run lasts a second, so a learner's third quick press meets the cap however fast
            # a warm sandbox is (a bare print ends before the next POST arrives).
            code = f"import time\ntime.sleep(1)\nprint({len(accepted[learner.user.pk])})"
            response = learner.submit(exercise, code)
            if response.status_code == 201:
                accepted[learner.user.pk].append(response.json()["id"])
            else:
                assert response.status_code == 429, response.text
                refusals.append(response)
                time.sleep(0.3)

    def watch_caps() -> None:
        active = Count("runs", filter=Q(runs__status__in=Run.ACTIVE))
        try:
            while not done.is_set():
                for row in User.objects.filter(pk__in=most_active).annotate(active=active):
                    most_active[row.pk] = max(most_active[row.pk], row.active)
                time.sleep(0.05)
        finally:
            # A thread's connection is its own to give back to the pool.
            connection.close()

    watcher = threading.Thread(target=watch_caps)
    watcher.start()
    try:
        threads = [threading.Thread(target=presses_run, args=(x,)) for x in learners]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(timeout=600)
        statuses = [x.wait(run_id)["status"] for x in learners for run_id in accepted[x.user.pk]]
    finally:
        done.set()
        watcher.join()

    assert statuses == ["succeeded"] * 20
    assert refusals, "twenty quick presses meet the cap"
    assert all(int(r.headers["Retry-After"]) >= 1 for r in refusals)
    assert max(most_active.values()) <= 2


def test_it_keeps_the_web_app_and_the_worker_healthy_after_the_battery(any_backend_worker, learner_over_http):
    learner = learner_over_http()

    assert learner.get("/api/exercises/").status_code == 200
    assert any_backend_worker.ping()
    assert any_backend_worker.alive()
    assert processes_with(MARKER) == []
