"""The GPU path: a GPU run with no live GPU worker goes to a CPU worker, as its page says, one
GPU per sandbox from the worker's device list, and the GPU sandbox image where a GPU is at hand."""

import shutil
import subprocess

import pytest
from django.test import Client
from django.utils import timezone
from rest_framework.test import APIClient

from runner import routing
from runner.models import Run
from sandbox.base import Limits, RunRequest
from sandbox.docker import DockerBackend
from sandbox.gpus import GPU_MEMORY_FRACTION_ENV, LABEL_GPU, gpu_device_pick
from tests.runner.worker import services_required
from tests.services import service_missing


@pytest.fixture
def no_gpu_worker(transactional_db, worker_switch):
    services_required()
    worker_switch.close()  # the session's worker serves the gpu queue too
    routing._redis().delete(routing._hosts_key("gpu"))


@pytest.mark.services
def test_a_gpu_exercise_with_no_gpu_worker_runs_on_a_cpu_worker_and_its_page_says_so(
    no_gpu_worker, make_learner, make_exercise
):
    learner, exercise = make_learner(), make_exercise(needs_gpu=True)
    exercise.chapter.body = f"Text.\n\n[[exercise:{exercise.slug}]]"
    exercise.chapter.save()
    api = APIClient()
    api.force_authenticate(learner)
    page = Client()
    page.force_login(learner)
    chapter_url = f"/courses/{exercise.chapter.course.slug}/{exercise.chapter.slug}/"

    try:
        # No GPU worker: the page says where the run will go before Run is pressed, and it goes there.
        html = page.get(chapter_url).content.decode()
        assert "This platform has no GPU worker running, so this exercise runs on a CPU worker" in html
        response = api.post("/api/runs/", {"exercise": exercise.id, "code": "print(1)"}, format="json")
        assert response.status_code == 201, response.content
        assert Run.objects.get(pk=response.json()["id"]).queue == "cpu"

        # Once a GPU worker says it is alive, GPU runs go to the gpu queue and the note is gone.
        routing.hosts_alive_renew(queues=["gpu"], host="gpu-host-for-test", ttl_s=30)
        html = page.get(chapter_url).content.decode()
        assert "no GPU worker running" not in html and "runs on a GPU" in html
        gpu = api.post("/api/runs/", {"exercise": exercise.id, "code": "print(1)"}, format="json")
        assert gpu.status_code == 201, gpu.content
        assert Run.objects.get(pk=gpu.json()["id"]).queue == "gpu"
    finally:
        routing.hosts_alive_forget(queues=["gpu"], host="gpu-host-for-test")
        # No worker will take them: they leave the queue ended, not as work for a later worker.
        Run.objects.filter(user=learner).update(status=Run.Status.FAILED, finished_at=timezone.now())


def test_each_sandbox_gets_one_device_the_least_used_first():
    devices = ["0", "1", "MIG-5c1f"]
    # Two sandboxes already on 0, one on 1: the MIG slice is free.
    assert gpu_device_pick(devices=devices, in_use=["0", "0", "1"], now=0.0) == "MIG-5c1f"
    # That pick counts before the engine lists its container: next comes 1, then 1 or the slice again.
    assert gpu_device_pick(devices=devices, in_use=["0", "0", "1"], now=1.0) == "1"
    # Devices that are not this worker's (another worker's on the same engine) do not count.
    assert gpu_device_pick(devices=["7"], in_use=["0", "1"], now=100.0) == "7"


@pytest.mark.services
def test_a_gpu_sandbox_asks_the_engine_for_one_device_of_the_list():
    if DockerBackend.unavailable_reason("unused").startswith("no Docker engine"):
        service_missing("no Docker engine answers (the device count comes from its containers)")
    backend = DockerBackend(image="unused", gpu=True)
    backend.gpu_devices = ["GPU-aaaa", "GPU-bbbb"]
    config = backend.container_config(RunRequest(run_id="r1", code="", limits=Limits(), gpu=True))
    (request,) = config["device_requests"]
    assert len(request.device_ids) == 1 and request.device_ids[0] in backend.gpu_devices
    assert request.count in (None, 0)
    assert config["labels"][LABEL_GPU] == request.device_ids[0]
    # The harness caps the run's GPU memory from this.
    assert float(config["environment"][GPU_MEMORY_FRACTION_ENV]) == 0.9
    # A CPU run on the same worker gets no device.
    assert "device_requests" not in backend.container_config(RunRequest(run_id="r2", code="", limits=Limits()))


@pytest.mark.services
def test_the_gpu_sandbox_image_sees_one_gpu():
    """Needs a machine with an NVIDIA GPU, its container toolkit and the GPU image
    (VARIANT=gpu bash runner/image/build.sh); skipped elsewhere."""
    if not shutil.which("nvidia-smi") or subprocess.run(["nvidia-smi"], capture_output=True).returncode != 0:
        # No GPU is a machine without one, not a missing service: skipped, also in CI.
        pytest.skip("no NVIDIA GPU on this machine: the GPU sandbox image cannot be run here")
    image = "easycompilers-sandbox-gpu:latest"
    backend = DockerBackend(image=image, gpu=True)
    if DockerBackend.unavailable_reason(image):
        service_missing(f"no Docker engine or no {image} (VARIANT=gpu bash runner/image/build.sh)")
    events = []
    code = "import torch\nprint(torch.cuda.is_available(), torch.cuda.device_count())"
    result = backend.execute_cold(RunRequest(run_id="gpu-check", code=code, limits=Limits(), gpu=True), events.append)
    assert result.status == "succeeded", result
    assert "".join(e.get("text", "") for e in events if e.get("type") == "stream") == "True 1\n"
