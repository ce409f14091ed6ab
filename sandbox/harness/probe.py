"""The probe: the exercise's functions called on inputs the learner's program never saw.

A check reads what the program left, as data; it can never call the learner's code. An exercise
that asks for a function wants more than the values its program printed: it wants the function to
be right on any input. So when the program has ended well and every process of the run is gone,
the supervisor forks one more process of the run, the probe, from itself (never from the run: none
of the program's monkey-patches, threads or state come along), which

1. reads the exercise's probe source (`<slug>.probe.py`, public like the instructions: it holds
   no answer) and calls its `calls(seed)` for the calls to make, with a seed the supervisor drew
   from the kernel after the program had ended, so no process of the program could know it;
2. replaces each library function the exercise says to write "by hand" (the source's `BY_HAND`,
   dotted names such as "torch.softmax") with one that refuses, before the learner's code is read,
   so an `from torch import softmax` in it gets the refusal too;
3. runs only the learner's definitions: the top-level imports, functions, classes and plain
   constants of their code, never its other statements (the program already ran them), and puts
   back whatever those definitions changed in the modules they import;
4. calls each named function on its inputs and writes each result (or the error it raised) back
   as data, in the encoding the check's namespace uses.

The probe runs learner code, so it is treated as the run was: the run's limits, its output thrown
away, a wall of PROBE_WALL_S, and every process it starts killed when it is done. It holds nothing
secret (the check's source and the nonce are read later, by the check's own process, which also
computes the inputs again from the seed and never takes them back from the probe).
"""

from __future__ import annotations

import ast
import contextlib
import importlib
import json
import os
import random
import select
import signal
import sys
import time

from .data import DATA_LIMIT, Encoder
from .output import CHUNK
from .program import install_modules, set_limits, write_all

PROBE_WALL_S = 10.0
# Of the run's wall, what the probe leaves for the check's process after it.
CHECK_MARGIN_S = 1.0
# The rest of a run's CPU allowance is no use to a probe that calls a few functions.
PROBE_CPU_S = 10
# The modules (and torch.Tensor) whose attributes a learner's definitions may not change for good (a
# decorator or a default argument that patches torch runs when the definition does).
GUARDED = ("builtins", "math", "numpy", "torch", "torch.nn", "torch.nn.functional", "torch.linalg", "torch.special")


def probe_seed() -> int:
    """A fresh seed from the kernel, drawn by the supervisor once the program has ended."""
    return int.from_bytes(os.urandom(6), "big")


def definitions(code: str) -> ast.Module:
    """The learner's code reduced to what defines things: imports, functions, classes and
    assignments of constants (`D = 8`, `SCALE = 1 / 8 ** 0.5`, `NAMES = ("a", "b")`). A call, a
    loop or any other statement at the top level is left out: the program ran it already."""
    tree = ast.parse(code)
    keep = [node for node in tree.body if _defines(node)]
    return ast.Module(body=keep, type_ignores=[])


