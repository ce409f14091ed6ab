"""The probe (sandbox/harness/probe.py) on each backend, cold and warm: once the learner's program
has ended, the exercise's functions are called on inputs no process of the program could know, in
a process of the run that has none of the program's state, and the check judges what came back.
What a learner can do to pass without doing the work (a hard-coded answer, a patched torch, the
library function the exercise asks them to write) fails; the probe runs under the run's limits
and reads nothing of the check."""

import pytest

from sandbox.base import Limits, RunRequest
from sandbox.pool import WarmPool, WarmSettings
from tests.runner.conftest import BACKENDS, Run, backend_or_skip

pytestmark = pytest.mark.services

MARKER = "probe-secret-7f3a"

PROBE = """
import torch

BY_HAND = ["torch.softmax", "torch.nn.functional.softmax", "torch.Tensor.softmax", "aten::_softmax"]


def calls(seed):
    g = torch.Generator().manual_seed(seed)
    return [("row_softmax", (torch.randn(2, 3, generator=g),)) for _ in range(2)]
"""

CHECK = f"""
import torch

# {MARKER}: nothing of the check may reach learner code.


def check(ns, probed):
    for call in probed:
        if call.error:
            return False, call.error
        x = call.args[0]
        if not isinstance(call.value, torch.Tensor) or not torch.allclose(call.value, torch.softmax(x, dim=-1)):
            return False, f"row_softmax of {{x[0].tolist()}} gave {{call.value!r}}"
    return True, "probed on " + repr(probed[0].args[0][0].tolist())
"""

RIGHT = """
import torch


def row_softmax(x):
    e = torch.exp(x - x.max(dim=-1, keepdim=True).values)
    return e / e.sum(dim=-1, keepdim=True)


print(row_softmax(torch.zeros(2, 2)))
"""


def run(backend, code: str, *, check: str = CHECK, probe: str = PROBE, owner: str = "", wall_s: float = 20.0) -> Run:
    events: list = []
    request = RunRequest(
        run_id=f"probe-{id(events)}",
        code=code,
        check_code=check,
        probe_code=probe,
        owner=owner,
        limits=Limits(wall_s=wall_s),
    )
    return Run(backend.execute(request, events.append), events)


def verdict(run: Run) -> tuple[bool, str]:
    [check] = run.of_type("check")
    return check["passed"], check["message"]


@pytest.fixture(scope="module", params=BACKENDS)
def backend(request):
    return backend_or_skip(request.param)


def test_the_learners_function_is_judged_on_fresh_inputs_every_run(backend):
    first, second = run(backend, RIGHT), run(backend, RIGHT)
    assert first.status == second.status == "succeeded"
    assert "tensor(" in first.text()  # the program itself ran as usual
    (passed_1, seen_1), (passed_2, seen_2) = verdict(first), verdict(second)
    assert passed_1 and passed_2
    assert seen_1 != seen_2  # a seed the program could not know: other inputs each time


@pytest.mark.parametrize(
    ("name", "code"),
    [
        ("hard-coded", "import torch\n\ndef row_softmax(x):\n    return torch.full((2, 3), 1 / 3)\n"),
        ("unfixed bug", "import torch\n\ndef row_softmax(x):\n    return torch.exp(x) / torch.exp(x).sum()\n"),
        ("no function", "import torch\nrow_softmax = None\n"),
    ],
)
def test_a_function_that_is_not_right_on_every_input_fails_showing_the_input(backend, name, code):
    passed, message = verdict(run(backend, code))
    assert not passed
    assert message.startswith("row_softmax of [") or message == "your code defines no function row_softmax()"


def test_the_programs_patches_and_a_definitions_patch_do_not_reach_the_functions_calls(backend):
    code = RIGHT + (
        "\n# The program breaks torch for everything after it, and so does a decorator when the\n"
        "# definition runs: neither may change what the function's calls compute.\n"
        "torch.exp = lambda x: x * 0\n"
        "torch.Tensor.sum = lambda self, *a, **k: torch.ones(())\n"
        "def _breaks(f):\n"
        "    torch.exp = lambda x: x * 0\n"
        "    return f\n"
        "@_breaks\n"
        "def helper():\n"
        "    pass\n"
    )
    passed, message = verdict(run(backend, code))
    assert passed, message


