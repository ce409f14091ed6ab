"""What the sandbox promises beyond containment (the battery, attacks.py): limits per run, capped
mounts, the check out of the program's reach, the kernel's surface. Each tries to break one promise.
"""

from __future__ import annotations

import uuid

from sandbox import seccomp
from sandbox.base import Limits
from tests.runner.attack_kit import Attack, Expect, all_text, blocked, contained

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


def _expect_check_passed(says: str) -> Expect:
    """The program solved the exercise while tampering with the check's process: the check still
    ran (in a fresh process where needed) and passed, and nothing of it reached the program."""

    def expect(status: str, reason: str, outputs: list, exit_code: int | None) -> None:
        contained(status="succeeded", says=says)(status, reason, outputs, exit_code)
        checks = [e for e in outputs if e.get("type") == "check"]
        assert [e["passed"] for e in checks] == [True], f"the check did not run and pass: {checks}"
        assert CHECK_SECRET not in all_text(outputs), "the check's source reached the program"

    return expect


# The other processes of the sandbox (the check's process waits among them for the run to end), and
# what a program of the same user can try on them: read their memory and descriptors (its stdin
# holds the check's source once the run is over), lower their rlimits, stop or kill them.
OTHER_PROCESSES = """
import os, resource, signal
answer = 42
me = os.getpid()
others = [int(p) for p in os.listdir("/proc") if p.isdigit() and int(p) not in (1, me)]
for pid in others:
    for name in ("mem", "environ", "fd/0", "fd/3"):
        attempt(f"read /proc/<pid>/{name}", lambda: open(f"/proc/{pid}/{name}", "rb").read(1 << 16))
"""

PROPERTIES: list[Attack] = [
    Attack(
        "check_process_stopped",
        blocked("check process")
        + OTHER_PROCESSES
        + """
for pid in others:
    os.kill(pid, signal.SIGSTOP)
print(f"OK stopped {len(others)}")
""",
        _expect_check_passed(says="OK stopped"),
        check=UNSOLVED_CHECK,
    ),
    Attack(
        "check_process_tampered_with",
        blocked("check process")
        + OTHER_PROCESSES
        + """
for pid in others:
    for which in (resource.RLIMIT_CPU, resource.RLIMIT_AS, resource.RLIMIT_NOFILE, resource.RLIMIT_FSIZE):
        try:
            resource.prlimit(pid, which, (1, 1))
        except OSError:
            pass
for pid in others:
    os.kill(pid, signal.SIGKILL)
print(f"OK tampered with {len(others)}")
""",
        _expect_check_passed(says="OK tampered with"),
        check=UNSOLVED_CHECK,
    ),
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
# Until all five hold their block, or one was stopped (a child ends only if killed): the five
# blocks cannot be held at once then, so there is nothing more to wait for.
got, stopped, deadline = 0, [], time.monotonic() + 15
while got < 5 and not stopped and time.monotonic() < deadline:
    if select.select([r], [], [], 0.1)[0]:
        data = os.read(r, 5)
        if not data:
            break
        got += len(data)
    stopped = [pid for pid in children if os.waitpid(pid, os.WNOHANG) != (0, 0)]
alive = [pid for pid in children if pid not in stopped and os.waitpid(pid, os.WNOHANG) == (0, 0)]
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
