#!/usr/bin/env python
"""Runs the sandbox's harness (runner/sandbox/harness.py) on this machine's GPU, cold and warm, as
a GPU sandbox runs it but without a container: for a machine with an NVIDIA GPU and no Docker (and
no network, Django or Celery), from a copy of the tree, with the Python and torch it finds there.

    python3 scripts/gpu_device_check.py          # a machine with one NVIDIA GPU
    python3 scripts/gpu_device_check.py --cpu    # no GPU: the same cases on the CPU (CI runs this)

Each case goes through the worker's own side of the protocol (request_payload, supervise, EndLine,
run_result, WarmSandbox), so the status, limit and check verdict in the table are the ones a
learner would get. What the container gave the harness, the launcher gives it here: it is PID 1 of
a PID namespace of its own, with a /proc, /tmp, /dev/shm and SysV IPC namespace of its own (the
warm server removes what a run leaves there, so it must never see the host's), the host's /dev
read-only, one device in CUDA_VISIBLE_DEVICES (what the container toolkit's device request does)
and the worker's memory fraction in its environment. It is not a containment check: the backends'
batteries are.

It prints one table, each case with what was expected, what was seen and its time cold and warm
(ms), and exits 1 when any case is not as expected.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import re
import shutil
import subprocess
import sys
import threading
import time
import types
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
HARNESS = ROOT / "runner" / "sandbox" / "harness.py"
EXERCISE_DIR = ROOT / "courses" / "content" / "transformers" / "chapters" / "10-scaling-and-efficiency"
EXERCISE = "mixed-precision-anywhere"
# What the production worker sets (RUNNER_GPU_MEMORY_FRACTION's default).
MEMORY_FRACTION = 0.9


def _sandbox_modules():
    """The worker's side of the protocol, without the platform: `ecplatform`'s package __init__
    loads the Celery app, which a GPU machine need not have; only its limits module is needed."""
    sys.path[:0] = [str(ROOT), str(ROOT / "platform")]
    if "ecplatform" not in sys.modules:
        package = types.ModuleType("ecplatform")
        package.__path__ = [str(ROOT / "platform" / "ecplatform")]
        sys.modules["ecplatform"] = package
    from runner.sandbox import base, gpus, protocol, warm_sandbox

    return base, gpus, protocol, warm_sandbox


base, gpus, protocol, warm_sandbox = _sandbox_modules()


# --- the sandbox without a container -------------------------------------------------------------

# Runs as `python -c LAUNCHER HARNESS_SOURCE [--serve]`: new PID, mount and IPC namespaces (and a
# user namespace when not root), then a fork, whose child is PID 1 there: its own /proc, /tmp and
# /dev/shm (and /dev/mqueue), the host's /dev read-only. A venv under the host's /tmp (a clone
# there) is bound read-only at a folder outside /tmp (EC_STAGE), since a warm server empties /tmp
# at its start. Then the harness, from its source (its file may be under the hidden /tmp too).
# Standard library only, as the harness.
LAUNCHER = r"""
import ctypes, os, sys
libc = ctypes.CDLL(None, use_errno=True)
CLONE_NEWNS, CLONE_NEWIPC, CLONE_NEWPID, CLONE_NEWUSER = 0x20000, 0x8000000, 0x20000000, 0x10000000
MS_RDONLY, MS_NOSUID, MS_NODEV, MS_NOEXEC = 0x1, 0x2, 0x4, 0x8
MS_REMOUNT, MS_BIND, MS_REC, MS_PRIVATE = 0x20, 0x1000, 0x4000, 0x40000

def fail(what):
    os.write(2, f"gpu_device_check launcher: {what}: {os.strerror(ctypes.get_errno())}\n".encode())
    os._exit(120)

def mount(source, target, fstype, flags, data=None):
    enc = lambda s: None if s is None else s.encode()
    if libc.mount(enc(source), enc(target), enc(fstype), flags, enc(data)) != 0:
        fail(f"mount {target}")

