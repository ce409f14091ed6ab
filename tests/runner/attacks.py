"""The attack battery as data: learner programs that try to break out of, or bring down, a sandbox,
each with what a contained run looks like. The backend tests (test_sandbox_attacks.py) run them
through `backend.execute`; the API tests submit the same programs as a learner.

Each case has `expect(status, reason, outputs, exit_code)`, which raises AssertionError when the
run was not contained or did not end with a clear status and reason. Programs print "LEAK ..."
for anything they should not have managed, so a failing assertion shows what got out. Where a
case needs something around the run: `before` is a program run first (same backend, as another
learner), and `marker` is a string that no host process may carry after the run.
"""

from __future__ import annotations

from tests.runner.attack_kit import MARKER, Attack
from tests.runner.attacks_containment import CONTAINMENT
from tests.runner.attacks_properties import PROPERTIES

# The kit the cases are made of is attack_kit.py; the cases, by kind, attacks_containment.py and
# attacks_properties.py.
ATTACKS: list[Attack] = [*CONTAINMENT, *PROPERTIES]
ATTACKS_BY_NAME = {a.name: a for a in ATTACKS}
__all__ = ["ATTACKS", "ATTACKS_BY_NAME", "MARKER", "Attack"]
