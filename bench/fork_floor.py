#!/usr/bin/env python
"""The floor under a warm run: the same program run in a process forked from one that has already
imported what a warm sandbox imports (torch, numpy, matplotlib), its output read from a pipe and
each figure drawn to PNG as the sandbox shows it. No sandbox, no check, no platform: what a run
would cost if the platform added nothing. bench/run_latency.py --warm prints it beside the runs.

    .venv/bin/python bench/fork_floor.py RUNS < program.py     # prints the times (s) as JSON
"""

from __future__ import annotations

import io
import json
import os
import sys
import time

os.environ.setdefault("MPLBACKEND", "Agg")
os.environ.setdefault("OMP_NUM_THREADS", "1")

import matplotlib.pyplot as plt
import numpy  # noqa: F401
import torch


def show(*args, **kwargs) -> None:
    """What the sandbox does on plt.show(): each open figure drawn to PNG, then closed."""
    for number in plt.get_fignums():
        figure = plt.figure(number)
        figure.savefig(io.BytesIO(), format="png")
        plt.close(figure)


def run_once(code) -> float:
    read, write = os.pipe()
    started = time.perf_counter()
    pid = os.fork()
    if pid == 0:
        os.close(read)
        os.dup2(write, 1)
        status = 0
        try:
            exec(code, {"__name__": "__main__"})
            show()
        except BaseException:
            status = 1
        sys.stdout.flush()
        os._exit(status)
    os.close(write)
    while os.read(read, 65536):
        pass
    os.close(read)
    _, status = os.waitpid(pid, 0)
    if status:
        raise SystemExit("the program failed in the forked process")
    return time.perf_counter() - started


def main() -> None:
    runs = int(sys.argv[1]) if len(sys.argv) > 1 else 30
    code = compile(sys.stdin.read(), "<exercise>", "exec")
    plt.show = show
    torch.set_num_threads(1)
    run_once(code)  # the first run sets up what matplotlib and torch set up lazily
    print(json.dumps([run_once(code) for _ in range(runs)]))


if __name__ == "__main__":
    main()