source, args = sys.argv[1], sys.argv[2:]
tmp_bytes, venv, stage = os.environ.pop("EC_TMP_BYTES"), os.environ.pop("EC_VENV"), os.environ.pop("EC_STAGE")
uid, gid = os.geteuid(), os.getegid()
if libc.unshare(CLONE_NEWNS | CLONE_NEWIPC | CLONE_NEWPID | (CLONE_NEWUSER if uid else 0)) != 0:
    fail("unshare")
if uid:
    for name, text in (("setgroups", "deny"), ("uid_map", f"{uid} {uid} 1"), ("gid_map", f"{gid} {gid} 1")):
        with open(f"/proc/self/{name}", "w") as f:
            f.write(text)
pid = os.fork()
if pid:
    _, status = os.waitpid(pid, 0)
    os._exit(os.waitstatus_to_exitcode(status) & 0xFF)
mount(None, "/", None, MS_REC | MS_PRIVATE)
mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC)
mount("/dev", "/dev", None, MS_BIND | MS_REC)
mount(None, "/dev", None, MS_REMOUNT | MS_BIND | MS_RDONLY | MS_NOSUID)
mount("tmpfs", "/dev/shm", "tmpfs", MS_NOSUID | MS_NODEV, "size=16m,mode=1777")
if os.path.isdir("/dev/mqueue"):
    mount("mqueue", "/dev/mqueue", "mqueue", MS_NOSUID | MS_NODEV | MS_NOEXEC)
executable = sys.executable
if venv:
    mount("tmpfs", stage, "tmpfs", MS_NOSUID | MS_NODEV, "size=1m,mode=755")
    os.mkdir(f"{stage}/venv")
    mount(venv, f"{stage}/venv", None, MS_BIND | MS_REC)
    mount(None, f"{stage}/venv", None, MS_REMOUNT | MS_BIND | MS_RDONLY)
    executable = f"{stage}/venv/bin/{os.path.basename(sys.executable)}"
mount("tmpfs", "/tmp", "tmpfs", MS_NOSUID | MS_NODEV, f"size={tmp_bytes},mode=1777")
os.chdir("/tmp")
os.execv(executable, [executable, "-c", source, *args])
"""
HOST_TMP = Path("/tmp")  # noqa: S108 - the host's /tmp, which the sandbox must not see
# Where a venv under the host's /tmp is bound in the sandbox: folders that exist on most machines
# and that no Python lives in (the sandbox sees a fresh, empty tmpfs there).
STAGES = ("/mnt", "/srv", "/media")


def venv_placement() -> tuple[str, str]:
    """(venv, stage): this Python's venv and where the sandbox sees it, when the venv is under the
    host's /tmp (else both empty: the sandbox runs this Python where it is)."""
    prefix, base_prefix = Path(sys.prefix).resolve(), Path(sys.base_prefix).resolve()
    if HOST_TMP in base_prefix.parents:
        raise RuntimeError(f"this Python is installed under {HOST_TMP}, which the sandbox hides: use one outside it")
    if HOST_TMP not in prefix.parents:
        return "", ""
    stage = next((s for s in STAGES if os.path.isdir(s)), None)
    if stage is None:
        raise RuntimeError(
            f"the venv {prefix} is under {HOST_TMP} and none of {', '.join(STAGES)} exists to bind it at"
        )
    return str(prefix), stage


def sandbox_env(*, device: str, gpu: bool) -> dict:
    """The sandbox's environment: the container's (docker.ENVIRONMENT), nothing of the host's but
    its PATH and library path, and the device the worker gave it."""
    env = {
        "HOME": "/tmp",  # noqa: S108 - the sandbox's own tmpfs
        "LANG": "C.UTF-8",
        "MPLBACKEND": "Agg",
        "MPLCONFIGDIR": "/tmp",  # noqa: S108
        "OMP_NUM_THREADS": "1",
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "CUDA_VISIBLE_DEVICES": device,
        "EC_TMP_BYTES": str(base.Limits().tmp_bytes),
    }
    env["EC_VENV"], env["EC_STAGE"] = venv_placement()
    if os.environ.get("LD_LIBRARY_PATH"):
        env["LD_LIBRARY_PATH"] = os.environ["LD_LIBRARY_PATH"]
    if gpu:
        env[gpus.GPU_MEMORY_FRACTION_ENV] = str(MEMORY_FRACTION)
    return env


