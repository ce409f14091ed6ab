"""The attack battery as data: learner programs that try to break out of, or bring down, a sandbox,
each with what a contained run looks like. The backend tests (test_sandbox_attacks.py) run them
through `backend.execute`; the API tests submit the same programs as a learner.

Each case has `expect(status, reason, outputs, exit_code)`, which raises AssertionError when the
run was not contained or did not end with a clear status and reason. Programs print "LEAK ..."
for anything they should not have managed, so a failing assertion shows what got out. Where a
case needs something around the run: `before` is a program run first (same backend, as another
learner), and `marker` is a string that no host process may carry after the run.
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
SETTINGS_FILE = REPO / "platform" / "ecplatform" / "settings" / "base.py"
DOTENV = REPO / ".env"
# Unique per test session, so a leftover of an earlier session cannot fake a pass or a failure.
MARKER = f"ecmark{uuid.uuid4().hex[:12]}"
# Wall limit for attack runs: short, so the battery is quick; Limits are per request.
ATTACK_WALL_S = 5.0
SECRET_NAMES = ("SECRET_KEY", "DATABASE_URL", "REDIS_URL", "EMAIL_HOST_PASSWORD")

Expect = Callable[[str, str, list, "int | None"], None]


@dataclass(frozen=True)
class Attack:
    name: str
    code: str
    expect: Expect
    before: str = ""
    marker: str = ""
    wall_s: float = ATTACK_WALL_S


def text(outputs: list, name: str) -> str:
    return "".join(e["text"] for e in outputs if e.get("type") == "stream" and e.get("name") == name)


def all_text(outputs: list) -> str:
    return "\n".join(str(e) for e in outputs)


def no_leak(outputs: list) -> None:
    out = text(outputs, "stdout") + text(outputs, "stderr")
    assert "LEAK" not in out, f"the program got out: {out[-2000:]}"
    values = [os.environ[name] for name in SECRET_NAMES if len(os.environ.get(name, "")) >= 8]
    everything = all_text(outputs)
    for value in values:
        assert value not in everything, "a host secret reached the program's output"


def contained(*, status: str | tuple = "succeeded", reason: str | tuple = "", says: str = "") -> Expect:
    """The run ended with `status` (one or several), its reason mentions `reason` (or one of
    several), its stdout says `says`, and nothing leaked."""
    statuses = (status,) if isinstance(status, str) else status
    reasons = (reason,) if isinstance(reason, str) else reason

    def expect(st: str, why: str, outputs: list, exit_code: int | None) -> None:
        no_leak(outputs)
        assert st in statuses, f"status {st!r} ({why!r}), expected {statuses}; output: {all_text(outputs)[-1500:]}"
        if st != "succeeded":
            assert why, "a run that did not succeed must say why"
        if any(reasons):
            assert any(r in why for r in reasons), f"reason {why!r} mentions none of {reasons!r}"
        if says:
            assert says in text(outputs, "stdout"), f"stdout lacks {says!r}: {text(outputs, 'stdout')[-1500:]}"

    return expect


def blocked(label: str) -> str:
    """Learner-code helper `attempt(what, fn)`: prints OK when fn fails, LEAK when it works."""
    return """
def attempt(what, fn):
    try:
        got = fn()
    except BaseException as e:
        print("OK", what, "blocked:", type(e).__name__)
        return
    print("LEAK", what, repr(got)[:200])
