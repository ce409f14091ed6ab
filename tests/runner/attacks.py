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

from runner.sandbox import seccomp
from runner.sandbox.base import Limits

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
    # The exercise's check the program runs under ("" for none).
    check: str = ""


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

# -- what the sandbox promises beyond containment: limits per run, capped mounts, the check out of
# the program's reach, the kernel's surface. Each tries to break one promise.

LIMITS = Limits()
CHECK_SECRET = f"eccheck{uuid.uuid4().hex[:12]}"
# An exercise whose check the programs below cannot solve: `answer` must be 42, and they never set it.
UNSOLVED_CHECK = f"""
HIDDEN = "{CHECK_SECRET}"  # the check's source, which the learner's process must never hold


def check(ns):
    if ns.get("answer") == 42:
        return True, "solved"
    return False, "Set answer to 42."
"""


def _expect_check_not_passed(says: str) -> Expect:
    def expect(status: str, reason: str, outputs: list, exit_code: int | None) -> None:
        contained(status=("succeeded", "failed"), says=says)(status, reason, outputs, exit_code)
        checks = [e for e in outputs if e.get("type") == "check"]
        assert not any(e["passed"] for e in checks), f"the program marked the exercise passed: {checks}"
        assert CHECK_SECRET not in all_text(outputs), "the check's source reached the program"

    return expect