def start(*, device: str, gpu: bool, serve: bool) -> subprocess.Popen:
    args = [sys.executable, "-c", LAUNCHER, HARNESS.read_text(), *(["--serve"] if serve else [])]
    return subprocess.Popen(
        args,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=sandbox_env(device=device, gpu=gpu),
        start_new_session=True,
    )


def kill(proc: subprocess.Popen) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, 9)


def run_cold(request, *, device: str, gpu: bool) -> tuple:
    """One run in a fresh harness (cold), as the backends' execute_cold runs it."""
    events: list = []
    end = protocol.EndLine()
    started = time.monotonic()
    proc = start(device=device, gpu=gpu, serve=False)
    stderr: list[bytes] = []
    threading.Thread(target=lambda: stderr.append(proc.stderr.read()), daemon=True).start()
    payload = protocol.request_payload(request, address_space=not gpu, processes=False, nonce=end.nonce)
    with contextlib.suppress(OSError):
        proc.stdin.write(payload)
        proc.stdin.close()
    try:
        collector, timed_out = protocol.supervise(
            read=end.reader(lambda: proc.stdout.read1(65536)),
            kill=lambda: kill(proc),
            limits=request.limits,
            on_event=events.append,
            started=started,
            end=end,
        )
        exit_code = end.exit_code if end.exit_code is not None else proc.wait(timeout=10)
    finally:
        kill(proc)
        proc.wait()
        proc.stdout.close()
    result = protocol.run_result(
        collector=collector,
        exit_code=exit_code,
        timed_out=timed_out,
        oom_killed=end.oom,
        limits=request.limits,
        started=started,
        stderr_tail=b"".join(stderr).decode("utf-8", "replace"),
        details={"warm": False},
    )
    return result, events


class WarmHarness(warm_sandbox.WarmSandbox):
    """A harness serving runs (`--serve`), fed as the backends feed theirs."""

    backend_name = "gpu-device-check"
    processes = False  # no pids cgroup here, and RLIMIT_NPROC would count the host user's processes

    def __init__(self, *, device: str, gpu: bool):
        super().__init__(shape=(device, gpu))
        self.address_space = not gpu  # a GPU driver maps far more address space than it uses
        self.proc = start(device=device, gpu=gpu, serve=True)
        for stream, is_stdout in ((self.proc.stdout, True), (self.proc.stderr, False)):
            threading.Thread(target=self._pump, args=(stream, is_stdout), daemon=True).start()

    def _pump(self, stream, is_stdout: bool) -> None:
        while data := stream.read1(65536):
            (self._on_stdout if is_stdout else self._on_stderr)(data)
        if is_stdout:
            self._on_eof()

    def _send(self, data: bytes) -> None:
        self.proc.stdin.write(data)
        self.proc.stdin.flush()

    def _kill(self) -> None:
        kill(self.proc)

    def _close(self) -> None:
        kill(self.proc)
        self.proc.wait()

    def _exit_code(self) -> int | None:
        try:
            return self.proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            return None

    def run(self, request) -> tuple:
        events: list = []
        result, reusable = self.execute(request, events.append)
        if result is None:
            raise RuntimeError(f"the warm harness died before the program started: {self.broken or self._diagnostics}")
        result.details["reusable"] = reusable
        return result, events


# --- what each case runs and what it must show -----------------------------------------------------

