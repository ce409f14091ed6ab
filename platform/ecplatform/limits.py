"""Every cap on what a learner's code may use or send, in one place, with its override rule.

Two kinds:

- Fixed caps: the sandbox's limit set (DESIGN.md, "Limits"), the same on every backend, and the
  ceiling on an exercise's wall time, defined by the sandbox package (sandbox/limits.py) and
  re-exported here. Changing one is a code change (and, for WALL_CAP_S, a migration of the
  exercise table's CheckConstraint), never a deployment setting.
- Overridable caps (`OVERRIDABLE`): a default, overridden by the environment variable of the same
  name within [low, high]. Settings read them through `cap_from_env`, so a value outside its
  range stops the process at start with a message that says the rule, rather than running with a
  limit nothing else agrees with.

courses/, runner/ and the settings import this module; it imports nothing of theirs.
"""

import os
from collections.abc import Mapping
from dataclasses import dataclass

from ecplatform.env import EnvError
from sandbox.limits import (  # noqa: F401 - the sandbox's fixed caps, read here with the rest
    CPUS,
    FILE_SIZE_BYTES,
    IMAGE_BYTES,
    IMAGES,
    MEMORY_BYTES,
    OPEN_FILES,
    OUTPUT_BYTES,
    PROCESSES,
    SHM_BYTES,
    SHM_INODES,
    TMP_BYTES,
    TMP_INODES,
    WALL_CAP_S,
    WALL_DEFAULT_S,
    WALL_MIN_S,
    GiB,
    KiB,
    MiB,
)

# --- overridable caps ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class Cap:
    """A cap a deployment may set, through the environment variable `name`, within [low, high]
    (high None: no ceiling)."""

    name: str
    default: int
    low: int
    high: int | None
    why_high: str = ""

    def check(self, value: int) -> int:
        if value < self.low:
            raise EnvError(f"{self.name}={value} is below its minimum of {self.low}")
        if self.high is not None and value > self.high:
            raise EnvError(f"{self.name}={value} is above its hard cap of {self.high}: {self.why_high}")
        return value


# A program, the same cap for running it and for saving it (a learner must never be able to run
# code they cannot save, or save code they cannot run). The ceiling keeps a request that carries
# the most code, escaped as JSON (up to 3 bytes for each byte of code), under Django's
# DATA_UPLOAD_MAX_MEMORY_SIZE (2.5 MB).
CODE_BYTES = Cap(
    "RUNNER_MAX_CODE_BYTES",
    default=64 * KiB,
    low=1 * KiB,
    high=512 * KiB,
    why_high="a request carrying that much code escaped as JSON must fit Django's 2.5 MB request limit",
)
# The stored copies of a run's stdout and stderr, in characters: never more than the sandbox lets
# a run print, so it may only be lowered.
TEXT_CHARS = Cap(
    "RUNNER_TEXT_CAP",
    default=OUTPUT_BYTES,
    low=1 * KiB,
    high=OUTPUT_BYTES,
    why_high=f"a run cannot print more than the sandbox's output limit of {OUTPUT_BYTES} bytes",
)
# Per learner: runs queued or running at once, runs started in any 60 seconds, event streams open.
ACTIVE_RUNS_PER_LEARNER = Cap("RUNNER_MAX_ACTIVE_PER_LEARNER", default=2, low=1, high=None)
RUNS_PER_MINUTE = Cap("RUNNER_MAX_RUNS_PER_MINUTE", default=30, low=1, high=None)
STREAMS_PER_LEARNER = Cap("RUNNER_MAX_STREAMS_PER_LEARNER", default=8, low=1, high=None)

OVERRIDABLE = (CODE_BYTES, TEXT_CHARS, ACTIVE_RUNS_PER_LEARNER, RUNS_PER_MINUTE, STREAMS_PER_LEARNER)


def cap_from_env(cap: Cap, environ: Mapping[str, str] = os.environ) -> int:
    """The cap's value: its environment variable if set (an integer within the cap's range), else
    its default. Raises EnvError, which stops the settings from loading, for anything else."""
    raw = environ.get(cap.name)
    if raw is None or raw.strip() == "":
        return cap.default
    try:
        value = int(raw)
    except ValueError as exc:
        raise EnvError(f"{cap.name}={raw!r} is not an integer") from exc
    return cap.check(value)
