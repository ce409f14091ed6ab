"""What `make run` says when it starts serving, and the degraded parts on the admin's home page."""

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def no_bwrap(tmp_path, monkeypatch, settings):
    """The local backend on a machine without bubblewrap: a PATH with nothing on it."""
    settings.RUNNER_BACKEND = "local"
    monkeypatch.setenv("PATH", str(tmp_path))


@pytest.fixture
def redis_broker(settings):
    settings.CELERY_BROKER_URL = "redis://127.0.0.1:6379/0"


def test_the_admin_home_warns_staff_when_learners_code_cannot_run(client, admin_user, no_bwrap, redis_broker):
    client.force_login(admin_user)
    page = client.get("/admin/").content.decode()
    assert "Degraded: bubblewrap (bwrap) is not installed" in page
    assert "apt-get install bubblewrap" in page


def test_the_admin_home_warns_when_runs_go_through_a_polling_broker(client, admin_user, settings):
    settings.CELERY_BROKER_URL = "filesystem://"
    client.force_login(admin_user)
    assert "Degraded: no Redis" in client.get("/admin/").content.decode()


def test_the_admin_home_says_nothing_when_nothing_is_degraded(client, admin_user, settings, redis_broker):
    from sandbox import backend_problems

    settings.RUNNER_BACKEND = "local"
    if not shutil.which("bwrap") or backend_problems("local"):
        pytest.skip("the local backend is degraded on this machine")
    client.force_login(admin_user)
    page = client.get("/admin/")
    assert page.status_code == 200
    assert "Degraded" not in page.content.decode()


def test_make_run_ends_with_the_url_the_demo_logins_and_what_it_runs_on(tmp_path):
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "DATABASE_URL", "REDIS_URL")}
    env.update(DJANGO_SETTINGS_MODULE="ecplatform.settings.dev", VAR_DIR=str(tmp_path), RUNNER_BACKEND="local")
    env["PATH"] = str(tmp_path)  # no bubblewrap
    out = subprocess.run(
        [sys.executable, "-m", "frontend.status", "http://127.0.0.1:8000/"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    assert out.returncode == 0, out.stderr
    text = out.stdout
    assert "EasyCompilers is serving on http://127.0.0.1:8000/" in text
    assert "learner / learner-demo-pass" in text
    assert "admin / admin-demo-pass" in text
    assert "sandbox     local (bubblewrap)" in text
    assert "broker      file-system broker" in text
    assert f"database    SQLite ({tmp_path / 'db.sqlite3'})" in text
    # Each degraded part once.
    assert text.count("WARNING: degraded: bubblewrap (bwrap) is not installed") == 1
    assert text.count("WARNING: degraded: no Redis") == 1