@pytest.mark.parametrize(
    "body",
    [
        "from torch import softmax\n\ndef row_softmax(x):\n    return softmax(x, dim=-1)\n",
        "import torch.nn.functional as F\n\ndef row_softmax(x):\n    return F.softmax(x, dim=-1)\n",
        "import torch\n\ndef row_softmax(x):\n    return x.softmax(-1)\n",
        "import torch\n\ndef row_softmax(x):\n    return torch._C.TensorBase.softmax(x, -1)\n",
        "import torch\n\ndef row_softmax(x):\n    return torch._C._VariableFunctions.softmax(x, -1)\n",
    ],
    ids=["from-import", "functional", "method", "c-base-class", "variable-functions"],
)
def test_the_library_function_the_exercise_asks_to_write_is_refused_however_it_is_reached(backend, body):
    passed, message = verdict(run(backend, "import torch\n" + body))
    assert not passed
    assert "is not available here: this exercise asks you to write it by hand" in message


def test_the_probe_starts_no_program_a_fresh_interpreter_would_answer_for_it(backend):
    code = (
        "import subprocess, sys\n\n"
        "def row_softmax(x):\n"
        "    done = subprocess.run([sys.executable, '-c', 'print(1)'], capture_output=True)\n"
        "    return done.stdout\n"
    )
    passed, message = verdict(run(backend, code))
    assert not passed and message.startswith("PermissionError: [Errno 1] Operation not permitted"), message


def test_a_function_that_hangs_ends_with_a_clear_message_inside_the_runs_wall(backend):
    result = run(backend, "def row_softmax(x):\n    while True:\n        pass\n", wall_s=4)
    assert result.status == "succeeded"  # the program ended well; its function did not
    passed, message = verdict(result)
    assert not passed and message.startswith("Calling your functions on fresh inputs did not finish")


def test_the_probe_prints_nothing_and_reads_nothing_of_the_check(backend):
    code = (
        "import glob, os, torch\n\n"
        "def row_softmax(x):\n"
        "    print('PROBE-PRINT')\n"
        "    found = []\n"
        "    for path in ['/dev/stdin'] + glob.glob('/proc/*/fd/0') + glob.glob('/proc/*/environ') + "
        "glob.glob('/proc/*/cmdline'):\n"
        "        try:\n"
        "            with open(path, 'rb') as f:\n"
        "                found.append(f.read(100000).decode('utf-8', 'replace'))\n"
        "        except Exception as e:\n"
        "            found.append(type(e).__name__)\n"
        "    return ' '.join(found)\n"
    )
    result = run(backend, code)
    passed, message = verdict(result)
    assert not passed and "gave '" in message  # what the function found reached the check, as data
    assert MARKER not in message and '"nonce"' not in message
    assert "PROBE-PRINT" not in result.text()


@pytest.fixture(scope="module", params=BACKENDS)
def warm_backend(request):
    backend = backend_or_skip(request.param)
    pool = WarmPool(name=backend.name, start=backend._warm_start, config=WarmSettings(spares=1, max_sandboxes=3))
    backend.warm._pool = pool
    yield backend
    pool.close()


def test_a_warm_sandbox_probes_run_after_run_without_carrying_a_patch(warm_backend, settings):
    settings.RUNNER_WARM = True
    assert warm_backend.warm.current().warm_up(RunRequest(run_id="shape", code="", limits=Limits(wall_s=10)))
    broken = RIGHT + "\ntorch.exp = lambda x: x * 0\n"
    runs = [run(warm_backend, code, owner="prober") for code in (broken, RIGHT, RIGHT)]
    assert [r.result.details.get("warm") for r in runs[1:]] == [True, True]
    assert [verdict(r)[0] for r in runs] == [True, True, True]
