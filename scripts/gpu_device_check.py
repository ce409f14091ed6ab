#!/usr/bin/env python
"""Runs the sandbox's harness (sandbox/harness/) on this machine's GPU, cold and warm, as
a GPU sandbox runs it but without a container: for a machine with an NVIDIA GPU and no Docker (and
no network, Django or Celery), from a copy of the tree, with the Python and torch it finds there.

    python3 scripts/gpu_device_check.py          # a machine with one NVIDIA GPU
    python3 scripts/gpu_device_check.py --cpu    # no GPU: the same cases on the CPU (CI runs this)

Each case goes through the worker's own side of the protocol (scripts/harness_on_host.py says how
the harness runs without its container), so the status, limit and check verdict in the table are
the ones a learner would get.

It prints one table, each case with what was expected, what was seen and its time cold and warm
(ms), and exits 1 when any case is not as expected.
"""

from __future__ import annotations

import argparse
import re
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass, field

from harness_on_host import HARNESS, MEMORY_FRACTION, ROOT, WarmHarness, base, gpus, run_cold

EXERCISE_DIR = ROOT / "courses" / "content" / "transformers" / "chapters" / "10-scaling-and-efficiency"
EXERCISE = "mixed-precision-anywhere"


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
