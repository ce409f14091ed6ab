""".env.example: every variable the settings read is in it, and it loads as it is (as Compose's
env_file reads it: KEY=VALUE lines, `#` comments)."""

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from ecplatform import limits

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / ".env.example"
SETTINGS = ROOT / "platform" / "ecplatform" / "settings"
ENV_READ = re.compile(r"""env_(?:str|bool|int|list|choice)\(\s*["']([A-Z0-9_]+)["']""")


def example_values() -> dict[str, str]:
    values = {}
    for line in EXAMPLE.read_text().splitlines():
        if line.strip() and not line.lstrip().startswith("#"):
            key, sep, value = line.partition("=")
            assert sep, f"not KEY=VALUE: {line!r}"
            values[key.strip()] = value
    return values


def example_listed() -> set[str]:
    """Set, or shown commented out (`# NAME=...`: the default stays)."""
    commented = set(re.findall(r"^# ?([A-Z][A-Z0-9_]+)=", EXAMPLE.read_text(), re.MULTILINE))
    return set(example_values()) | commented


def settings_read() -> set[str]:
    # The caps the settings read through ecplatform/limits.py, and every other env_* read.
    caps = {cap.name for cap in limits.OVERRIDABLE}
    return caps | {name for path in SETTINGS.glob("*.py") for name in ENV_READ.findall(path.read_text())}


def test_every_variable_the_settings_read_is_listed():
    read = settings_read()
    assert len(read) > 30  # the pattern still finds them
    missing = read - example_listed()
    assert not missing, f"read by the settings but not in .env.example: {sorted(missing)}"


def load(settings_module: str, **extra: str) -> subprocess.CompletedProcess:
    env = {"PATH": os.environ["PATH"], "HOME": os.environ.get("HOME", "/tmp"), **example_values()}
    env.update(DJANGO_SETTINGS_MODULE=settings_module, **extra)
    code = (
        "import django; django.setup(); from django.conf import settings as s; "
        "print(s.DATABASES['default']['ENGINE'], s.CELERY_BROKER_URL, s.EMAIL_BACKEND, s.DEFAULT_FROM_EMAIL)"
    )
    return subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True, check=False, timeout=60
    )


@pytest.mark.parametrize("module", ["ecplatform.settings.dev", "ecplatform.settings.base"])
def test_it_loads_as_it_is(module):
    out = load(module)
    assert out.returncode == 0, out.stderr[-2000:]
    assert "sqlite3 filesystem://localhost/ django.core.mail.backends.console.EmailBackend EasyCompilers" in out.stdout


def test_production_needs_only_the_secret_key_on_top():
    refused = load("ecplatform.settings.production")
    assert refused.returncode != 0
    assert "SECRET_KEY must be set" in refused.stderr
    out = load("ecplatform.settings.production", SECRET_KEY="k" * 30 + "abcdefghij" * 3)
    assert out.returncode == 0, out.stderr[-2000:]