LIST_DEVICES = """\
import torch
count = torch.cuda.device_count() if torch.cuda.is_available() else 0
uuids = [str(torch.cuda.get_device_properties(i).uuid) for i in range(count)]
print("devices", count, *uuids)
"""
# Allocates 1 GiB blocks until something stops it: on a GPU the run's memory fraction (torch's
# OutOfMemoryError), on the CPU the sandbox's memory limit.
OVERRUN = """\
import torch
device = "cuda" if torch.cuda.is_available() else "cpu"
if device == "cuda":
    total = torch.cuda.get_device_properties(0).total_memory
    print(f"device memory {total / 2**30:.1f} GiB, fraction {FRACTION}, cap {total * FRACTION / 2**30:.1f} GiB")
blocks = []
try:
    while True:
        blocks.append(torch.empty(2**30, dtype=torch.uint8, device=device))
finally:
    print(f"stopped after {len(blocks)} GiB")
""".replace("FRACTION", str(MEMORY_FRACTION))
AFTER_OVERRUN = """\
import torch
device = "cuda" if torch.cuda.is_available() else "cpu"
x = torch.ones(2**28, device=device)  # 1 GiB of float32
print("sum", int(x.sum().item()), "on", device)
"""


def exercise_files() -> dict:
    chapter = (EXERCISE_DIR / "chapter.md").read_text()
    after = chapter[chapter.index(f"slug: {EXERCISE}") :]
    wall_s = float(re.search(r"time_limit:\s*(\d+)", after).group(1))
    files = {kind: (EXERCISE_DIR / f"{EXERCISE}{kind}.py").read_text() for kind in ("", ".solution", ".check")}
    return {"starter": files[""], "solution": files[".solution"], "check": files[".check"], "wall_s": wall_s}


def printed(events: list) -> str:
    return "".join(e.get("text", "") for e in events if e.get("type") == "stream")


@dataclass
class Case:
    name: str
    expected: str
    seen: str = ""
    ok: bool = False
    ms: dict = field(default_factory=dict)  # "cold"/"warm" -> ms


@dataclass
class Machine:
    gpu: bool
    devices: list[str]  # the real devices (UUIDs), empty with --cpu
    cases: list[Case] = field(default_factory=list)
    _runs: int = 0

    @property
    def device(self) -> str:
        return self.devices[0] if self.devices else ""

    def request(self, code: str, *, check: str = "", wall_s: float = 60.0):
        self._runs += 1
        limits = base.Limits(wall_s=wall_s)
        return base.RunRequest(run_id=f"gpu-device-check-{self._runs}", code=code, check_code=check, limits=limits)

    def both(self, code: str, *, device: str | None = None, gpu: bool | None = None, **kw) -> dict:
        """The same code cold, then warm (a server started and ready first, as a spare is)."""
        device = self.device if device is None else device
        gpu = self.gpu if gpu is None else gpu
        out = {}
        out["cold"] = timed(lambda: run_cold(self.request(code, **kw), device=device, gpu=gpu))
        server = WarmHarness(device=device, gpu=gpu)
        try:
            if not server.wait_ready():
                raise RuntimeError(f"the warm harness did not get ready: {server.broken or bytes(server._diagnostics)}")
            out["warm"] = timed(lambda: server.run(self.request(code, **kw)))
            out["server"] = server
        except BaseException:
            server.close()
            raise
        return out


def timed(fn) -> tuple:
    started = time.perf_counter()
    result, events = fn()
    return result, events, (time.perf_counter() - started) * 1000


def check_passed(events: list) -> bool | None:
    """The check's verdict, as the worker passes it on (None: no check ran)."""
    verdicts = [e.get("passed") for e in events if e.get("type") == "check"]
    return verdicts[-1] if verdicts else None


def add(machine: Machine, case: Case, runs: dict, judge) -> None:
    """Judges each of the case's runs (`judge(result, events)` -> (ok, seen)) and adds the row."""
    seen, ok = [], True
    for label in ("cold", "warm"):
        if label not in runs:
            continue
        result, events, ms = runs[label]
        good, what = judge(result, events)
        case.ms[label] = ms
        seen.append(f"{label}: {what}")
        ok = ok and good
    case.seen, case.ok = "; ".join(seen), ok
    machine.cases.append(case)


def close(runs: dict) -> None:
    server = runs.get("server")
    if server is not None:
        server.close()