def _defines(node: ast.stmt) -> bool:
    if isinstance(node, ast.Import | ast.ImportFrom | ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
        return True
    if isinstance(node, ast.Assign | ast.AnnAssign) and node.value is not None:
        targets = node.targets if isinstance(node, ast.Assign) else [node.target]
        return all(isinstance(target, ast.Name) for target in targets) and _constant(node.value)
    return False


def _constant(node: ast.expr) -> bool:
    if isinstance(node, ast.Constant):
        return True
    if isinstance(node, ast.UnaryOp):
        return _constant(node.operand)
    if isinstance(node, ast.BinOp):
        return _constant(node.left) and _constant(node.right)
    if isinstance(node, ast.Tuple | ast.List | ast.Set):
        return all(_constant(item) for item in node.elts)
    return False


def _resolve(dotted: str):
    """(owner, attribute name) of a dotted name such as "torch.nn.functional.softmax" or
    "torch.Tensor.softmax"; None when it does not resolve."""
    parts = dotted.split(".")
    for cut in range(len(parts) - 1, 0, -1):
        # A module not imported yet is imported now, so a later import of it finds the refusal.
        with contextlib.suppress(Exception):
            importlib.import_module(".".join(parts[:cut]))
        owner = sys.modules.get(".".join(parts[:cut]))
        if owner is None:
            continue
        for name in parts[cut:-1]:
            owner = getattr(owner, name, None)
            if owner is None:
                return None
        return (owner, parts[-1]) if hasattr(owner, parts[-1]) else None
    return None


# Refusing kernels registered for "aten::<op>" names live as long as the probe does.
_LIBRARIES: list = []
# The dispatch keys a CPU probe reaches an operator through, whatever Python name led there (a
# tensor's C base class, torch._C._VariableFunctions, torch.ops).
DISPATCH_KEYS = ("CPU", "AutogradCPU", "CompositeImplicitAutograd")


def block_by_hand(names) -> None:
    """Each name refused: a dotted Python name ("torch.softmax") is replaced where it lives; an
    operator ("aten::_softmax") gets a refusing kernel at the dispatcher, which every route to it
    goes through."""
    for dotted in names:
        if str(dotted).startswith("aten::"):
            _refuse_operator(str(dotted))
            continue
        found = _resolve(str(dotted))
        if found is None:
            continue
        owner, attribute = found

        def refused(*args, _name=dotted, **kwargs):
            raise RuntimeError(f"{_name} is not available here: this exercise asks you to write it by hand")

        with contextlib.suppress(AttributeError, TypeError):
            setattr(owner, attribute, refused)


def by_hand_unknown(names) -> list[str]:
    """The names no refusal would reach here: a misspelt one leaves the real function to the
    learner (validate_course reports them; the probe skips them)."""
    unknown = []
    for name in map(str, names):
        if name.startswith("aten::"):
            torch = importlib.import_module("torch")
            if not hasattr(torch.ops.aten, name.removeprefix("aten::")):
                unknown.append(name)
        elif _resolve(name) is None:
            unknown.append(name)
    return unknown


def _refuse_operator(name: str) -> None:
    torch = sys.modules.get("torch")
    if torch is None:
        return
    op = name.removeprefix("aten::")

    def refused(*args, **kwargs):
        raise RuntimeError(f"{name} is not available here: this exercise asks you to write it by hand")

    if not _LIBRARIES:
        _LIBRARIES.append(torch.library.Library("aten", "IMPL"))
    for key in DISPATCH_KEYS:
        with contextlib.suppress(Exception):  # an operator without that key: another key holds it
            _LIBRARIES[0].impl(op, refused, key)


def deny_exec() -> None:
    """No program may be started from the probe: a fresh interpreter would have none of the
    refusals. A seccomp filter (on top of the sandbox's own) makes execve and execveat fail with
    EPERM; without it (an architecture this does not know) the probe does not run at all."""
    import ctypes
    import platform

    machine = platform.machine()
    calls = {"x86_64": (59, 322), "aarch64": (221, 281)}.get(machine)  # execve, execveat
    arch = {"x86_64": 0xC000003E, "aarch64": 0xC00000B7}.get(machine)  # AUDIT_ARCH_*
    if calls is None or arch is None:
        raise OSError(f"no exec filter for {machine}")
    load, jeq, jge, ret = 0x20, 0x15, 0x35, 0x06  # BPF_LD|W|ABS, BPF_JMP|JEQ|K, BPF_JMP|JGE|K, BPF_RET|K
    allow, eperm, kill = 0x7FFF0000, 0x00050001, 0x80000000
    # (code, jump if true, jump if false, k); a jump skips that many instructions.
    program = [(load, 0, 0, 4), (jeq, 1, 0, arch), (ret, 0, 0, kill), (load, 0, 0, 0)]
    if machine == "x86_64":  # x32 calls carry bit 30: none is let through
        program.append((jge, 3, 0, 0x40000000))
    program += [(jeq, 2, 0, calls[0]), (jeq, 1, 0, calls[1]), (ret, 0, 0, allow), (ret, 0, 0, eperm)]
    filters = (ctypes.c_uint64 * len(program))(
        *[code | (jt << 16) | (jf << 24) | (k << 32) for code, jt, jf, k in program]
    )

    class Prog(ctypes.Structure):
        _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_void_p)]

    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(38, 1, 0, 0, 0) != 0:  # PR_SET_NO_NEW_PRIVS
        raise OSError(ctypes.get_errno(), "prctl(PR_SET_NO_NEW_PRIVS)")
    prog = Prog(len(program), ctypes.cast(filters, ctypes.c_void_p))
    if libc.prctl(22, 2, ctypes.byref(prog), 0, 0) != 0:  # PR_SET_SECCOMP, SECCOMP_MODE_FILTER
        raise OSError(ctypes.get_errno(), "prctl(PR_SET_SECCOMP)")


def _snapshot() -> list[tuple[object, dict]]:
    owners: list[object] = [sys.modules[name] for name in GUARDED if name in sys.modules]
    torch = sys.modules.get("torch")
    if torch is not None:
        owners.append(torch.Tensor)
    return [(owner, dict(vars(owner))) for owner in owners]


