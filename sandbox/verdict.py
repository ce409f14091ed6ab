"""Whether a sandbox's run passed, from what the sandbox returned: one rule for a learner's run
(runner/verdict.py stores it on the Run) and an author's check run (checking.py).

A run passes when it succeeded (the program exited 0 and no limit stopped any of its processes)
and its check said it passed.
"""

from __future__ import annotations

from collections.abc import Iterable

# The statuses a sandbox ends a run in (RunResult.status): the Run's terminal statuses.
SUCCEEDED, FAILED, TIMED_OUT, ERROR = "succeeded", "failed", "timed_out", "error"
STATUSES = (SUCCEEDED, FAILED, TIMED_OUT, ERROR)


def check_verdict(events: Iterable[dict]) -> bool | None:
    """The check's own verdict from a run's output events: True or False from its check event,
    None when the run left none (it never got to the check, or the exercise has none)."""
    check = next((event for event in events if event.get("type") == "check"), None)
    return None if check is None else check.get("passed") is True


def passed(status: str, check_passed: bool | None) -> bool:
    return status == SUCCEEDED and check_passed is True