def exercise_cases(machine: Machine) -> None:
    files = exercise_files()
    where = "cuda" if machine.gpu else "cpu"
    for which, should_pass in (("solution", True), ("starter", False)):
        runs = machine.both(files[which], check=files["check"], wall_s=files["wall_s"])
        close(runs)

        def judge(result, events, should_pass=should_pass):
            passed = check_passed(events)
            ran_on = f"running on {where}" in printed(events)
            good = result.status == "succeeded" and passed is should_pass and ran_on
            return good, f"{result.status}, check {'passed' if passed else 'failed'}, on {where if ran_on else '?'}"

        add(
            machine,
            Case(
                f"Part 10 {EXERCISE}: {which}",
                f"succeeded on {where}, check {'passes' if should_pass else 'fails'}",
            ),
            runs,
            judge,
        )
    if machine.gpu:
        # The same code as the CPU queue runs it (no GPU worker alive): the CPU's time beside the GPU's.
        runs = machine.both(files["solution"], check=files["check"], wall_s=files["wall_s"], device="", gpu=False)
        close(runs)
        add(
            machine,
            Case(f"Part 10 {EXERCISE}: solution, CPU queue", "succeeded on cpu, check passes"),
            runs,
            lambda r, e: (
                r.status == "succeeded" and check_passed(e) is True and "running on cpu" in printed(e),
                f"{r.status}, check {'passed' if check_passed(e) else 'failed'}",
            ),
        )


def memory_cases(machine: Machine) -> None:
    cap = f"memory fraction {MEMORY_FRACTION}" if machine.gpu else "memory limit"
    runs = machine.both(OVERRUN)
    server = runs.pop("server")
    try:
        after = {
            "cold": timed(lambda: run_cold(machine.request(AFTER_OVERRUN), device=machine.device, gpu=machine.gpu)),
            "warm": timed(lambda: server.run(machine.request(AFTER_OVERRUN))),
        }
    finally:
        server.close()

    def stopped(result, events):
        text = printed(events)
        blocks = re.search(r"stopped after (\d+) GiB", text)
        within = True
        if machine.gpu:
            cap_gib = re.search(r"cap ([\d.]+) GiB", text)
            within = bool(blocks and cap_gib and int(blocks.group(1)) <= float(cap_gib.group(1)))
        good = result.status == "failed" and result.limit == "memory" and within
        got = f"after {blocks.group(1)} GiB" if blocks else "no count printed"
        return good, f"{result.status}, limit {result.limit} ({result.reason}), {got}"

    expected = "failed, a memory stop" + (", within the cap" if machine.gpu else "")
    add(machine, Case(f"allocate past the {cap}", expected), runs, stopped)

    def usable(result, events):
        text = printed(events).strip()
        good = result.status == "succeeded" and text == f"sum {2**28} on {'cuda' if machine.gpu else 'cpu'}"
        reuse = result.details.get("reusable")
        if result.details.get("warm"):
            good = good and reuse is True
        return good, f"{result.status}: {text!r}" + (f", sandbox kept={reuse}" if result.details.get("warm") else "")

    add(
        machine,
        Case("the next run, after the memory stop", "succeeded, the device usable (1 GiB on it)"),
        after,
        usable,
    )


