"""The sandbox's fixed caps: the limit set every run gets on every backend (DESIGN.md, "Limits"),
and the ceiling on an exercise's wall time. Changing one is a code change, never a deployment
setting. The platform reads them through ecplatform/limits.py, beside the caps a deployment may
override; this module imports nothing, so the sandbox package stands without the platform."""

KiB, MiB, GiB = 1024, 1024**2, 1024**3

# An exercise's wall time is 1..WALL_CAP_S seconds (courses.Exercise.time_limit_s, its
# CheckConstraint, the content importer); the sandbox never runs one longer; Celery's task limits
# and the admin's wait for a validation sit above it.
WALL_CAP_S = 120
WALL_MIN_S = 1

# The sandbox's limit set, per run, for all its processes together (sandbox.base.Limits).
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
