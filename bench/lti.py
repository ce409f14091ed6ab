#!/usr/bin/env python
"""LTI from outside: a launch's time and a score post's time, beside a plain login, in one run.

It starts what it measures itself (bench/run_latency.py's set-up: a fresh database, the demo course,
uvicorn) and the tests' LTI platform (tests/lti/platform.py: lti1p3platform over HTTP, in this
process), registers the platform, places a graded link to Part 2, and measures, `--rounds` times
each, p50 and p95 in ms:

- launch: the whole OIDC round trip as a browser makes it, with a fresh browser each time: the
  platform's start, the tool's login initiation, the platform's authorization (a signed id_token),
  the launch post (its checks, the person, the class's cohort), and the landing page (Part 2);
- plain login (baseline): the login page, the username and password post, and the same Part 2 page;
- score post: one score to the platform's line item (lti.services.scores.score_send: a kept score,
  its claim, the token from the cache, the POST, its record), after a first post that fetched the
  platform's access token.

and the launch as a ratio to the plain login.

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/easycompilers REDIS_URL=redis://127.0.0.1:6379/0 \\
        .venv/bin/python bench/lti.py [--rounds 100]
    .venv/bin/python bench/lti.py --embedded       # SQLite, as `make run`

The browser's cookie jar sends Secure cookies to http://127.0.0.1, as Chromium does for loopback
(the tool's LTI cookies are Secure; production serves HTTPS).
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path
from urllib.parse import urljoin

import requests

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(ROOT))
from run_latency import Bench, bench_from_env, percentile  # noqa: E402

from tests.lti.platform import LEARNER, TestPlatform, launch_form  # noqa: E402

REGISTER = """
import json
from courses.models import Course
from lti.models import Deployment, Platform
platform = Platform.objects.create(name="Bench LMS", issuer={issuer!r}, client_id={client_id!r},
    auth_login_url={issuer!r} + "/auth", token_url={issuer!r} + "/token", keyset_url={issuer!r} + "/jwks")
Deployment.objects.create(platform=platform, deployment_id={deployment!r})
course = Course.objects.get(chapters__exercises__id={exercise})
platform.courses.add(course)
part = course.chapters.get(number=2)
print(json.dumps({{"course": course.slug, "part": part.number, "page": f"/courses/{{course.slug}}/{{part.slug}}/"}}))
"""

SCORE_POSTS = """
import json, time
from lti.models import Identity, ResourceLink
from lti.services.scores import Score, score_keep, score_send
link = ResourceLink.objects.get(link_id="bench-link")
user = Identity.objects.get(subject="bench-learner").user
times = []
for i in range({rounds} + 1):
    post = score_keep(link=link, user=user, score=Score(i % 7, 7, "InProgress", "Pending"))
    started = time.perf_counter()
    outcome = score_send(post_id=post.pk)
    times.append((time.perf_counter() - started) * 1000)
    assert outcome == "sent", outcome
