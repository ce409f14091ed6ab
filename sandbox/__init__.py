"""Sandbox backends. `backend_get(name)` returns the one a worker uses: "docker", "local", or
"auto" (docker when an engine answers and the sandbox image exists, else local)."""

from __future__ import annotations

import threading

from .base import Limits, RunRequest, RunResult, SandboxBackend

__all__ = ["Limits", "RunRequest", "RunResult", "SandboxBackend", "backend_get", "backend_problems", "backend_shared"]


def backend_get(name: str = "auto") -> SandboxBackend:
    if name == "local":
        from .local import LocalBackend

        return LocalBackend()
    if name == "docker":
        from .docker import DockerBackend

        return DockerBackend()
    if name == "auto":
        from .docker import DockerBackend

        if DockerBackend.available():
            return DockerBackend()
        from .local import LocalBackend

        return LocalBackend()
    raise ValueError(f"unknown sandbox backend {name!r}: choose auto, docker or local")


_shared: dict[str, SandboxBackend] = {}
_shared_lock = threading.Lock()


def backend_shared(name: str = "auto") -> SandboxBackend:
    """This process's one backend of that name. Its warm pool lives on it, so every user in a
    worker (learners' runs, authors' validations) shares one pool and one RUNNER_WARM_MAX."""
    with _shared_lock:
        if name not in _shared:
            _shared[name] = backend_get(name)
        return _shared[name]


def backend_problems(name: str = "auto") -> list[str]:
    """What keeps the named backend from running learners' code with every limit enforced, in
    plain sentences (empty: nothing). Cheap enough for a page view: it starts no sandbox."""
    if name in ("auto", "docker"):
        from .docker import DockerBackend

        problem = DockerBackend.unavailable_reason()
        if not problem:
            return []
        if name == "docker":
            return [problem]
    from .local import LocalBackend

    return LocalBackend.problems()
