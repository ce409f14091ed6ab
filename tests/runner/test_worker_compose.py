"""docker-compose.yml: the stack the platform runs in production, and its CI override."""

import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from tests.services import service_missing

ROOT = Path(__file__).resolve().parents[2]
COMPOSE = ROOT / "docker-compose.yml"
CI_OVERRIDE = ROOT / "docker-compose.ci.yml"
REQUIRED = {"SECRET_KEY": "k" * 60, "SITE_ADDRESS": "learn.example.org", "POSTGRES_PASSWORD": "pw", "DOCKER_GID": "998"}


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


def compose_config(tmp_path, env: dict[str, str], *files: Path, first: bool = True) -> subprocess.CompletedProcess:
    cli = compose_cli()
    if cli is None:
        service_missing("neither `docker compose` nor `docker-compose` is installed")
    # A project folder of its own: Compose reads .env (env_file and ${...}) beside the first file.
    files = (COMPOSE, *files) if first else files
    for path in files:
        if path.parent != tmp_path:
            shutil.copy(path, tmp_path / path.name)
    (tmp_path / ".env").write_text("".join(f"{key}={value}\n" for key, value in env.items()))
    (tmp_path / "var" / "ci-stack").mkdir(parents=True, exist_ok=True)
    (tmp_path / "var" / "ci-stack" / "ci.env").write_text("")
    args = [arg for path in files for arg in ("-f", str(tmp_path / path.name))]
    return subprocess.run(
        [*cli, "--project-directory", str(tmp_path), *args, "config"],
        capture_output=True,
        text=True,
        check=False,
        env={"PATH": "/usr/bin:/bin:/usr/local/bin"},
    )


def test_the_stack_and_its_ci_override_pass_compose_config(tmp_path):
    out = compose_config(tmp_path, REQUIRED)
    assert out.returncode == 0, out.stderr
    ci_env = {**REQUIRED, "CI_WEB_PORT": "18000", "CI_HTTPS_PORT": "18443", "CI_HTTP_PORT": "18080"}
    ci_env.update(CI_DATABASE_URL="postgres://postgres@127.0.0.1:5432/ec", CI_REDIS_URL="redis://127.0.0.1:6379/1")
    # Merged as scripts/ci-stack.sh merges it (null removes a key), then checked by Compose.
    merged = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "compose_merge.py"), str(COMPOSE), str(CI_OVERRIDE)],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    services = yaml.safe_load(merged)["services"]
    assert "postgres" not in services and "redis" not in services
    assert {services[name]["network_mode"] for name in ("proxy", "web", "worker-cpu", "beat", "migrate")} == {"host"}
    assert "ports" not in services["proxy"]
    ci_compose = tmp_path / "ci"
    ci_compose.mkdir()
    (ci_compose / "docker-compose.yml").write_text(merged)
    (ci_compose / "deploy").mkdir()
    out = compose_config(ci_compose, ci_env, ci_compose / "docker-compose.yml", first=False)
    assert out.returncode == 0, out.stderr


@pytest.mark.parametrize("missing", sorted(REQUIRED))
def test_it_refuses_to_start_without_a_required_value(tmp_path, missing):
    out = compose_config(tmp_path, {k: v for k, v in REQUIRED.items() if k != missing})
    assert out.returncode != 0
    assert missing in out.stderr


def test_it_declares_the_services_the_platform_needs(stack):
    services = stack["services"]
    assert {"proxy", "migrate", "web", "beat", "worker-cpu", "worker-gpu", "postgres", "redis"} <= set(services)
    assert {"sandbox-image", "sandbox-image-gpu"} <= set(services)
    assert "uvicorn ecplatform.asgi:application" in services["web"]["command"]
    assert "-Q cpu " in services["worker-cpu"]["command"]
    assert "-Q gpu " in services["worker-gpu"]["command"]
    # The beat is a service of its own, never inside a worker.
    assert " beat " in services["beat"]["command"]
    assert "--beat" not in services["worker-cpu"]["command"]
    for name in ("migrate", "web", "beat", "worker-cpu", "worker-gpu"):
        service = services[name]
        assert service["env_file"] == ".env"
        env = service["environment"]
        assert env["REDIS_URL"] == "${STACK_REDIS_URL:-redis://redis:6379/0}"
        assert env["DATABASE_URL"].startswith("postgres://") and "@${POSTGRES_HOST:-postgres}:" in env["DATABASE_URL"]
        # From .env, never written into the file, and never silently empty.
        assert env["SECRET_KEY"].startswith("${SECRET_KEY:?")