def device_cases(machine: Machine) -> None:
    def sees(expect: list[str]):
        def judge(result, events):
            words = printed(events).split()
            count = int(words[1]) if len(words) > 1 and words[1].isdigit() else -1
            uuids = [u.removeprefix("GPU-") for u in words[2:]]
            good = result.status == "succeeded" and count == len(expect)
            good = good and all(e.removeprefix("GPU-").removeprefix("MIG-") in uuids for e in expect if "-" in e)
            return good, f"{result.status}, sees {count}" + (f" ({', '.join(uuids)})" if uuids else "")

        return judge

    given = machine.device
    runs = machine.both(LIST_DEVICES)
    close(runs)
    add(
        machine,
        Case(
            "list the devices",
            f"sees 1, the one given ({given})" if machine.gpu else "sees 0 (given none)",
        ),
        runs,
        sees([given] if machine.gpu else []),
    )

    # The device choice (gpus.gpu_device_pick) on this machine's one real device and fakes; each
    # pick's `now` is far from the last, so earlier picks no longer count as pending.
    real = given if machine.gpu else "GPU-11111111-2222-3333-4444-555555555555"
    fake_uuid = "GPU-00000000-0000-0000-0000-00000000fake"
    migs = [f"MIG-00000000-0000-0000-0000-0000000000{i:02d}" for i in range(3)]
    picks = [
        ("2 devices by UUID, none in use", [real, fake_uuid], [], real),
        ("2 devices by UUID, the real one in use", [real, fake_uuid], [real], fake_uuid),
        ("4 devices by index, 1 to 3 in use", ["0", "1", "2", "3"], ["1", "2", "3", "3"], "0"),
        ("4 devices by index, 0 and 1 in use", ["0", "1", "2", "3"], ["0", "1"], "2"),
        ("4 devices: 3 MIG UUIDs and the GPU, the slices in use", [*migs, real], migs, real),
        ("4 devices: the GPU and 3 MIG UUIDs, the first two in use", [real, *migs], [real, migs[0]], migs[1]),
    ]
    for k, (name, devices, in_use, expect) in enumerate(picks):
        picked = gpus.gpu_device_pick(devices=devices, in_use=in_use, now=10_000.0 * (k + 1))
        case = Case(f"device choice: {name}", f"picks {expect}")
        real_one = machine.gpu and picked in (real, "0")
        if real_one:
            # The pick is the real device: a sandbox given it sees it and nothing else.
            case.expected += ", a run on it sees 1"
            runs = machine.both(LIST_DEVICES, device=picked)
            close(runs)
            judge = sees([real])
            add(
                machine,
                case,
                runs,
                lambda r, e, judge=judge, picked=picked, expect=expect: (
                    picked == expect and judge(r, e)[0],
                    f"picks {picked}, {judge(r, e)[1]}",
                ),
            )
        else:
            case.seen, case.ok = f"picks {picked}" + ("" if machine.gpu else " (no device to run on)"), picked == expect
            if machine.gpu:
                case.seen += " (a fake: nothing to run)"
            machine.cases.append(case)


# --- the machine -----------------------------------------------------------------------------------


def real_devices() -> list[str]:
    """The GPUs' UUIDs as the worker's RUNNER_GPU_DEVICES would name them (nvidia-smi's list)."""
    if shutil.which("nvidia-smi"):
        out = subprocess.run(
            ["nvidia-smi", "--query-gpu=uuid", "--format=csv,noheader"],
            capture_output=True,
            text=True,
        )
        if out.returncode == 0:
            return [line.strip() for line in out.stdout.splitlines() if line.strip()]
    return []


def table(cases: list[Case]) -> str:
    rows = [("case", "expected", "seen", "cold ms", "warm ms", "as expected")]
    for c in cases:
        ms = [f"{c.ms[label]:.0f}" if label in c.ms else "-" for label in ("cold", "warm")]
        rows.append((c.name, c.expected, c.seen, *ms, "yes" if c.ok else "NO"))
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    lines = [" | ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True)).rstrip() for row in rows]
    lines.insert(1, "-+-".join("-" * w for w in widths))
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cpu", action="store_true", help="no GPU here: run every case on the CPU")
    args = parser.parse_args(argv)
    devices = [] if args.cpu else real_devices()
    if not args.cpu and len(devices) != 1:
        print(f"gpu_device_check: expected one NVIDIA GPU, nvidia-smi lists {len(devices)}; --cpu runs without one")
        return 2
    machine = Machine(gpu=not args.cpu, devices=devices)
    print(f"python {sys.version.split()[0]}, harness {HARNESS.relative_to(ROOT)}, ", end="")
    print(f"device {machine.device}, memory fraction {MEMORY_FRACTION}" if machine.gpu else "no GPU (--cpu)")
    for section in (exercise_cases, memory_cases, device_cases):
        try:
            section(machine)
        except Exception as e:  # a broken case still leaves the table of the others
            machine.cases.append(Case(section.__name__, "runs", f"{type(e).__name__}: {e}"))
    print(table(machine.cases))
    failed = [c.name for c in machine.cases if not c.ok]
    print(f"{len(machine.cases) - len(failed)} of {len(machine.cases)} cases as expected")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
