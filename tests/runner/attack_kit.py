"""What every attack in the battery (attacks.py) is made of: the `Attack` case, the session's
marker, and the checks that say whether a run was contained (`contained`, `no_leak`) plus the
`attempt` helper that attack programs use to report what they got away with.
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
SETTINGS_FILE = REPO / "platform" / "ecplatform" / "settings" / "base.py"
DOTENV = REPO / ".env"
# Unique per test session, so a leftover of an earlier session cannot fake a pass or a failure.
MARKER = f"ecmark{uuid.uuid4().hex[:12]}"
# Wall limit for attack runs: short, so the battery is quick; Limits are per request.
ATTACK_WALL_S = 5.0
SECRET_NAMES = ("SECRET_KEY", "DATABASE_URL", "REDIS_URL", "EMAIL_HOST_PASSWORD")

Expect = Callable[[str, str, list, "int | None"], None]


@dataclass(frozen=True)
class Attack:
    name: str
    code: str
    expect: Expect
    before: str = ""
    marker: str = ""
    wall_s: float = ATTACK_WALL_S
    # The exercise's check the program runs under ("" for none).
    check: str = ""


def text(outputs: list, name: str) -> str:
    return "".join(e["text"] for e in outputs if e.get("type") == "stream" and e.get("name") == name)


def all_text(outputs: list) -> str:
    return "\n".join(str(e) for e in outputs)


def no_leak(outputs: list) -> None:
    out = text(outputs, "stdout") + text(outputs, "stderr")
    assert "LEAK" not in out, f"the program got out: {out[-2000:]}"
    values = [os.environ[name] for name in SECRET_NAMES if len(os.environ.get(name, "")) >= 8]
    everything = all_text(outputs)
    for value in values:
        assert value not in everything, "a host secret reached the program's output"


def contained(*, status: str | tuple = "succeeded", reason: str | tuple = "", says: str = "") -> Expect:
    """The run ended with `status` (one or several), its reason mentions `reason` (or one of
    several), its stdout says `says`, and nothing leaked."""
    statuses = (status,) if isinstance(status, str) else status
    reasons = (reason,) if isinstance(reason, str) else reason

    def expect(st: str, why: str, outputs: list, exit_code: int | None) -> None:
        no_leak(outputs)
        assert st in statuses, f"status {st!r} ({why!r}), expected {statuses}; output: {all_text(outputs)[-1500:]}"
        if st != "succeeded":
            assert why, "a run that did not succeed must say why"
        if any(reasons):
            assert any(r in why for r in reasons), f"reason {why!r} mentions none of {reasons!r}"
        if says:
            assert says in text(outputs, "stdout"), f"stdout lacks {says!r}: {text(outputs, 'stdout')[-1500:]}"

    return expect


def blocked(label: str) -> str:
    """Learner-code helper `attempt(what, fn)`: prints OK when fn fails, LEAK when it works."""
    return """
def attempt(what, fn):
    try:
        got = fn()
    except BaseException as e:
        print("OK", what, "blocked:", type(e).__name__)
        return
    print("LEAK", what, repr(got)[:200])
"""
