"""How a run ended, decided in one place: its status, which limit stopped it, who ended it, and
whether it passed.

A run passes when it succeeded (the program exited 0 and no limit stopped any of its processes)
and its check said it passed. The terminal write stores the verdict (`Run.passed`, in the same
write as the status) and every reader takes it from there: the learner's pass and progress, the
dashboards' counts, the status event the page reads, an author's check run. None of them decides
again from the parts, so none can disagree (a program that exits 0 after one of its processes was
stopped at the memory limit ends `failed`, and is no pass anywhere).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import TypedDict, Unpack

from runner.models import Run
from sandbox import verdict
from sandbox.base import RunResult
from sandbox.verdict import check_verdict

REASON_STOPPED = "stopped by learner"


class Measured(TypedDict, total=False):
    """What the sandbox measured of a run, as RunEnd's constructors pass it on."""

    exit_code: int | None
    duration_ms: int | None
    check_passed: bool | None


@dataclass(frozen=True)
class RunEnd:
    """How a run ended, as its terminal write stores it: the status; the facts code reads (which
    limit stopped it, who ended it, the check's verdict); the sentence people read; and what the
    sandbox measured."""

    status: str
    cause: str
    reason: str = ""
    limit: str = Run.Limit.NONE
    exit_code: int | None = None
    duration_ms: int | None = None
    check_passed: bool | None = None

    @property
    def passed(self) -> bool:
        """The run's verdict: it succeeded and its check passed."""
        return verdict.passed(self.status, self.check_passed)

    @classmethod
    def platform(cls, reason: str, **measured: Unpack[Measured]) -> RunEnd:
        """A run the platform ended or failed (a broken sandbox, a lost worker): status error."""
        return cls(status=Run.Status.ERROR, cause=Run.Cause.PLATFORM, reason=reason, **measured)

    @classmethod
    def stopped_by_learner(cls, **measured: Unpack[Measured]) -> RunEnd:
        return cls(status=Run.Status.FAILED, cause=Run.Cause.LEARNER, reason=REASON_STOPPED, **measured)

    @classmethod
    def from_sandbox(cls, result: RunResult, *, stop_seen: bool, events: Iterable[dict] = ()) -> RunEnd:
        """The end of a run the sandbox ran, from its result and output `events`: the sandbox's
        verdict, unless the learner pressed Stop (a run stopped while it succeeded stays a
        success)."""
        measured: Measured = {
            "exit_code": result.exit_code,
            "duration_ms": result.duration_ms,
            "check_passed": check_verdict(events),
        }
        if result.status not in verdict.STATUSES:
            return cls.platform(f"sandbox returned an unknown status {result.status!r}", **measured)
        if stop_seen and result.status != Run.Status.SUCCEEDED:
            return cls.stopped_by_learner(**measured)
        if result.status == Run.Status.ERROR:
            return cls.platform(result.reason, **measured)
        limit = result.limit if result.limit in Run.Limit.values else Run.Limit.NONE
        return cls(status=result.status, cause=Run.Cause.PROGRAM, reason=result.reason, limit=limit, **measured)


FAILURE_CHARS = 200


def failure_line(end: RunEnd, events: Sequence[dict] = ()) -> str:
    """What went wrong, in one line, as the attempt history lists it: empty for a pass; else the
    program's own error (`ename: evalue`) when no limit stopped it; else the reason a limit, the
    learner's Stop or the platform gave; else the check's message; else the exit code."""
    if end.passed:
        return ""
    error = next((event for event in events if event.get("type") == "error"), None)
    check = next((event for event in events if event.get("type") == "check"), None)
    if error is not None and end.cause == Run.Cause.PROGRAM and end.limit == Run.Limit.NONE:
        line = f"{error.get('ename', 'Error')}: {error.get('evalue', '')}".rstrip(": ")
    elif end.reason:
        line = end.reason
    elif check is not None and check.get("passed") is not True:
        line = str(check.get("message") or "The check did not pass.")
    elif end.exit_code:
        line = f"The program exited with code {end.exit_code}."
    elif end.check_passed is None and end.status == Run.Status.SUCCEEDED:
        return ""
    else:
        line = "The check did not pass."
    first = next((part.strip() for part in str(line).splitlines() if part.strip()), "")
    return first if len(first) <= FAILURE_CHARS else first[: FAILURE_CHARS - 1] + "\u2026"
