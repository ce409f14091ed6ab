"""One limits module (ecplatform/limits.py): each cap has one value that every part of the platform
uses, and a deployment overrides a cap only within its rule, or the process does not start."""

import os
import subprocess
import sys

import pytest
from django.conf import settings as django_settings
from django.db import IntegrityError, transaction
from rest_framework.test import APIClient

from ecplatform import limits
from ecplatform.env import EnvError
from sandbox.base import Limits

ROOT = django_settings.BASE_DIR
OVERRIDABLE = pytest.mark.parametrize("cap", limits.OVERRIDABLE, ids=lambda cap: cap.name)


@OVERRIDABLE
def test_a_cap_not_set_in_the_environment_is_its_default(cap):
    assert limits.cap_from_env(cap, {}) == cap.default
    assert limits.cap_from_env(cap, {cap.name: " "}) == cap.default


@OVERRIDABLE
def test_a_cap_may_be_set_anywhere_within_its_range(cap):
    top = cap.high if cap.high is not None else cap.default * 1000

    assert limits.cap_from_env(cap, {cap.name: str(cap.low)}) == cap.low
    assert limits.cap_from_env(cap, {cap.name: str(top)}) == top


@OVERRIDABLE
def test_a_cap_outside_its_range_or_not_a_number_is_refused_with_the_rule(cap):
    with pytest.raises(EnvError, match=f"{cap.name}={cap.low - 1} is below its minimum of {cap.low}"):
        limits.cap_from_env(cap, {cap.name: str(cap.low - 1)})
    with pytest.raises(EnvError, match="is not an integer"):
        limits.cap_from_env(cap, {cap.name: "64k"})
    if cap.high is not None:
        with pytest.raises(EnvError, match=f"{cap.name}={cap.high + 1} is above its hard cap of {cap.high}: "):
            limits.cap_from_env(cap, {cap.name: str(cap.high + 1)})


def test_the_platform_refuses_to_start_with_a_code_limit_over_its_hard_cap():
    env = {**os.environ, "DJANGO_SETTINGS_MODULE": "ecplatform.settings.test"}
    start = [sys.executable, "-c", "import django; django.setup()"]

    refused = subprocess.run(
        start, cwd=ROOT, env={**env, "RUNNER_MAX_CODE_BYTES": str(1024**2)}, capture_output=True, text=True
    )
    raised = subprocess.run(
        start, cwd=ROOT, env={**env, "RUNNER_MAX_CODE_BYTES": str(128 * 1024)}, capture_output=True, text=True
    )

    assert refused.returncode != 0
    assert "RUNNER_MAX_CODE_BYTES=1048576 is above its hard cap of 524288" in refused.stderr
    assert raised.returncode == 0, raised.stderr


def test_the_sandbox_runs_with_the_modules_limit_set():
    assert Limits() == Limits(
        wall_s=limits.WALL_DEFAULT_S,
        memory_bytes=limits.MEMORY_BYTES,
        cpus=limits.CPUS,
        pids=limits.PROCESSES,
        open_files=limits.OPEN_FILES,
        file_size_bytes=limits.FILE_SIZE_BYTES,
        tmp_bytes=limits.TMP_BYTES,
        tmp_inodes=limits.TMP_INODES,
        shm_bytes=limits.SHM_BYTES,
        shm_inodes=limits.SHM_INODES,
        output_bytes=limits.OUTPUT_BYTES,
        images=limits.IMAGES,
        image_bytes=limits.IMAGE_BYTES,
    )
    assert Limits.WALL_CAP_S == django_settings.RUNNER_WALL_CAP_S == limits.WALL_CAP_S
    # Celery's limits catch only a worker hung outside a sandbox: the sandbox stops a run first.
    assert django_settings.CELERY_TASK_SOFT_TIME_LIMIT > limits.WALL_CAP_S


def test_the_database_holds_an_exercise_to_the_wall_cap(exercise):
    exercise.time_limit_s = limits.WALL_CAP_S
    exercise.save()

    exercise.time_limit_s = limits.WALL_CAP_S + 1
    with pytest.raises(IntegrityError), transaction.atomic():
        exercise.save()


def _save_and_run(user, exercise, code: str) -> tuple[int, int]:
    client = APIClient()
    client.force_authenticate(user)
    saved = client.put(f"/api/exercises/{exercise.pk}/code/", {"code": code}, format="json")
    run = client.post("/api/runs/", {"exercise": exercise.pk, "code": code}, format="json")
    return saved.status_code, run.status_code


def test_code_a_learner_may_run_they_may_save_and_no_more(exercise, learner, settings):
    code = "x = 1\n" + "#" * (100 * 1024) + "\n"  # 100 KiB: over the default of 64 KiB

    assert _save_and_run(learner, exercise, code) == (400, 400)
    settings.RUNNER_MAX_CODE_BYTES = 128 * 1024  # as RUNNER_MAX_CODE_BYTES=131072 in the environment sets it
    assert _save_and_run(learner, exercise, code) == (200, 201)
    assert _save_and_run(learner, exercise, code + "#" * (28 * 1024)) == (400, 400)
