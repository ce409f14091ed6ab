"""Every entry point a server starts defaults to the production settings (issue 11, item 6): a
container, a `manage.py` typed on a server, the ASGI/WSGI apps and the Celery app. Development
settings are asked for explicitly (the Makefile does, for `make run`), tests keep theirs."""

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]
SECRET = "k" * 20 + "Zq8!xP2@mV5#nB7$cL9%" + "w" * 20


def bare_env(**extra) -> dict:
    """The environment of a server where nobody chose a settings module."""
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "DJANGO_SETTINGS_MODULE", "SECRET_KEY")}
    env.update(extra)
    return env


def run(argv, env) -> subprocess.CompletedProcess:
    return subprocess.run(argv, cwd=ROOT, env=env, capture_output=True, text=True, check=False)


def test_manage_py_defaults_to_production_and_refuses_without_a_secret_key():
    out = run([sys.executable, "manage.py", "check"], bare_env())
    assert out.returncode != 0
    assert "SECRET_KEY must be set" in out.stderr


@pytest.mark.parametrize("module", ["ecplatform.asgi", "ecplatform.wsgi", "ecplatform.celery"])
def test_server_entry_points_default_to_production(module):
    code = (
        f"import sys; sys.path[:0] = ['', 'platform']; import {module}; from django.conf import settings; "
        "print(settings.SETTINGS_MODULE, settings.DEBUG)"
    )
    out = run([sys.executable, "-c", code], bare_env(SECRET_KEY=SECRET, ALLOWED_HOSTS="learn.example.org"))
    assert out.returncode == 0, out.stderr
    assert out.stdout.split()[-2:] == ["ecplatform.settings.production", "False"]


def test_the_image_runs_production_settings_by_default():
    dockerfile = (ROOT / "Dockerfile").read_text()
    assert re.search(r"^\s*DJANGO_SETTINGS_MODULE=ecplatform\.settings\.production\b", dockerfile, re.M)
    assert "settings.dev" not in dockerfile


def test_compose_runs_production_settings_and_trusts_no_forwarded_header_from_anyone():
    compose = yaml.safe_load((ROOT / "docker-compose.yml").read_text())
    for name, service in compose["services"].items():
        if "easycompilers-app" in service.get("image", ""):
            assert service["environment"]["DJANGO_SETTINGS_MODULE"] == "ecplatform.settings.production", name
    command = compose["services"]["web"]["command"]
    allowed = re.search(r"--forwarded-allow-ips\s+'([^']*)'", command)
    assert allowed, command
    assert "*" not in allowed.group(1)
    assert "TRUSTED_PROXIES" in allowed.group(1)


def test_the_makefile_selects_the_development_settings_for_make_run():
    out = run(
        ["make", "--no-print-directory", "--eval", "show-settings: ; @echo $$DJANGO_SETTINGS_MODULE", "show-settings"],
        bare_env(),
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "ecplatform.settings.dev"


def test_tests_keep_the_test_settings():
    from django.conf import settings

    assert settings.SETTINGS_MODULE == "ecplatform.settings.test"
