"""Debian's Chromium under Playwright, as every browser test launches it (never a downloaded browser)."""

import os
import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from tests.services import service_missing

# Playwright's sync API runs an event loop in the test's thread; the ORM calls in tests stay sync.
os.environ.setdefault("DJANGO_ALLOW_ASYNC_UNSAFE", "true")

CHROMIUM = "/usr/bin/chromium"
# Without the background-networking flags Chromium keeps trying hosts this machine cannot reach.
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]


@contextmanager
def chromium() -> Iterator:
    if not Path(CHROMIUM).exists() or shutil.which(CHROMIUM) is None:
        service_missing(f"Chromium not found at {CHROMIUM}")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            yield browser
        finally:
            browser.close()
