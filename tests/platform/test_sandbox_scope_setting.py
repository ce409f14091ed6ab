"""RUNNER_SANDBOX_SCOPE names a deployment's sandboxes on a shared Docker engine (a container label's
value): a value that cannot be one stops the platform at start, saying the rule."""

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def start(scope: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "DJANGO_SETTINGS_MODULE": "ecplatform.settings.dev", "RUNNER_SANDBOX_SCOPE": scope}
    code = "import django; django.setup(); from django.conf import settings; print(settings.RUNNER_SANDBOX_SCOPE)"
    return subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True)


def test_a_scope_that_cannot_be_a_label_value_stops_the_platform_at_start():
    refused = start("staging=1")
    assert refused.returncode != 0
    assert "RUNNER_SANDBOX_SCOPE='staging=1': letters, digits, '_', '.' and '-', at most 63" in refused.stderr
    assert start("").returncode != 0


def test_a_deployment_names_its_sandboxes():
    started = start("staging-2")
    assert started.returncode == 0, started.stderr
    assert started.stdout.strip() == "staging-2"