print(json.dumps(times))
"""


class LoopbackJar(requests.cookies.RequestsCookieJar):
    """A jar that sends Secure cookies to the loopback over plain HTTP, as browsers do for localhost.
    (requests copies a session's cookies into a fresh jar for each request, so a cookie policy set on
    the session's jar would not hold: the cookies themselves lose the flag.)"""

    def set_cookie(self, cookie, *args, **kwargs):
        cookie.secure = False
        return super().set_cookie(cookie, *args, **kwargs)


def browser() -> requests.Session:
    session = requests.Session()
    session.cookies = LoopbackJar()
    return session


def launch_once(platform: TestPlatform, *, user_id: str, link_id: str, landing: str) -> float:
    session = browser()
    started = time.perf_counter()
    login = session.get(platform.start_url(user_id=user_id, link_id=link_id), timeout=30)  # platform, then tool
    login.raise_for_status()
    action, fields = launch_form(login.text)  # the platform's auto-posting form
    landed = session.post(action, data=fields, timeout=30)  # the launch, then the landing page
    elapsed = (time.perf_counter() - started) * 1000
    landed.raise_for_status()
    assert landed.url.endswith(landing), f"the launch landed on {landed.url}: {landed.text[-1500:]}"
    return elapsed


def login_once(web_url: str, *, landing: str) -> float:
    session = browser()
    started = time.perf_counter()
    page = session.get(f"{web_url}/accounts/login/?next={landing}", timeout=30)
    page.raise_for_status()
    landed = session.post(
        page.url,
        data={
            "username": "bench0",
            "password": "bench-pw-1",
            "next": landing,
            "csrfmiddlewaretoken": session.cookies["csrftoken"],
        },
        headers={"Referer": page.url},
        timeout=30,
    )
    elapsed = (time.perf_counter() - started) * 1000
    landed.raise_for_status()
    assert landed.url == urljoin(web_url, landing), f"the login landed on {landed.url}"
    return elapsed


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=100, help="launches, logins and score posts each (100)")
    parser.add_argument("--embedded", action="store_true", help="SQLite in a folder of its own, as `make run`")
    parser.add_argument("--database", default="ec_bench_lti", help="database to (re)create for the benchmark")
    args = parser.parse_args()
    chosen = bench_from_env(embedded=args.embedded, database=args.database, prefix="lti-bench-")
    if chosen is None:
        print("bench/lti.py needs DATABASE_URL (PostgreSQL), or --embedded", file=sys.stderr)
        return 2
    bench, setup = chosen
    platform = TestPlatform().start()
    try:
        bench.prepare(learners=1)
        platform.tool(bench.web_url)
        script = REGISTER.format(
            issuer=platform.url,
            client_id=platform.client_id,
            deployment=platform.deployment_id,
            exercise=bench.exercise_id,
        )
        made = json.loads(bench._manage("shell", "-c", script, capture=True).strip().splitlines()[-1])
        platform.link_add(
            link_id="bench-link", custom={"course": made["course"], "part": str(made["part"])}, graded=True
        )
        platform.person("bench-learner", "Bench Learner", LEARNER)
        for n in range(args.rounds):
            platform.person(f"learner-{n}", f"Learner {n}", LEARNER)
        figures = measure(bench, platform, made, rounds=args.rounds)
    finally:
        platform.stop()
        bench.close(keep_db=False)
    report(figures, setup=setup, rounds=args.rounds)
    return 0


def measure(bench: Bench, platform: TestPlatform, made: dict, *, rounds: int) -> dict[str, list[float]]:
    landing = made["page"]
    # Warm both paths (the platform's key set fetched and kept, the pages' first render), then
    # interleave so drift touches each alike. Half the launches are a person's first (an account,
    # an enrolment, the cohort's membership), half a return.
    launch_once(platform, user_id="bench-learner", link_id="bench-link", landing=landing)
    login_once(bench.web_url, landing=landing)
    figures: dict[str, list[float]] = {"launch (first of a person)": [], "launch (returning)": [], "plain login": []}
    for n in range(rounds):
        first = n % 2 == 0
        who = f"learner-{n}" if first else "bench-learner"
        name = "launch (first of a person)" if first else "launch (returning)"
        figures[name].append(launch_once(platform, user_id=who, link_id="bench-link", landing=landing))
        figures["plain login"].append(login_once(bench.web_url, landing=landing))
    posts = json.loads(
        bench._manage("shell", "-c", SCORE_POSTS.format(rounds=rounds), capture=True).strip().splitlines()[-1]
    )
    figures["score post (first: + token)"] = posts[:1]
    figures["score post"] = posts[1:]
    assert len(platform.posts_for("bench-link", "bench-learner")) == rounds + 1
    return figures


def report(figures: dict[str, list[float]], *, setup: str, rounds: int) -> None:
    baseline = statistics.median(figures["plain login"])
    print(f"\n{setup}: {rounds} launches (half first, half returning), logins and score posts")
    print(f"{'':30} {'n':>4} {'p50 ms':>8} {'p95 ms':>8} {'p50 / login':>12}")
    for name, values in figures.items():
        p50 = statistics.median(values)
        p95 = percentile(values, 0.95) if len(values) > 1 else p50
        print(f"{name:30} {len(values):4} {p50:8.1f} {p95:8.1f} {p50 / baseline:12.2f}")


if __name__ == "__main__":
    sys.exit(main())
