"""Every cap on what a learner's code may use or send, in one place, with its override rule.

Two kinds:

- Fixed caps: the sandbox's limit set (DESIGN.md, "Limits"), the same on every backend, and the
  ceiling on an exercise's wall time. Changing one is a code change (and, for WALL_CAP_S, a
  migration of the exercise table's CheckConstraint), never a deployment setting.
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

KiB, MiB, GiB = 1024, 1024**2, 1024**3

# --- fixed caps --------------------------------------------------------------------------------------

# An exercise's wall time is 1..WALL_CAP_S seconds (courses.Exercise.time_limit_s, its
# CheckConstraint, the content importer); the sandbox never runs one longer; Celery's task limits
# and the admin's wait for a validation sit above it.
WALL_CAP_S = 120
WALL_MIN_S = 1

# The sandbox's limit set, per run, for all its processes together (runner.sandbox.base.Limits).
WALL_DEFAULT_S = 20
MEMORY_BYTES = 2 * GiB
CPUS = 1.0
PROCESSES = 64
OPEN_FILES = 256
FILE_SIZE_BYTES = 10 * MiB
TMP_BYTES = 64 * MiB
TMP_INODES = 4096
SHM_BYTES = 16 * MiB
SHM_INODES = 256
# Every event kind and every byte on the protocol channel count against it; then the run stops.
OUTPUT_BYTES = 1 * MiB
IMAGES = 5
IMAGE_BYTES = 2 * MiB

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
