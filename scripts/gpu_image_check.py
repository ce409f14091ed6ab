#!/usr/bin/env python
"""Checks a built GPU sandbox image (`VARIANT=gpu bash runner/image/build.sh`) through the docker
backend: torch is the CUDA build, and a learner's code with a check runs cold and then warm. On a
machine with no GPU it runs the CPU path (what a GPU exercise does with no GPU worker); with
`--gpu` (a GPU host) the sandbox gets one device and the code must see CUDA.

    .venv/bin/python scripts/gpu_image_check.py [--image easycompilers-sandbox-gpu:latest] [--gpu]
"""

import argparse
import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CODE = """\
import torch
print("torch", torch.__version__, "cuda build", torch.version.cuda, "cuda available", torch.cuda.is_available())
device = "cuda" if torch.cuda.is_available() else "cpu"
x = torch.ones(3, device=device)
"""
CHECK = """\
def check(ns):
    x = ns.get("x")
    return bool(x is not None and x.sum() == 3), "three ones"
"""


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--image", default="easycompilers-sandbox-gpu:latest")
    parser.add_argument("--gpu", action="store_true", help="give the sandbox a GPU (a GPU host only)")
    args = parser.parse_args()
    sys.path[:0] = [str(ROOT), str(ROOT / "platform")]
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "ecplatform.settings.test")
    import django

    django.setup()
    from sandbox.base import Limits, RunRequest
    from sandbox.docker import DockerBackend

    backend = DockerBackend(image=args.image, gpu=args.gpu)
    failed = 0
    # The first run with an owner is cold (a spare starts for it); the second takes that spare.
    for label in ("cold", "warm"):
        events = []
        started = time.perf_counter()
        request = RunRequest(
            run_id=f"gpu-image-check-{time.time_ns()}",
            code=CODE,
            check_code=CHECK,
            limits=Limits(wall_s=60),
            gpu=args.gpu,
            owner="gpu-image-check",
        )
        result = backend.execute(request, events.append)
        seconds = time.perf_counter() - started
        printed = "".join(e.get("text", "") for e in events if e.get("type") == "stream").strip()
        passed = any(e.get("type") == "check" and e.get("passed") for e in events)
        print(f"{label}: {result.status} in {seconds:.2f} s, warm={result.details.get('warm')}, check passed={passed}")
        print(f"  {printed}")
        cuda_build = "cuda build None" not in printed
        failed += not (result.status == "succeeded" and passed and cuda_build)
    backend.cleanup_strays()
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