def _restore(shots: list[tuple[object, dict]]) -> None:
    """Puts back every attribute the definitions changed, added or removed in a guarded module or
    class (a class's own dict is read-only, so it goes through setattr)."""
    for owner, before in shots:
        now = vars(owner)
        for name in [name for name in now if name not in before]:
            with contextlib.suppress(AttributeError, TypeError):
                delattr(owner, name)
        for name, value in before.items():
            if now.get(name, _MISSING) is not value:
                with contextlib.suppress(AttributeError, TypeError):
                    setattr(owner, name, value)


_MISSING = object()


def probe_calls(source: str, seed: int) -> tuple[list[tuple[str, tuple, dict]], list[str]]:
    """The calls the probe source asks for with `seed`, and its BY_HAND names. The check's process
    calls this too, to have the inputs without taking them from the probe."""
    namespace: dict = {"__name__": "exercise_probe"}
    exec(compile(source, "<probe>", "exec"), namespace)  # noqa: S102 - the exercise's own probe
    calls = []
    for item in namespace["calls"](seed):  # (name, args) or (name, args, kwargs)
        name, args = item[0], item[1]
        kwargs = item[2] if len(item) > 2 else {}
        calls.append((str(name), tuple(args), dict(kwargs)))
    return calls, [str(name) for name in namespace.get("BY_HAND", ())]


def run_probe(code: str, source: str, seed: int) -> bytes:
    """In the probe's process: the calls, made on the learner's definitions; the results as data."""
    calls, by_hand = probe_calls(source, seed)
    block_by_hand(by_hand)
    learner: dict = {"__name__": "learner", "__builtins__": __builtins__}
    shots = _snapshot()
    try:
        exec(compile(definitions(code), "<your code>", "exec"), learner)  # noqa: S102 - the learner's own definitions
        failed = ""
    except BaseException as e:
        failed = f"{type(e).__name__}: {e}"
    _restore(shots)
    encoder = Encoder(DATA_LIMIT)
    results = []
    for name, args, kwargs in calls:
        function = learner.get(name)
        if failed:
            results.append({"error": f"your definitions did not run: {failed}"})
        elif not callable(function):
            results.append({"error": f"your code defines no function {name}()"})
        else:
            try:
                results.append({"value": encoder.value(function(*args, **kwargs))})
            except BaseException as e:
                results.append({"error": f"{type(e).__name__}: {e}"[:500]})
    return json.dumps(results).encode()


def fork_probe(*, code: str, source: str, seed: int, modules, limits: dict) -> int:
    """Forks the probe's process; returns the read end of its results pipe (the supervisor kills
    the process, and any it started, with the rest of the run's)."""
    results_r, results_w = os.pipe()
    pid = os.fork()
    if pid == 0:
        with contextlib.suppress(BaseException):
            os.close(results_r)
            results_w = os.dup2(results_w, 3, inheritable=False) if results_w != 3 else 3
            os.closerange(4, 1 << 16)
            devnull = os.open(os.devnull, os.O_RDWR)
            for fd in (0, 1, 2):  # what the learner's functions print goes nowhere
                os.dup2(devnull, fd)
            for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGPIPE):
                signal.signal(sig, signal.SIG_DFL)
            cpu = min(int(limits.get("cpu_s") or PROBE_CPU_S), PROBE_CPU_S)
            set_limits({**{k: v for k, v in limits.items() if k in ("pids", "address_space")}, "cpu_s": cpu})
            install_modules(modules)
            deny_exec()
            random.seed()
            write_all(3, run_probe(code, source, seed))
        os._exit(0)
    os.close(results_w)
    return results_r


def read_results(results_r: int, *, wall_s: float = PROBE_WALL_S) -> bytes | None:
    """The probe's results, or None when it wrote too much, broke off or ran past its wall."""
    chunks, size = [], 0
    deadline = time.monotonic() + wall_s
    poller = select.poll()
    poller.register(results_r, select.POLLIN)
    try:
        while True:
            left = deadline - time.monotonic()
            if left <= 0 or not poller.poll(int(left * 1000) + 1):
                return None
            chunk = os.read(results_r, CHUNK)
            if not chunk:
                break
            size += len(chunk)
            if size > DATA_LIMIT:
                return None
            chunks.append(chunk)
    finally:
        os.close(results_r)
    # A probe cut short (its CPU limit, a kill) leaves JSON that does not parse: the check's process
    # says so.
    return b"".join(chunks)
