"""The check, in a process of its own, forked before the run and handed the run's data once every
process of the run is gone."""

from __future__ import annotations

import contextlib
import fcntl
import inspect
import json
import os
import resource
import signal

from .data import decode, decode_namespace
from .frames import read_frame
from .output import CHUNK
from .probe import PROBE_WALL_S, probe_calls
from .program import install_modules, set_limits, write_all

# --- the check (in a process of its own, after the run's processes are gone) -----------------------

CHECK_UNREADABLE = "The check could not read what your code left behind. Keep the names the exercise asks for."
CHECK_BROKEN = "The check could not run on this code."


PROBE_UNREADABLE = (
    "Calling your functions on fresh inputs did not finish: they ran past the time limit (at most "
    f"{PROBE_WALL_S:g} s after your program), returned too much, or their process was stopped."
)


class ProbeCall:
    """One call the probe made of a learner's function, as a check sees it: the function's name,
    the arguments (made again here from the seed, never taken back from the probe), and what came
    back as data (`value`) or the error it raised (`error`, empty when none)."""

    def __init__(self, function: str, args: tuple, kwargs: dict, value=None, error: str = ""):
        self.function, self.args, self.kwargs, self.value, self.error = function, args, kwargs, value, error

    def __repr__(self) -> str:
        return f"<call of {self.function}(): {'error ' + self.error if self.error else 'a value'}>"


def probe_read(probe: dict, results: bytes) -> list[ProbeCall]:
    calls, _ = probe_calls(probe["source"], int(probe["seed"]))
    try:
        raw = json.loads(results.decode("utf-8")) if probe.get("ok") else None
    except ValueError:
        raw = None
    if not isinstance(raw, list) or len(raw) != len(calls):
        return [ProbeCall(name, args, kwargs, error=PROBE_UNREADABLE) for name, args, kwargs in calls]
    out = []
    for (name, args, kwargs), result in zip(calls, raw, strict=True):
        if isinstance(result, dict) and "error" in result:
            out.append(ProbeCall(name, args, kwargs, error=str(result["error"])))
            continue
        try:
            out.append(ProbeCall(name, args, kwargs, value=decode(result["value"])))
        except Exception:
            out.append(ProbeCall(name, args, kwargs, error="what your function returned could not be read"))
    return out


def run_check(check_code: str, ns: dict, probed: list[ProbeCall] | None = None) -> dict:
    """The exercise's check(ns), or check(ns, probed) when the exercise has a probe (a check that
    takes a second parameter gets the probe's calls)."""
    try:
        check_ns: dict = {"__name__": "exercise_check"}
        exec(compile(check_code, "<check>", "exec"), check_ns)  # noqa: S102 - the exercise's own check
        check = check_ns["check"]
        takes_probe = len(inspect.signature(check).parameters) >= 2
        result = check(ns, probed) if takes_probe else check(ns)
        passed, message = result if isinstance(result, tuple) else (result, "")
        return {"passed": passed is True, "message": str(message)[:2000]}
    except BaseException:
        # A check that breaks must not show its internals (or the answer) to the learner.
        return {"passed": False, "message": CHECK_BROKEN}


def checker(
    data: bytes | None, modules, limits: dict, *, exit_code: int, oom: bool, probe: dict | None, results: bytes
) -> None:
    """The check's process, once every process of the run is gone: it reads the request's second
    line ({"check", "nonce"}) from stdin itself, so neither the check's source nor the nonce ever
    enters the supervisor's memory (from which the next run's process is forked); runs the check on
    the learner's variables (`data`; None when the program did not end well, so no check runs) and
    writes the end line, which also carries the program's exit code and whether the sandbox killed
    a process for memory (so a cold sandbox's worker need not wait for the sandbox to exit to know
    them); then says so on DONE_FD (its exit, which unmaps torch, takes milliseconds the run need
    not wait for). Never returns."""
    try:
        try:
            second = json.loads(read_frame(0) or b"{}")
        except ValueError:
            second = {}  # no nonce: an end line the worker does not take
        nonce, check_code = str(second.get("nonce", "")), str(second.get("check") or "")
        # The course's reference modules when the run's own differ (a learner's copy of them).
        modules = second.get("modules", modules)
        out = os.dup(1)
        devnull = os.open(os.devnull, os.O_RDWR)
        for fd in (0, 1, 2):  # what the check prints goes nowhere
            os.dup2(devnull, fd)
        verdict = None
        if check_code and data is not None:
            set_limits({k: v for k, v in limits.items() if k in ("address_space", "cpu_s")})
            install_modules(modules)
            try:
                ns = decode_namespace(data) if data else None
            except Exception:
                ns = None
            if ns is None:
                verdict = {"passed": False, "message": CHECK_UNREADABLE}
            else:
                try:
                    probed = probe_read(probe, results) if probe else None
                except Exception:
                    probed = None
                    verdict = {"passed": False, "message": CHECK_BROKEN}  # the probe source itself broke
                else:
                    verdict = run_check(check_code, ns, probed)
        # A newline first: the run's last line may lack one, and the end line must start a line.
        end = {"type": "end", "nonce": nonce, "check": verdict, "exit_code": exit_code, "oom": oom}
        write_all(out, ("\n" + json.dumps(end) + "\n").encode())
        os.write(DONE_FD, b"1")
    finally:
        os._exit(0)


