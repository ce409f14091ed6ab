"""The project core lives in platform/ without shadowing the standard library's `platform`."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

from ecplatform.env import EnvError, env_bool

ROOT = Path(__file__).resolve().parents[2]


def test_it_keeps_the_standard_library_platform_module():
    import platform

    assert platform.system() == "Linux"
    assert Path(platform.__file__).name == "platform.py"


@pytest.mark.parametrize(
    "code",
    [
        "import platform, uuid; platform.system(); uuid.uuid4()",
        "import ecplatform.settings.dev, platform; assert platform.system()",
    ],
)
def test_it_imports_from_the_repo_root_without_pythonpath(code):
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    # python -m puts the repo root first on sys.path, as `python manage.py` and pytest do.
    out = subprocess.run(
        [sys.executable, "-c", f"import sys; sys.path.insert(0, ''); {code}"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    assert out.returncode == 0, out.stderr


def test_manage_py_runs_from_the_repo_root():
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH",)}
    env["DJANGO_SETTINGS_MODULE"] = "ecplatform.settings.dev"  # as the Makefile selects them
    out = subprocess.run(
        [sys.executable, "manage.py", "check"], cwd=ROOT, env=env, capture_output=True, text=True, check=False
    )
    assert out.returncode == 0, out.stderr
    assert "no issues" in out.stdout


def test_celery_app_loads_from_the_repo_root():
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH",)}
    out = subprocess.run(
        [sys.executable, "-m", "celery", "-A", "ecplatform", "inspect", "--help"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    assert out.returncode == 0, out.stderr


def test_production_refuses_to_start_without_a_secret_key():
    env = {k: v for k, v in os.environ.items() if k not in ("SECRET_KEY", "PYTHONPATH")}
    env["DJANGO_SETTINGS_MODULE"] = "ecplatform.settings.production"
    out = subprocess.run(
        [sys.executable, "manage.py", "check"], cwd=ROOT, env=env, capture_output=True, text=True, check=False
    )
    assert out.returncode != 0
    assert "SECRET_KEY must be set" in out.stderr


def test_production_passes_check_deploy_without_warnings():
    # A deployment's environment: nothing the test run itself sets (the browser tests allow
    # Django's async-unsafe calls, which production must never do).
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "DJANGO_ALLOW_ASYNC_UNSAFE")}
    env.update(
        DJANGO_SETTINGS_MODULE="ecplatform.settings.production",
        SECRET_KEY="k" * 20 + "Zq8!xP2@mV5#nB7$cL9%" + "w" * 20,
        DEBUG="false",
        ALLOWED_HOSTS="learn.example.org",
    )
    out = subprocess.run(
        [sys.executable, "manage.py", "check", "--deploy", "--fail-level", "WARNING"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    assert out.returncode == 0, out.stdout + out.stderr
    assert "no issues" in out.stdout


def test_env_values_are_validated_not_guessed(monkeypatch):
    monkeypatch.setenv("DEBUG", "flase")
    with pytest.raises(EnvError, match="not a boolean"):
        env_bool("DEBUG")
    monkeypatch.setenv("DEBUG", "off")
    assert env_bool("DEBUG") is False