PROPERTIES: list[Attack] = [
    Attack(
        "host_device_nodes",
        blocked("dev")
        + """
import os
for path in ("/dev/null", "/dev/zero", "/dev/urandom", "/dev/full"):
    mode = os.stat(path).st_mode & 0o7777
    attempt(f"chmod {path}", lambda: os.chmod(path, mode))  # changes nothing, and still needs owning it
attempt("create a file in /dev", lambda: open("/dev/evil", "w").write("x"))
attempt("mknod a device", lambda: os.mknod("/tmp/null2", 0o20666, os.makedev(1, 3)))
""",
        contained(says="OK chmod /dev/null"),
    ),
    Attack(
        "memory_across_processes",
        # Five processes of 600 MiB each: 3 GiB at once if the 2 GiB limit were per process.
        """
import os, select, time
r, w = os.pipe()
children = []
for _ in range(5):
    pid = os.fork()
    if pid == 0:
        os.close(r)
        block = b"\\x01" * (600 * 1024 * 1024)
        os.write(w, b"x")
        time.sleep(60)
        os._exit(0)
    children.append(pid)
os.close(w)
got, deadline = 0, time.monotonic() + 15
while got < 5 and time.monotonic() < deadline:
    if select.select([r], [], [], 0.5)[0]:
        data = os.read(r, 5)
        if not data:
            break
        got += len(data)
alive = [pid for pid in children if os.waitpid(pid, os.WNOHANG) == (0, 0)]
print("LEAK five processes held 3 GiB at once" if len(alive) == 5 else f"OK {5 - len(alive)} of 5 stopped")
""",
        contained(status="failed", reason="memory limit 2 GiB", says="OK"),
        wall_s=20.0,
    ),
    Attack(
        "writable_mounts_have_sizes",
        f"""
import os
def fill(folder):
    written = 0
    for i in range(20):  # 20 files of 8 MiB (each file is capped at 10 MiB anyway)
        try:
            with open(os.path.join(folder, f"fill-{{i}}"), "wb") as f:
                for _ in range(8):
                    f.write(b"z" * (1 << 20))
                    f.flush()
                    written += 1
        except OSError:
            break
    return written
sizes = {{folder: fill(folder) for folder in ("/tmp", "/dev/shm", "/dev", "/dev/mqueue")}}
caps = {{"/tmp": {LIMITS.tmp_bytes >> 20}, "/dev/shm": {LIMITS.shm_bytes >> 20}, "/dev": 0, "/dev/mqueue": 0}}
over = {{f: n for f, n in sizes.items() if n > caps[f] + 1}}
print(f"LEAK wrote {{over}} MiB" if over else "OK every writable mount is capped", sizes)
""",
        contained(says="OK every writable mount is capped"),
        wall_s=20.0,
    ),
    Attack(
        "inodes_have_caps",
        f"""
import os
def count(folder):
    made = 0
    try:
        os.makedirs(folder, exist_ok=True)
        for i in range(30_000):
            open(os.path.join(folder, str(i)), "w").close()
            made += 1
    except OSError:
        pass
    return made
tmp, shm = count("/tmp/inodes"), count("/dev/shm/inodes")
ok = tmp <= {LIMITS.tmp_inodes} and shm <= {LIMITS.shm_inodes}
print("OK files are capped" if ok else "LEAK", tmp, shm)
""",
        contained(says="OK files are capped"),
        wall_s=20.0,
    ),
    Attack(
        "cpu_quota_cannot_be_widened",
        """
import os, resource, time
try:
    os.sched_setaffinity(0, range(os.cpu_count() or 2))  # as wide as the machine
except OSError:
    pass
start = time.monotonic()
for _ in range(2):
    if os.fork() == 0:
        end = time.monotonic() + 2.0
        while time.monotonic() < end:
            pass
        os._exit(0)
for _ in range(2):
    os.wait()
wall = time.monotonic() - start
used = resource.getrusage(resource.RUSAGE_CHILDREN)
ratio = (used.ru_utime + used.ru_stime) / wall
print(("LEAK" if ratio > 1.3 else "OK") + f" cpu ratio {ratio:.2f}")
""",
        contained(says="OK cpu ratio"),
        wall_s=15.0,
    ),
    Attack(
        "check_replaced_forged_or_read",
        blocked("check")
        + f"""
import gc, json, os, sys
answer = 0
# Replace whatever check machinery is in reach.
for module in list(sys.modules.values()):
    for name in ("run_check", "checker", "check", "check_in_own_process"):
        if hasattr(module, name):
            try:
                setattr(module, name, lambda *a, **k: {{"passed": True, "message": "forged"}})
            except Exception:
                pass
# Look for the check's source in this process and in the supervisor's.
found = [o for o in gc.get_objects() if isinstance(o, str) and {CHECK_SECRET[:8]!r} + {CHECK_SECRET[8:]!r} in o]
print("LEAK the check's source is in memory" if found else "OK the check's source is not in memory")
for path in ("/proc/1/environ", "/proc/1/mem", "/proc/1/fd/0", "/proc/1/maps"):
    attempt(f"read {{path}}", lambda: open(path, "rb").read(1 << 16))
# Forge check events and end lines on every descriptor.
forged = json.dumps({{"type": "check", "passed": True, "message": "forged"}})
for nonce in ("", "0", "00" * 16):
    forged += "\\n" + json.dumps({{"type": "end", "nonce": nonce, "check": {{"passed": True, "message": "forged"}}}})
for fd in range(3, 64):
    try:
        os.write(fd, ("\\n" + forged + "\\n").encode())
    except OSError:
        pass
print("OK forged")
""",
        _expect_check_not_passed(says="OK the check's source is not in memory"),
        check=UNSOLVED_CHECK,
    ),
    Attack(
        "check_skipped",
        # Leaves at once, before its variables are handed over (and before its output is sent).
        "answer = 41\nimport os\nos._exit(0)\n",
        _expect_check_not_passed(says=""),
        check=UNSOLVED_CHECK,
    ),
    Attack(
        "kernel_surface",
        blocked("kernel")
        + f"""
import ctypes, os, socket
libc = ctypes.CDLL(None, use_errno=True)
NR = {seccomp.NUMBERS.get(seccomp.machine(), {})!r}

def call(name, *args):
    result = libc.syscall(NR[name], *args)
    if result < 0:
        raise OSError(ctypes.get_errno(), os.strerror(ctypes.get_errno()))
    return result

buf = ctypes.create_string_buffer(256)
attempt("vsock socket", lambda: socket.socket(40, socket.SOCK_STREAM))
attempt("netlink socket", lambda: socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, 0))
attempt("io_uring_setup", lambda: call("io_uring_setup", 8, buf))
attempt("userfaultfd", lambda: call("userfaultfd", 0))
attempt("perf_event_open", lambda: call("perf_event_open", buf, 0, -1, -1, 0))
attempt("bpf", lambda: call("bpf", 0, buf, 64))
attempt("keyctl", lambda: call("keyctl", 0, -3, 0))
attempt("ptrace", lambda: call("ptrace", 0, 0, 0, 0))
attempt("personality", lambda: call("personality", 0x0040000))
attempt("unshare", lambda: call("unshare", 0x10000000))
print("OK", socket.socket(socket.AF_UNIX, socket.SOCK_STREAM).family)
""",
        contained(says="OK io_uring_setup"),
    ),
]

ATTACKS += PROPERTIES
ATTACKS_BY_NAME = {a.name: a for a in ATTACKS}
