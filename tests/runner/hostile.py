"""Programs a hostile learner submits against the run path itself (not the sandbox): they write to
the protocol fd directly, as any program can. Used by the output budget and run-finish tests, and
by bench/soak.py.

The protocol fd is a private copy of the harness's original stdout: a pipe that is neither fd 0, 1
nor 2, open for writing. A warm run's process also holds the server's status pipe, open for
writing too, which ignores any line that is not an exit code; so the programs write to every such
fd, and what reaches the protocol channel is what counts.
"""

PROTOCOL_FDS = """
import fcntl, os, stat, sys, time

def protocol_fds():
    fds = []
    for name in os.listdir('/proc/self/fd'):
        fd = int(name)
        if fd in (0, 1, 2):
            continue
        try:
            if stat.S_ISFIFO(os.fstat(fd).st_mode) and fcntl.fcntl(fd, fcntl.F_GETFL) & os.O_ACCMODE == os.O_WRONLY:
                fds.append(fd)
        except OSError:
            pass
    return fds

FDS = protocol_fds()

def write_all(data):
    for fd in FDS:
        view = memoryview(data)
        try:
            while view:
                view = view[os.write(fd, view):]
        except OSError:
            pass
"""

# Error events, each about 0.9 MB, a hundred of them: 90 MB if nothing stopped it.
ERROR_FLOOD = (
    PROTOCOL_FDS
    + """
import json
print('flooding', flush=True)
event = {"type": "error", "ename": "Flood", "evalue": "e" * 9000, "traceback": ["t" * 9000] * 100}
line = (json.dumps(event) + "\\n").encode()
for _ in range(100):
    write_all(line)
time.sleep(60)
"""
)

# 25 MiB on the protocol fd without a newline, then the program waits.
NO_NEWLINE_FLOOD = (
    PROTOCOL_FDS
    + """
print('flooding', flush=True)
time.sleep(0.5)  # the line above goes out as its own event before the flood starts
chunk = b"x" * 65536
for _ in range(400):
    write_all(chunk)
time.sleep(60)
"""
)

# An error event whose name holds a NUL (a Python class name cannot, but a line on the protocol
# fd can), after some ordinary output.
NUL_NAME = (
    PROTOCOL_FDS
    + """
import json
print('before the error', flush=True)
time.sleep(0.2)
event = {"type": "error", "ename": "Bad\\x00Name", "evalue": "nul \\x00 inside", "traceback": ["line\\x00one"]}
write_all((json.dumps(event) + "\\n").encode())
sys.exit(1)
"""
)
