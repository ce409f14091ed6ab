"""Sandbox backends. `backend_get(name)` returns the one a worker uses: "docker", "local", or
"auto" (docker when an engine answers and the sandbox image exists, else local)."""

from __future__ import annotations

from .base import Limits, RunRequest, RunResult, SandboxBackend

__all__ = ["Limits", "RunRequest", "RunResult", "SandboxBackend", "backend_get", "backend_problems"]


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
