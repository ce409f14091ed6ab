"""Attacks on containment (the battery, attacks.py): programs that try to get out of the sandbox
(network, host files, secrets, symlinks, ptrace, the read-only root, the supervisor) or to bring it
or the worker down (fork, thread, memory, CPU, output and file floods, a daemon left behind, bytes
and protocol lines that are not ours).
"""

from __future__ import annotations

from tests.runner.attack_kit import (
    DOTENV,
    MARKER,
    REPO,
    SECRET_NAMES,
    SETTINGS_FILE,
    Attack,
    blocked,
    contained,
    no_leak,
    text,
)

# The wall limit of the attacks whose time-out is what they test.
TIMEOUT_WALL_S = 3.0


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


CONTAINMENT: list[Attack] = [
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
    # The time-out is what these three test: each has a short wall limit of its own (3 s), long
    # enough for the program to be running (and, for the sleeper, to say so) before it ends.
    Attack(
        "cpu_loop",
        "while True:\n    pass\n",
        contained(status="timed_out", reason=f"time limit {TIMEOUT_WALL_S:g} s"),
        wall_s=TIMEOUT_WALL_S,
    ),
    Attack(
        "sleep_past_wall",
        "import time\nprint('going to sleep', flush=True)\ntime.sleep(600)\n",
        contained(status="timed_out", reason=f"time limit {TIMEOUT_WALL_S:g} s", says="going to sleep"),
        wall_s=TIMEOUT_WALL_S,
    ),
    Attack(
        "sigterm_ignored",
        "import signal\nsignal.signal(signal.SIGTERM, signal.SIG_IGN)\nwhile True:\n    pass\n",
        contained(status="timed_out", reason=f"time limit {TIMEOUT_WALL_S:g} s"),
        wall_s=TIMEOUT_WALL_S,
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
