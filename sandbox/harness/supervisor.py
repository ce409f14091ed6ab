"""The sandbox's PID 1: reads each request and sees one run through, cold or warm (`--serve`)."""

from __future__ import annotations

import contextlib
import gc
import json
import os
import signal
import sys
import time

from .check import fork_checker
from .frames import read_frame
from .probe import CHECK_MARGIN_S, PROBE_WALL_S, fork_probe, probe_seed, read_results
from .processes import CATCHABLE, cuda_initialised, fork_child, kill_all, oom_kills, set_dumpable, stop_run, warm_up
from .resets import WRITABLE, remove, snapshot, wipe

# --- the supervisor -------------------------------------------------------------------------------
#
# PID 1 of the sandbox's PID namespace (so nothing in the sandbox can kill or stop it: the kernel
# drops SIGKILL and SIGSTOP sent to a namespace's init from inside), not dumpable (so a run cannot
# ptrace it or open its /proc files, memory or fds). It keeps two children forked ahead: one runs the
# next request's code as `run_program` does, the other the check (`Checker`). When the run's process
# reports its exit code (or exits) the supervisor kills every other process in the sandbox but the
# check's and waits until each is in exit, where it runs nothing of its own; then the check's
# process runs the check and writes the end line, and the supervisor kills it too (between the two,
# for an exercise with a probe, a probe forked from here calls the learner's functions on fresh
# inputs, and everything it started is killed before the check's process reads a thing). A warm
# supervisor then removes every file the run left in the writable folders and SysV IPC objects, puts
# back the folders' modification times and extended attributes, and checks that what it cannot restore (device
# nodes, folder modes) is untouched; if not, it says "tainted" and exits, and the worker starts over
# cold. Its stderr is the control channel (warm only), which no run can write to (fd 2 is a pipe in
# the child before learner code starts):
#     {"type": "idle"}                         ready for the first request
#     {"type": "exited", "exit_code", "oom", "tainted", "run_ms"}   the run is over and cleaned up
#                                              (run_ms: from the request to the run's end)
#     {"type": "refused", "message"}           cannot serve; the server exits

PRELOAD = ("torch", "numpy", "matplotlib", "matplotlib.pyplot")


def control(event: dict) -> None:
    line = (json.dumps(event) + "\n").encode()
    while line:
        line = line[os.write(2, line) :]


def refuse(message: str, *, warm: bool) -> int:
    if warm:
        control({"type": "refused", "message": message})
    else:
        os.write(2, f"harness: {message}\n".encode())
    return 2


def supervise(*, warm: bool) -> int:
    """Serves requests from stdin: one (cold), or one after another until stdin closes (warm).
    Cold, the exit code is the learner's program's."""
    if os.getpid() != 1:
        return refuse("the supervisor must be the sandbox's PID 1", warm=warm)
    for sig in CATCHABLE:
        with contextlib.suppress(OSError, ValueError):
            signal.signal(sig, signal.SIG_IGN)
    signal.signal(signal.SIGCHLD, signal.SIG_DFL)
    set_dumpable(0)
    os.environ["MPLBACKEND"] = "Agg"
    shot, first, export = None, None, False
    if not warm:
        # Cold, the request is read before anything is forked: a run with a check gets torch
        # imported here, once, for its program and its check (which reads tensors with it), as a
        # warm server has it; a run without one starts at once. Either way the program's wall
        # counts from its start (its ready line), not from the sandbox's.
        try:
            first = read_frame(0)
            export = bool(json.loads(first).get("export")) if first else False
        except (ValueError, AttributeError):
            return refuse("the request is not a JSON object", warm=warm)
    if warm or export:
        for name in PRELOAD:
            try:
                __import__(name)
            except ImportError:
                if warm:
                    raise
                # Cold, a runtime without it still runs programs that do not need it.
        if all(name in sys.modules for name in PRELOAD):
            warm_up()
        if cuda_initialised():
            return refuse("CUDA was initialised while importing", warm=warm)
    if warm:
        gc.collect()
        # Objects made so far stay out of the collector's way, so children do not copy their pages.
        gc.freeze()
        for folder in WRITABLE[:2]:  # caches the imports wrote (matplotlib's font list)
            for name in os.listdir(folder) if os.path.isdir(folder) else ():
                remove(os.path.join(folder, name))
        shot = snapshot()
    announced = False
    while True:
        kill_all()  # the last run's processes are gone and their memory released
        if warm and (cuda_initialised() or len(os.listdir("/proc/self/task")) != 1):
            return refuse("the server is not in a state to fork", warm=warm)
        child = fork_child(warm=warm)
        check = fork_checker()
        if warm and not announced:
            control({"type": "idle"})
            announced = True
        try:
            line, first = (first, None) if first is not None else (read_frame(0), None)
            if not line:
                kill_all()
                return 0  # the worker handed the sandbox back
            request = json.loads(line)
            modules, limits = request.get("modules"), request.get("limits") or {}
            code, probe_source = str(request.get("code") or ""), str(request.get("probe") or "")
        except (ValueError, AttributeError):
            return refuse("the request is not a JSON object", warm=warm)
        ooms = oom_kills()
        run_started = time.monotonic()
        child.send(line)
        del line, request
        how, exit_code = child.wait(watch_stdin=warm)
        if how == "worker gone":
            kill_all()
            return 0
        run_ms = (time.monotonic() - run_started) * 1000
        if exit_code is None:  # "exited": it ended without reporting its exit code
            exit_code = os.waitstatus_to_exitcode(os.waitpid(child.pid, 0)[1])
        stop_run(spare=check.pid)
        data = child.take_rest()
        oom = oom_kills() > ooms
        probe, results = None, None
        if exit_code == 0 and data is not None and probe_source:
            # The exercise's functions on fresh inputs, in a process forked from here once the
            # run's are gone (probe.py); its processes end before the check's process reads a thing.
            seed = probe_seed()
            probe = {"source": probe_source, "seed": seed}
            results_r = fork_probe(code=code, source=probe_source, seed=seed, modules=modules, limits=limits)
            # Inside the run's wall (it counts from the ready line), leaving the check its moment.
            left = float(limits.get("wall_s") or PROBE_WALL_S) - (time.monotonic() - run_started) - CHECK_MARGIN_S
            results = read_results(results_r, wall_s=min(PROBE_WALL_S, left))
            stop_run(spare=check.pid)
        del code
        if not check.untouched():
            check.discard()
            stop_run()
            check = fork_checker()
        check.hand(
            (data or b"") if exit_code == 0 else None,
            modules,
            limits,
            exit_code=exit_code,
            oom=oom,
            probe=probe,
            results=results,
        )
        del data, results
        check.wait_done()
        stop_run()
        clean = wipe(shot) if shot is not None else True  # a snapshot is taken when warm
        if warm:
            control(
                {
                    "type": "exited",
                    "exit_code": exit_code,
                    "oom": oom,
                    "tainted": not clean,
                    "run_ms": round(run_ms, 1),
                }
            )
        if not warm:
            kill_all()
            return exit_code if exit_code >= 0 else 128 - exit_code
        if not clean:
            return 3


def main() -> None:
    os._exit(supervise(warm=sys.argv[1:] == ["--serve"]))
