"""What the tests of the dashboards' counts read from outside: the course dashboard's API as an
instructor sees it, polled until it shows what a test waits for."""

import time

import requests


def dashboard_read(server, token: str, course) -> dict:
    """The course dashboard (GET /api/teach/courses/<slug>/dashboard/) from a web server a test started."""
    return requests.get(
        f"{server.url}/api/teach/courses/{course.slug}/dashboard/",
        headers={"Authorization": f"Token {token}"},
        timeout=30,
    ).json()


def wait_until(what, predicate, timeout_s: float = 60):
    """The first true value of `predicate`, polled; the timeout only stops a hung test."""
    deadline = time.monotonic() + timeout_s
    while not (value := predicate()):
        if time.monotonic() > deadline:
            raise AssertionError(f"gave up waiting for {what}")
        time.sleep(0.05)
    return value
