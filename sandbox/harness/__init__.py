"""The only code of ours that runs inside a sandbox. Standard library only.

It runs as the sandbox's PID 1, a supervisor that nothing in the sandbox can signal, trace or read
(the kernel drops signals to a namespace's init from inside; the process is not dumpable). Cold, it
serves one request; warm (`--serve`), it imports torch, numpy and matplotlib once and serves one
request after another. For each request it keeps two children forked ahead (before the request is
read): one runs the learner's code as __main__; when that process is done, the supervisor kills
every other process of the run, then hands the other one (`Checker`), which held nothing of the
run until then, the data the learner's code left (its module globals, converted to plain values:
see `encode`), on which it runs the exercise's check, never on live objects.

A request is two JSON lines on stdin, each after a line with its length in bytes (`read_frame`):
{"code", "limits", "modules", "export", "probe"}, which the
supervisor reads and hands to the run's process, then {"check", "nonce"} (and "modules", the
check's own, when they are not the program's), which the supervisor
never reads: the check's own process reads it once the run's processes are gone (so no process
forked from the supervisor later can find the check's source or the nonce in its memory).
What comes back is JSON lines on stdout, the output protocol:

    {"type": "ready"}                                   (internal: the program is about to start)
    {"type": "stream", "name": "stdout"|"stderr", "text": ...}
    {"type": "display", "data": {"image/png": <base64>, "text/plain": "<Figure ...>"}}
    {"type": "error", "ename", "evalue", "traceback": [...]}
    {"type": "end", "nonce", "check": {"passed", "message"} | null, "exit_code", "oom"}
                                                        (the check's process, last)

The learner's processes can write to stdout too, so the worker trusts none of it blindly: it
validates every line, enforces the limits itself, and takes the check's verdict only from the end
line, which carries the run's nonce (which no process of the run ever held) and is written once
every process of the run is gone. The exit code is the learner's program's: 0 when it ran without
an exception, 1 when it raised (or the output cap stopped it), sys.exit()'s code when it called
that. The supervisor imports torch, numpy and matplotlib at its start (warm, or cold for a run with
a check), so the run's and the check's processes forked from it do not; it never initialises CUDA
(a GPU sandbox's run process does, to cap its share of GPU memory).

An exercise with a probe (`probe`: its <slug>.probe.py) also has its functions judged on inputs
the program never saw: once the run's processes are gone and before the check's process reads its
line, the supervisor forks a probe that runs only the learner's definitions and calls them on
inputs from a fresh seed (probe.py); the check gets the calls as data, check(ns, probed).

The harness is a package of modules, bottom to top: output (the channel, the pumps, figures,
errors), data (the learner's variables as data), frames (reading a request), program (the run's
process), probe (the learner's functions on fresh inputs), check (the check's process), processes
(children forked ahead, killing a run), resets (a warm sandbox back to its start), supervisor
(PID 1). The sandbox runs the package's folder
(__main__.py); the worker imports it as sandbox.harness for a few names.
"""

from .check import CHECK_BROKEN, CHECK_UNREADABLE
from .frames import read_frame
from .output import Channel, Pump, drain

__all__ = ["CHECK_BROKEN", "CHECK_UNREADABLE", "Channel", "Pump", "drain", "read_frame"]
