"""The docker backend's container settings, and what it leaves behind."""

import contextlib
import socket
import threading

import docker
import pytest
from django.conf import settings

from sandbox import seccomp
from sandbox.base import Limits, RunRequest
from sandbox.docker import LABEL_RUN, LABEL_SANDBOX, DockerBackend


def test_it_sets_every_limit_on_the_container():
    config = DockerBackend(image="img", gpu=False, client=object()).container_config(
        RunRequest(run_id="r1", code="print(1)")
    )
    assert config["network_mode"] == "none" and config["read_only"] is True
    assert config["tmpfs"] == {
        "/tmp": "size=67108864,nr_inodes=4096,mode=1777,uid=65534,gid=65534",
        "/dev/shm": "size=16777216,nr_inodes=256,mode=1777,uid=65534,gid=65534",
    }
    assert config["mem_limit"] == config["memswap_limit"] == 2 * 1024**3
    assert config["nano_cpus"] == 1_000_000_000 and config["pids_limit"] == 64
    ulimits = {u["Name"]: (u["Soft"], u["Hard"]) for u in config["ulimits"]}
    assert ulimits["nofile"] == (256, 256) and ulimits["fsize"] == (10 * 1024**2,) * 2
    assert config["cap_drop"] == ["ALL"] and config["security_opt"][0] == "no-new-privileges"
    assert config["security_opt"][1] == f"seccomp={seccomp.docker_profile()}"
    assert config["user"] == "65534:65534"
    assert config["labels"] == {"easycompilers.run": "r1", LABEL_SANDBOX: settings.RUNNER_SANDBOX_SCOPE}
    assert not any(k in config["environment"] for k in ("SECRET_KEY", "DATABASE_URL", "REDIS_URL"))
    assert "device_requests" not in config


def test_it_asks_for_gpus_only_on_a_gpu_worker_for_a_gpu_run():
    # A stand-in for a GPU: no GPU exists here, so this checks the container settings that a GPU
    # worker would send, not a run on a GPU.
    gpu_run = RunRequest(run_id="g", code="", gpu=True, limits=Limits(wall_s=40))
    on_gpu_worker = DockerBackend(image="img", gpu=True, client=object()).container_config(gpu_run)
    (request,) = on_gpu_worker["device_requests"]
    # One device of the worker's list (RUNNER_GPU_DEVICES, "0" by default), never all of them.
    assert request["DeviceIDs"] == ["0"] and request["Capabilities"] == [["gpu"]]
    assert request["Count"] != -1
    on_cpu_worker = DockerBackend(image="img", gpu=False, client=object()).container_config(gpu_run)
    assert "device_requests" not in on_cpu_worker


def test_an_engine_that_stops_answering_ends_the_run_as_an_error_and_raises_nothing(tmp_path):
    # A socket that takes connections and never answers stands in for a hung engine (a real one
    # cannot be made to hang on cue): each call times out inside the requests library.
    path = tmp_path / "engine.sock"
    hung = socket.socket(socket.AF_UNIX)
    hung.bind(str(path))
    hung.listen(16)
    try:
        client = docker.DockerClient(base_url=f"unix://{path}", version="1.41", timeout=0.5)
        backend = DockerBackend(image="img", gpu=False, client=client)
        result = backend.execute_cold(RunRequest(run_id="hung", code="print(1)"), lambda event: None)
        assert result.status == "error"
        assert "could not be created" in result.reason
        backend.stop("hung")  # logged, not raised through the worker
        assert backend.cleanup_strays() == 0
    finally:
        hung.close()


@pytest.mark.services
def test_it_removes_strays_and_its_own_containers_and_never_another_deployments(docker_backend, run_code):
    client = docker.from_env()
    scope = docker_backend.scope

    def cold_sandboxes():
        # Warm sandboxes of worker processes still alive in this test session are not strays.
        listed = client.containers.list(all=True, filters={"label": f"{LABEL_SANDBOX}={scope}"})
        return [c for c in listed if not any(label.startswith("easycompilers.warm") for label in c.labels)]

    run_code(docker_backend, "print('x')", wall_s=10)
    assert cold_sandboxes() == []
    # A stray of this deployment, and a sandbox of another deployment on the same engine (a CI stack
    # beside the tests, another test process), as old as the stray and with the same run id.
    made = [
        client.containers.create(
            docker_backend.image,
            labels={LABEL_SANDBOX: label, LABEL_RUN: "same-run-id"},
            network_mode="none",
            entrypoint=["true"],
        )
        for label in (scope, f"{scope}-another-deployment")
    ]
    stray, theirs = made
    try:
        assert docker_backend.cleanup_strays(max_age_s=3600) == 0
        assert docker_backend.cleanup_strays(max_age_s=0) == 1
        with pytest.raises(docker.errors.NotFound):
            client.containers.get(stray.id)
        docker_backend.stop("same-run-id")
        theirs.reload()
        assert theirs.labels[LABEL_SANDBOX] == f"{scope}-another-deployment"
    finally:
        for container in made:
            with contextlib.suppress(docker.errors.NotFound):
                container.remove(force=True)


HOLD_THREADS = """
import threading, time
threads = [threading.Thread(target=time.sleep, args=({seconds},)) for _ in range(40)]
for t in threads:
    t.start()
print("holding 40 threads", flush=True)
for t in threads:
    t.join()
"""


@pytest.mark.services
def test_each_container_has_its_whole_process_limit_whatever_other_containers_run(docker_backend, run_code):
    # Every container runs as the host's uid 65534, so a per-uid limit (RLIMIT_NPROC) would count
    # the processes of all containers together: two runs of 40 threads each would not both fit
    # under 64. The limit is each container's pids cgroup.
    holding = threading.Event()
    first: list = []

    def on_event(event):
        if "holding" in event.get("text", ""):
            holding.set()

    def hold():
        request = RunRequest(run_id="holds-threads", code=HOLD_THREADS.format(seconds=8), limits=Limits(wall_s=30))
        first.append(docker_backend.execute(request, on_event))

    holder = threading.Thread(target=hold)
    holder.start()
    try:
        assert holding.wait(60), "the first run never started its threads"
        second = run_code(docker_backend, HOLD_THREADS.format(seconds=0.1), wall_s=30)
    finally:
        holder.join(60)

    assert (second.status, second.text()) == ("succeeded", "holding 40 threads\n"), second.reason
    assert first[0].status == "succeeded", first[0].reason
