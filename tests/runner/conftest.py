"""Sandbox backends as fixtures. A backend whose parts are missing here (bubblewrap, a Docker
engine, the sandbox image) skips the test, or fails it under CI (REQUIRE_SERVICES=1)."""

import shutil
import subprocess

import pytest

from sandbox import backend_get
from sandbox.base import Limits, RunRequest
from tests.services import service_missing

BACKENDS = ("local", "docker")


def backend_or_skip(name: str):
    if name == "local":
        if not shutil.which("bwrap"):
            service_missing("bubblewrap (bwrap) is not installed")
    else:
        from sandbox.docker import DockerBackend

        problem = DockerBackend.unavailable_reason()
        if problem:
            service_missing(problem)
    return backend_get(name)


@pytest.fixture(scope="session", params=BACKENDS)
def sandbox_backend(request):
    """Each backend in turn: tests that take this fixture run once per backend."""
    return backend_or_skip(request.param)


@pytest.fixture(scope="session")
def local_backend():
    return backend_or_skip("local")


@pytest.fixture(scope="session")
def docker_backend():
    return backend_or_skip("docker")


class Run:
    """One finished sandbox run as a test sees it."""

    def __init__(self, result, events):
        self.result = result
        self.status = result.status
        self.reason = result.reason
        self.exit_code = result.exit_code
        self.outputs = events

    def text(self, name: str = "stdout") -> str:
        return "".join(e["text"] for e in self.outputs if e["type"] == "stream" and e["name"] == name)

    def of_type(self, kind: str) -> list:
        return [e for e in self.outputs if e["type"] == kind]


@pytest.fixture
def run_code():
    """run_code(backend, code, check="", wall_s=10) -> Run, straight through backend.execute."""
    counter = iter(range(1, 100_000))

    def run(backend, code: str, *, check: str = "", wall_s: float = 10.0, **limits) -> Run:
        events: list = []
        request = RunRequest(
            run_id=f"test-{next(counter)}",
            code=code,
            check_code=check,
            limits=Limits(wall_s=wall_s, **limits),
        )
        result = backend.execute(request, events.append)
        return Run(result, events)

    return run


def host_processes_with(marker: str) -> list[str]:
    # -ww: full command lines whatever COLUMNS says, or a marker at the end could be cut off.
    out = subprocess.run(["ps", "-eww", "-o", "pid=,args="], capture_output=True, text=True, check=True).stdout
    return [line for line in out.splitlines() if marker in line and "ps -eww" not in line]
