"""docker-compose.yml: the stack the platform runs in production."""

import shutil
import subprocess
from pathlib import Path

import pytest
import yaml

from tests.services import service_missing

COMPOSE = Path(__file__).resolve().parents[2] / "docker-compose.yml"


@pytest.fixture(scope="module")
def stack() -> dict:
    return yaml.safe_load(COMPOSE.read_text())


def compose_cli() -> list[str] | None:
    docker = shutil.which("docker")
    if docker and subprocess.run([docker, "compose", "version"], capture_output=True, check=False).returncode == 0:
        return [docker, "compose"]
    if shutil.which("docker-compose"):
        return ["docker-compose"]
    return None


def test_docker_compose_config_passes():
    cli = compose_cli()
    if cli is None:
        service_missing("neither `docker compose` nor `docker-compose` is installed")
    out = subprocess.run([*cli, "-f", str(COMPOSE), "config", "--quiet"], capture_output=True, text=True, check=False)
    assert out.returncode == 0, out.stderr


def test_it_declares_the_services_the_platform_needs(stack):
    services = stack["services"]
    assert {"web", "worker-cpu", "worker-gpu", "postgres", "redis", "sandbox-image"} <= set(services)
    assert "uvicorn ecplatform.asgi:application" in services["web"]["command"]
    assert "-Q cpu " in services["worker-cpu"]["command"]
    assert "-Q gpu " in services["worker-gpu"]["command"]
    for name in ("web", "worker-cpu", "worker-gpu"):
        env = services[name]["environment"]
        assert env["REDIS_URL"].startswith("redis://redis:")
        assert env["DATABASE_URL"].startswith("postgres://")
        # From the environment or .env, never written into the file.
        assert env["SECRET_KEY"] == "${SECRET_KEY:-}"


def test_only_the_workers_touch_the_docker_socket(stack):
    services = stack["services"]
    mounts = {name: " ".join(service.get("volumes", [])) for name, service in services.items()}
    assert "docker.sock" not in mounts["web"]
    assert "docker.sock" in mounts["worker-cpu"]
    assert "docker.sock" in mounts["worker-gpu"]
    assert services["worker-cpu"]["environment"]["RUNNER_BACKEND"] == "docker"


def test_the_gpu_worker_sits_behind_a_profile_and_reserves_gpus(stack):
    gpu = stack["services"]["worker-gpu"]
    assert gpu["profiles"] == ["gpu"]
    (device,) = gpu["deploy"]["resources"]["reservations"]["devices"]
    assert device["capabilities"] == ["gpu"]
    assert gpu["environment"]["RUNNER_GPU"] == "1"
    assert "profiles" not in stack["services"]["worker-cpu"]


def test_workers_wait_for_the_sandbox_image(stack):
    image = stack["services"]["sandbox-image"]
    assert image["build"]["context"] == "runner/image"
    assert image["image"] == stack["services"]["worker-cpu"]["environment"]["RUNNER_DOCKER_IMAGE"]
    for name in ("worker-cpu", "worker-gpu"):
        assert stack["services"][name]["depends_on"]["sandbox-image"]["condition"] == "service_completed_successfully"