def test_migrations_run_once_before_web_and_workers(stack):
    services = stack["services"]
    assert "migrate" in services["migrate"]["command"]
    assert services["migrate"]["restart"] == "no"
    assert "migrate" not in services["web"]["command"]
    for name in ("web", "beat", "worker-cpu", "worker-gpu"):
        assert services[name]["depends_on"]["migrate"]["condition"] == "service_completed_successfully"


def test_only_the_proxy_publishes_ports_and_the_web_trusts_only_it(stack):
    services = stack["services"]
    assert [name for name, service in services.items() if service.get("ports")] == ["proxy"]
    assert "./deploy/Caddyfile:/etc/caddy/Caddyfile:ro" in services["proxy"]["volumes"]
    proxy_ip = services["proxy"]["networks"]["edge"]["ipv4_address"]
    assert services["web"]["environment"]["TRUSTED_PROXIES"] == proxy_ip
    # uvicorn reads the same variable as Django (the shell in the container expands it).
    assert "--forwarded-allow-ips '$${TRUSTED_PROXIES}'" in services["web"]["command"]
    assert services["proxy"]["depends_on"]["web"]["condition"] == "service_healthy"


def test_web_and_workers_have_healthchecks(stack):
    services = stack["services"]
    assert "/readyz" in " ".join(services["web"]["healthcheck"]["test"])
    for name in ("worker-cpu", "worker-gpu"):
        assert services[name]["healthcheck"]["test"][-1] == "--worker"


def test_only_the_workers_touch_the_docker_socket(stack):
    services = stack["services"]
    mounts = {name: " ".join(service.get("volumes", [])) for name, service in services.items()}
    assert [name for name, joined in mounts.items() if "docker.sock" in joined] == ["worker-cpu", "worker-gpu"]
    assert services["worker-cpu"]["environment"]["RUNNER_BACKEND"] == "docker"


def test_the_gpu_worker_sits_behind_a_profile_with_its_own_image(stack):
    services = stack["services"]
    gpu = services["worker-gpu"]
    assert gpu["profiles"] == ["gpu"] and services["sandbox-image-gpu"]["profiles"] == ["gpu"]
    assert gpu["environment"]["RUNNER_GPU"] == "1"
    assert gpu["environment"]["RUNNER_DOCKER_IMAGE"] == services["sandbox-image-gpu"]["image"]
    assert services["sandbox-image-gpu"]["build"]["args"]["VARIANT"] == "gpu"
    assert "profiles" not in services["worker-cpu"]


def test_images_build_from_the_repository_root(stack):
    services = stack["services"]
    for name in ("sandbox-image", "sandbox-image-gpu"):
        assert services[name]["build"] == {
            **services[name]["build"],
            "context": ".",
            "dockerfile": "runner/image/Dockerfile",
        }
    assert services["sandbox-image"]["image"] == services["worker-cpu"]["environment"]["RUNNER_DOCKER_IMAGE"]
    assert services["worker-cpu"]["depends_on"]["sandbox-image"]["condition"] == "service_completed_successfully"
    assert services["worker-gpu"]["depends_on"]["sandbox-image-gpu"]["condition"] == "service_completed_successfully"
    ignored = (ROOT / ".dockerignore").read_text().split()
    assert {".venv", "var", ".env", "**/node_modules"} <= set(ignored)
