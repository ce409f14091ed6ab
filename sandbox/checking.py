"""Run code against an exercise's check in a sandbox, for authors' tools: validation on save in
the admin and `manage.py validate_course` (courses/services/validation.py).

This is the sandbox package's public way to do it, and the only one the apps use for it. It is a module of its own,
not a selector, because it reads no rows: it starts a sandbox and returns a verdict. And it is not
`run_submit` (runner/services.py), because an author's check run is no learner's Run: it keeps no
row, streams no events to a browser and counts against no learner's caps. Callers get a plain
CheckedRun and pass the sandbox they were given back in; the sandbox package's request, limit and
backend types stay behind this module, free to change.
"""

from dataclasses import dataclass, field

from sandbox import backend_get, backend_shared, verdict
from sandbox.base import Limits, RunRequest, SandboxBackend
from sandbox.harness import CHECK_BROKEN

# What check_sandbox returns and sandbox_check_run takes: treat it as opaque (its `name` aside).
CheckSandbox = SandboxBackend


def check_sandbox(name: str = "auto", *, shared: bool = False) -> CheckSandbox:
    """The sandbox backend called `name` ("auto", "docker" or "local"). `shared`: this process's
    one backend of that name, so that in a worker authors' check runs share the learners' warm
    pool (and its RUNNER_WARM_MAX) rather than keeping a pool of their own."""
    return backend_shared(name) if shared else backend_get(name)


@dataclass
class CheckedRun:
    """What one run of some code with a check left: how it ended, its verdict (as a learner's run
    of the same code would have it: sandbox/verdict.py) and the check events."""

    status: str
    reason: str
    duration_ms: int
    checks: list[dict]
    passed: bool = False
    warm: bool = False  # whether it ran in a warm sandbox
    events: list[dict] = field(default_factory=list)

    @property
    def check_broke(self) -> bool:
        """Whether the check raised instead of returning (passed, message). Learners only read that
        the check could not run; an author is told where it broke."""
        return any(check.get("message") == CHECK_BROKEN for check in self.checks)

    def failure_messages(self) -> list[str]:
        return [str(check.get("message", "")) for check in self.checks if check.get("passed") is not True]


def sandbox_check_run(
    *,
    sandbox: CheckSandbox,
    run_id: str,
    code: str,
    check_code: str,
    time_limit_s: float,
    modules: tuple[tuple[str, str], ...] = (),
    owner: str = "",
    probe_code: str = "",
    check_modules: tuple[tuple[str, str], ...] = (),
) -> CheckedRun:
    """Run `code`, then `check_code`'s check(ns) on what it left (with `probe_code`, check(ns, probed)
    on its functions' calls as well: sandbox/harness/probe.py), with the limits every run has and
    the exercise's time limit (within the cap). `modules`: the course's (name, source) modules;
    `check_modules`: the check's, when they differ (RunRequest.check_modules).
    `owner`: runs of one owner may reuse a warm sandbox; empty, each starts cold."""
    events: list[dict] = []
    request = RunRequest(
        run_id=run_id,
        code=code,
        check_code=check_code,
        probe_code=probe_code,
        limits=Limits(wall_s=float(min(time_limit_s, Limits.WALL_CAP_S))),
        modules=modules,
        check_modules=check_modules,
        owner=owner,
    )
    result = sandbox.execute(request, events.append)
    known = result.status in verdict.STATUSES
    status = result.status if known else verdict.ERROR
    return CheckedRun(
        status=status,
        reason=result.reason if known else f"sandbox returned an unknown status {result.status!r}",
        duration_ms=result.duration_ms,
        checks=[event for event in events if event.get("type") == "check"],
        passed=verdict.passed(status, verdict.check_verdict(events)),
        warm=bool(result.details.get("warm")),
        events=events,
    )