"""


def _expect_output_cap(status: str, reason: str, outputs: list, exit_code: int | None) -> None:
    contained(status="failed", reason="output limit 1 MiB")(status, reason, outputs, exit_code)
    total = sum(len(e["text"].encode()) for e in outputs if e.get("type") == "stream")
    assert total <= 1024**2 + 200, f"{total} bytes of output passed the 1 MiB cap"


def _expect_early_exit(status: str, reason: str, outputs: list, exit_code: int | None) -> None:
    no_leak(outputs)
    assert status in ("failed", "error"), status
    assert exit_code == 3, exit_code
    assert "3" in reason, reason


def _expect_bad_bytes(status: str, reason: str, outputs: list, exit_code: int | None) -> None:
    contained()(status, reason, outputs, exit_code)
    out = text(outputs, "stdout")
    assert "before\ufffd\ufffdmiddle\x00after" in out, repr(out)
    assert "still here" in out


def _expect_survives_supervisor_kill(status: str, reason: str, outputs: list, exit_code: int | None) -> None:
    # Killing init of the sandbox either is refused (the program goes on) or ends the sandbox;
    # either way the run ends with a clear status, never as our error.
    no_leak(outputs)
    assert status in ("succeeded", "failed"), (status, reason)
    if status == "failed":
        assert reason


ATTACKS: list[Attack] = [
    Attack(
        "fork_bomb",
        "import os\nwhile True:\n    os.fork()\n",
        # Contained either way: the bomb's first process meets the process limit, or, on a busy
        # machine where 64 copies keep each other waiting, the wall limit ends them all.
        contained(status=("failed", "timed_out"), reason=("process limit 64", "time limit")),
    ),
    Attack(
        "thread_bomb",
        "import threading, time\nwhile True:\n"
        "    threading.Thread(target=time.sleep, args=(60,), daemon=True).start()\n",
        contained(status="failed", reason="limit"),
    ),
    Attack(
        "memory_bomb",
        "chunks = []\nwhile True:\n    chunks.append(bytearray(64 * 1024 * 1024))\n",
        contained(status="failed", reason="memory limit 2 GiB"),
        # Touching 2 GiB takes a while on a busy 2-core machine.
        wall_s=20.0,
    ),
    Attack("cpu_loop", "while True:\n    pass\n", contained(status="timed_out", reason="time limit 5 s")),
    Attack(
        "sleep_past_wall",
        "import time\nprint('going to sleep', flush=True)\ntime.sleep(600)\n",
        contained(status="timed_out", reason="time limit 5 s", says="going to sleep"),
    ),
    Attack(
        "sigterm_ignored",
        "import signal\nsignal.signal(signal.SIGTERM, signal.SIG_IGN)\nwhile True:\n    pass\n",
        contained(status="timed_out", reason="time limit 5 s"),
    ),
    Attack("endless_print", "while True:\n    print('x' * 99)\n", _expect_output_cap),
    Attack(
        "one_huge_file",
        "block = b'x' * 1024 * 1024\nwith open('/tmp/huge', 'wb') as f:\n    for _ in range(200):\n"
        "        f.write(block)\n        f.flush()\nprint('LEAK wrote 200 MiB')\n",
        contained(status="failed", reason="file size limit 10 MiB"),
    ),
    Attack(
        "thousands_of_small_files",
        "import os\nos.makedirs('/tmp/many', exist_ok=True)\nfor i in range(100_000):\n"
        "    with open(f'/tmp/many/{i}', 'wb') as f:\n        f.write(b'y' * 4096)\nprint('LEAK wrote 400 MiB')\n",
        contained(status="failed", reason="tmp space limit 64 MiB"),
    ),
    Attack(
        "tmp_file_left_for_next_run",
        f"import os\nprint('LEAK found' if os.path.exists('/tmp/{MARKER}') else 'OK tmp is fresh')\n",
        contained(says="OK tmp is fresh"),
        before=f"open('/tmp/{MARKER}', 'w').write('left behind')\nprint('wrote it')\n",
    ),
    Attack(
        "network",
        blocked("net")
        + """
import socket
for port in (5432, 6379, 8000, 8001, 5555, 22, 80, 2375):
    attempt(f"connect 127.0.0.1:{port}", lambda: socket.create_connection(("127.0.0.1", port), timeout=1))
attempt("resolve a name", lambda: socket.getaddrinfo("example.com", 80))
try:
    names = [n for _, n in socket.if_nameindex()]
except OSError:  # netlink sockets are refused (seccomp); the kernel's list, where /sys shows it
    import os
    names = os.listdir("/sys/class/net") if os.path.isdir("/sys/class/net") else []
print("OK interfaces" if set(names) <= {"lo"} else f"LEAK interfaces {names}")
""",
        contained(says="OK interfaces"),
    ),
    Attack(
        "host_files",
        blocked("files")
        + f"""
attempt("settings file", lambda: open({str(SETTINGS_FILE)!r}).read())
attempt(".env", lambda: open({str(DOTENV)!r}).read())
attempt("/etc/shadow", lambda: open("/etc/shadow").read())
attempt("the project folder", lambda: __import__("os").listdir({str(REPO)!r}))
try:
    env = open("/proc/1/environ", "rb").read().decode("utf-8", "replace")
