"""How a test asks for a real service (PostgreSQL, Redis, Docker, Chromium, bubblewrap).

Where a service is missing a test skips, so a laptop can run what it can. CI sets
REQUIRE_SERVICES=1, and then a missing service fails the test instead: a green CI run never
hides a skipped service test.
"""

import os

import pytest


def service_missing(reason: str):
    if os.environ.get("REQUIRE_SERVICES") == "1":
        pytest.fail(f"required service missing: {reason}", pytrace=False)
    pytest.skip(reason)