# In the check's process forked ahead: the pipe the supervisor hands it the run's end on (a JSON
# line, then the learner's variables), and the pipe it says on that its end line is written.
HANDOVER_FD = 3
DONE_FD = 4


class Checker:
    """The next check's process, forked ahead from the supervisor (never from a run's process),
    and the supervisor's ends of its pipes. It waits holding nothing of the run: the run's end, the
    learner's variables and (from stdin) the check and nonce reach it only once every process of
    the run is gone. So the run does not wait for a fork of a process with torch loaded, and a
    check that reads tensors never imports torch a second time (the supervisor did, cold too).

    A run's processes run as the same user, so they may kill it, stop it or lower its rlimits:
    each only loses the learner their own check. The supervisor spares it when it ends the run's
    processes, then uses it only if it is still waiting, untouched; otherwise it forks a fresh one,
    as every check was before."""

    def __init__(self, pid: int, handover_w: int, done_r: int):
        self.pid = pid
        self.handover_w = handover_w
        self.done_r = done_r

    def untouched(self) -> bool:
        """Still alive and waiting (started again if a run stopped it), with the supervisor's
        rlimits."""
        try:
            if os.waitpid(self.pid, os.WNOHANG) != (0, 0):
                return False
            os.kill(self.pid, signal.SIGCONT)
            return all(resource.prlimit(self.pid, which) == resource.getrlimit(which) for which in RLIMITS)
        except (ChildProcessError, ProcessLookupError, OSError):
            return False

    def hand(
        self,
        data: bytes | None,
        modules,
        limits: dict,
        *,
        exit_code: int,
        oom: bool,
        probe: dict | None = None,
        results: bytes | None = None,
    ) -> None:
        """`probe`: {"source", "seed"} when the probe ran, and its `results` (None: it did not
        finish)."""
        head = {
            "exit_code": exit_code,
            "oom": oom,
            "modules": modules,
            "limits": limits,
            "data": data is not None,
            "data_len": len(data or b""),
            "probe": {**probe, "ok": results is not None} if probe else None,
        }
        with contextlib.suppress(OSError):  # a checker that died says nothing on DONE_FD
            write_all(self.handover_w, json.dumps(head).encode() + b"\n" + (data or b"") + (results or b""))
        os.close(self.handover_w)

    def wait_done(self) -> None:
        """Until its end line is written (or it died)."""
        with contextlib.suppress(OSError):
            os.read(self.done_r, 1)
        os.close(self.done_r)

    def discard(self) -> None:
        for fd in (self.handover_w, self.done_r):
            with contextlib.suppress(OSError):
                os.close(fd)


RLIMITS = [getattr(resource, name) for name in dir(resource) if name.startswith("RLIMIT_")]


def fork_checker() -> Checker:
    handover_r, handover_w = os.pipe()
    done_r, done_w = os.pipe()
    pid = os.fork()
    if pid == 0:
        with contextlib.suppress(BaseException):
            # Its own pipes into place, and nothing else kept: the supervisor's ends of the run's
            # pipes least of all (a run's process reads its request until every writer is gone).
            handover_r, done_w = (fcntl.fcntl(fd, fcntl.F_DUPFD, 100) for fd in (handover_r, done_w))
            os.dup2(handover_r, HANDOVER_FD, inheritable=False)
            os.dup2(done_w, DONE_FD, inheritable=False)
            os.closerange(DONE_FD + 1, 1 << 16)
            chunks = []
            while chunk := os.read(HANDOVER_FD, CHUNK):
                chunks.append(chunk)
            if chunks:  # nothing: the sandbox is closing
                head, _, rest = b"".join(chunks).partition(b"\n")
                end = json.loads(head)
                del chunks
                data, results = rest[: end["data_len"]], rest[end["data_len"] :]
                checker(
                    data if end["data"] else None,
                    end["modules"],
                    end["limits"],
                    exit_code=end["exit_code"],
                    oom=end["oom"],
                    probe=end["probe"],
                    results=results,
                )
        os._exit(0)
    os.close(handover_r)
    os.close(done_w)
    return Checker(pid, handover_w, done_r)
