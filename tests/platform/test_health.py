"""/healthz and /readyz, and the worker's own check (python -m ecplatform.health --worker)."""

import pytest

from ecplatform import health


def test_healthz_answers_whatever_the_host_header(client, settings):
    settings.ALLOWED_HOSTS = ["learn.example.org"]
    settings.SECURE_SSL_REDIRECT = True
    # The container's own check: plain HTTP on 127.0.0.1, no proxy, a host the site does not serve.
    response = client.get("/healthz", HTTP_HOST="127.0.0.1:8000")
    assert response.status_code == 200
    assert response.content == b"ok\n"


@pytest.mark.django_db
def test_readyz_is_ready_when_the_database_and_redis_answer(client):
    response = client.get("/readyz", HTTP_HOST="127.0.0.1:8000")
    assert response.status_code == 200, response.content
    body = response.json()
    assert body["ready"] is True
    assert body["checks"]["database"] == "ok"
    assert body["checks"]["redis"] == "ok"


@pytest.mark.django_db
def test_readyz_names_redis_when_it_does_not_answer(client, settings):
    # Port 9 (discard) on loopback: nothing listens there.
    settings.REDIS_URL = "redis://127.0.0.1:9/0"
    response = client.get("/readyz")
    assert response.status_code == 503
    body = response.json()
    assert body["ready"] is False
    assert body["checks"]["database"] == "ok"
    assert body["checks"]["redis"].startswith("Redis does not answer")


@pytest.mark.django_db
def test_a_worker_without_its_sandbox_image_is_not_ready(settings):
    settings.RUNNER_BACKEND = "docker"
    settings.RUNNER_DOCKER_IMAGE = "easycompilers-sandbox:no-such-tag"
    checks = health.health_checks(worker=True)
    assert checks["database"] == "ok"
    # Either no engine answers here, or it does and the image is missing: never "ok".
    assert checks["sandbox"] != "ok"
    assert "no-such-tag" in checks["sandbox"] or "Docker engine" in checks["sandbox"]


def test_the_web_check_fails_on_a_port_nobody_serves(capsys):
    assert health.main(["--web", "http://127.0.0.1:9/readyz"]) == 1
    assert health.main(["--bogus"]) == 2
