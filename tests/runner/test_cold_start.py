"""A cold sandbox imports torch once, in its supervisor, before the program starts: the program's
wall limit counts from its own start, and neither the program nor a check that reads tensors
imports torch again (sandbox/harness/, protocol.supervise)."""

TENSOR_CHECK = "def check(ns):\n    x = ns.get('x')\n    return bool((x == 2).all()), 'x must be twos'\n"


def test_a_cold_runs_wall_is_its_programs_and_its_check_reads_tensors_without_a_second_import(
    sandbox_backend, run_code
):
    # A second of wall for the program and its check: less than one torch import takes here, so
    # both must find torch imported, and the sandbox's start must not count against it.
    code = "import torch\nx = torch.full((3,), 2.0)\nprint('twos')\n"

    run = run_code(sandbox_backend, code, check=TENSOR_CHECK, wall_s=1.0)

    assert run.status == "succeeded", (run.reason, run.outputs[-3:])
    assert run.text() == "twos\n"
    assert [check["passed"] for check in run.of_type("check")] == [True]