except OSError as e:
    print("OK /proc/1/environ blocked:", type(e).__name__)
else:
    found = [n for n in {SECRET_NAMES!r} if n in env]
    print(f"LEAK /proc/1/environ has {{found}}" if found else "OK /proc/1/environ is clean")
""",
        contained(says="OK /etc/shadow"),
    ),
    Attack(
        "secrets_in_environment",
        f"import os\nfound = [n for n in {SECRET_NAMES!r} if n in os.environ]\n"
        "print(f'LEAK env {found}' if found else 'OK env is clean')\n"
        "print('OK', sorted(os.environ))\n",
        contained(says="OK env is clean"),
    ),
    Attack(
        "symlink_escape",
        blocked("symlink")
        + f"""
import os
os.symlink({str(SETTINGS_FILE)!r}, "/tmp/settings-link")
attempt("read through a symlink", lambda: open("/tmp/settings-link").read())
os.symlink("/", "/tmp/root-link")
attempt("list the project through a symlink", lambda: os.listdir("/tmp/root-link" + {str(REPO)!r}))
""",
        contained(says="OK read through a symlink"),
    ),
    Attack(
        "daemonised_child",
        f"""
import os, sys, time
if os.fork() == 0:
    os.setsid()
    if os.fork() == 0:
        os.closerange(0, 1024)
        os.execv(sys.executable, [sys.executable, "-c", "import time; time.sleep(600)", "{MARKER}"])
    os._exit(0)
time.sleep(0.5)
print("parent done")
""",
        contained(says="parent done"),
        marker=MARKER,
    ),
    Attack(
        "write_read_only_root",
        blocked("rofs")
        + """
for path in ("/evil", "/usr/evil", "/etc/evil", "/opt/evil", "/bin/evil"):
    attempt(f"write {path}", lambda: open(path, "w").write("x"))
import glob
for path in glob.glob("/opt/*/*.py")[:3]:
    attempt(f"overwrite {path}", lambda: open(path, "a").write("x"))
""",
        contained(says="OK write /usr/evil"),
    ),
    Attack(
        "ptrace_and_raw_sockets",
        blocked("ptrace")
        + """
import ctypes, os, socket
libc = ctypes.CDLL(None, use_errno=True)
PTRACE_ATTACH = 16

def ptrace(pid):
    if libc.ptrace(PTRACE_ATTACH, pid, None, None) != 0:
        raise OSError(ctypes.get_errno(), os.strerror(ctypes.get_errno()))
    return f"attached to {pid}"

attempt("ptrace pid 1", lambda: ptrace(1))
attempt("ptrace the parent", lambda: ptrace(os.getppid()))
attempt("raw socket", lambda: socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_ICMP))
attempt("packet socket", lambda: socket.socket(socket.AF_PACKET, socket.SOCK_RAW))
""",
        contained(says="OK raw socket"),
    ),
    Attack(
        "kill_own_supervisor",
        """
import os, signal
for pid in {1, os.getppid()}:
    try:
        os.kill(pid, signal.SIGKILL)
        print("sent SIGKILL to", pid, flush=True)
    except OSError as e:
        print("refused", pid, type(e).__name__, flush=True)
import time
time.sleep(0.3)
print("still running")
""",
        _expect_survives_supervisor_kill,
    ),
    Attack("exits_before_printing", "import os\nos._exit(3)\n", _expect_early_exit),
    Attack(
        "invalid_utf8_and_nul",
        "import sys\nsys.stdout.buffer.write(b'before\\xff\\xfemiddle\\x00after\\n')\nsys.stdout.flush()\n"
        "print('still here')\n",
        _expect_bad_bytes,
    ),
    Attack(
        "forged_protocol_lines",
        "import os\nfor fd in range(3, 12):\n    try:\n"
        '        os.write(fd, b\'{"type": "stream", "name": "evil", "text": 1}\\nnot json at all\\n\')\n'
        "    except OSError:\n        pass\nprint('OK done')\n",
        contained(says="OK done"),
    ),
]

ATTACKS_BY_NAME = {a.name: a for a in ATTACKS}
