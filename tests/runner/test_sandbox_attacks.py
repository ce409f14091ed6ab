"""The attack battery against each sandbox backend directly (backend.execute), plus the normal
behaviour every backend shares: streams, figures, errors, checks, tensors."""

import pytest

from tests.runner.attacks import ATTACKS
from tests.runner.conftest import host_processes_with


@pytest.mark.services
@pytest.mark.parametrize("attack", ATTACKS, ids=[a.name for a in ATTACKS])
def test_it_contains_the_attack(sandbox_backend, run_code, attack):
    if attack.before:
        first = run_code(sandbox_backend, attack.before, wall_s=attack.wall_s)
        assert first.status == "succeeded", (first.status, first.reason, first.outputs)
    run = run_code(sandbox_backend, attack.code, wall_s=attack.wall_s, check=attack.check)
    attack.expect(run.status, run.reason, run.outputs, run.exit_code)
    if attack.marker:
        assert host_processes_with(attack.marker) == [], "a process of the run outlived it"
    # The backend is still healthy after the attack.
    after = run_code(sandbox_backend, "print('fine')", wall_s=attack.wall_s)
    assert (after.status, after.text()) == ("succeeded", "fine\n"), (after.status, after.reason, after.outputs)


@pytest.mark.services
def test_it_streams_prints_as_events(sandbox_backend, run_code):
    run = run_code(sandbox_backend, "import sys\nprint('one')\nprint('two', file=sys.stderr)\nprint('three')\n")
    assert run.status == "succeeded" and run.exit_code == 0 and run.reason == ""
    assert run.text("stdout") == "one\nthree\n"
    assert run.text("stderr") == "two\n"
    assert all(e["type"] == "stream" for e in run.outputs)


@pytest.mark.services
def test_it_keeps_the_order_of_output_and_error(sandbox_backend, run_code):
    run = run_code(sandbox_backend, "print('before')\nraise ValueError('bad value')\n")
    kinds = [e["type"] for e in run.outputs]
    assert kinds == ["stream", "error"], run.outputs


@pytest.mark.services
def test_it_shows_a_matplotlib_figure_as_png(sandbox_backend, run_code):
    code = "import matplotlib.pyplot as plt\nplt.plot([1, 2, 3])\nplt.show()\nplt.figure()\nplt.bar([1], [2])\n"
    run = run_code(sandbox_backend, code)
    assert run.status == "succeeded", (run.reason, run.outputs)
    displays = run.of_type("display")
    assert len(displays) == 2  # one from plt.show(), one left open at the end
    import base64

    for d in displays:
        assert base64.b64decode(d["data"]["image/png"]).startswith(b"\x89PNG\r\n")
        assert d["data"]["text/plain"].startswith("<Figure")


@pytest.mark.services
def test_it_shows_at_most_five_images(sandbox_backend, run_code):
    code = "import matplotlib.pyplot as plt\nfor i in range(7):\n    plt.figure()\n    plt.plot([i])\n    plt.show()\n"
    run = run_code(sandbox_backend, code)
    assert len(run.of_type("display")) == 5
    assert "at most 5 images" in run.text("stderr")


@pytest.mark.services
def test_it_shows_only_the_learners_lines_in_a_traceback(sandbox_backend, run_code):
    code = "def attention(q):\n    return q / 0\n\nattention(1)\n"
    run = run_code(sandbox_backend, code)
    assert (run.status, run.exit_code) == ("failed", 1)
    assert run.reason == "the program raised ZeroDivisionError"
    (error,) = run.of_type("error")
    assert error["ename"] == "ZeroDivisionError"
    tb = "\n".join(error["traceback"])
    assert 'File "<exercise>", line 4' in tb and 'File "<exercise>", line 2, in attention' in tb
    assert "harness" not in tb and "/opt/" not in tb


@pytest.mark.services
def test_it_reports_a_syntax_error(sandbox_backend, run_code):
    run = run_code(sandbox_backend, "print('unclosed'\n")
    (error,) = run.of_type("error")
    assert run.status == "failed" and error["ename"] == "SyntaxError"
    assert "harness" not in "\n".join(error["traceback"])


@pytest.mark.services
def test_it_runs_the_check_against_the_learners_names(sandbox_backend, run_code):
    check = "def check(ns):\n    if ns.get('answer') == 42:\n        return True, 'Right.'\n    return False, 'Look at answer again.'\n"
    good = run_code(sandbox_backend, "answer = 42\n", check=check)
    bad = run_code(sandbox_backend, "answer = 41\n", check=check)
    assert good.of_type("check") == [{"type": "check", "passed": True, "message": "Right."}]
    assert bad.of_type("check") == [{"type": "check", "passed": False, "message": "Look at answer again."}]
    # A failed check is the exercise's verdict, not a failed run.
    assert bad.status == "succeeded"


@pytest.mark.services
def test_it_hides_a_broken_check(sandbox_backend, run_code):
    run = run_code(sandbox_backend, "x = 1\n", check="def check(ns):\n    return ns['missing'], 'secret answer'\n")
    (check,) = run.of_type("check")
    assert check["passed"] is False and "secret" not in check["message"]


@pytest.mark.services
def test_it_skips_the_check_when_the_code_raised(sandbox_backend, run_code):
    run = run_code(sandbox_backend, "raise KeyError('k')\n", check="def check(ns):\n    return True, 'yes'\n")
    assert run.of_type("check") == [] and run.status == "failed"


@pytest.mark.services
def test_it_prints_torch_tensors(sandbox_backend, run_code):
    code = "import torch\nprint(torch.arange(6).reshape(2, 3))\nprint(torch.cuda.is_available())\n"
    run = run_code(sandbox_backend, code, wall_s=60)
    assert run.status == "succeeded", (run.reason, run.outputs)
    assert run.text() == "tensor([[0, 1, 2],\n        [3, 4, 5]])\nFalse\n"


@pytest.mark.services
def test_it_passes_a_nonzero_exit_code_through(sandbox_backend, run_code):
    run = run_code(sandbox_backend, "import sys\nprint('bye')\nsys.exit(4)\n")
    assert (run.status, run.exit_code, run.reason) == ("failed", 4, "the program exited with code 4")


@pytest.mark.services
def test_it_gives_stdin_as_empty(sandbox_backend, run_code):
    run = run_code(sandbox_backend, "import sys\nprint(repr(sys.stdin.read()))\n")
    assert run.text() == "''\n"
