"""What is particular to the local (bubblewrap) backend."""

import pytest

from sandbox.local import LocalBackend


@pytest.mark.services
def test_it_reports_a_broken_sandbox_as_our_error(local_backend, run_code, tmp_path):
    broken = LocalBackend(runtime=tmp_path)  # no Python there
    run = run_code(broken, "print(1)")
    assert run.status == "error" and "not set up" in run.reason


@pytest.mark.services
def test_it_reports_a_sandbox_that_dies_before_the_program_as_our_error(local_backend, run_code):
    broken = LocalBackend(bwrap="/bin/false")
    run = run_code(broken, "print(1)")
    assert run.status == "error" and "before the program started" in run.reason


@pytest.mark.services
def test_it_hides_the_project_and_home_folders(local_backend, run_code):
    code = "import os\nprint(sorted(os.listdir('/')))\nprint(sorted(os.listdir('/opt')))\n"
    run = run_code(local_backend, code)
    top, opt = run.text().splitlines()
    assert "work" not in top and "home" not in top
    assert opt == "['harness', 'runtime']"


@pytest.mark.services
def test_it_enforces_every_limit_on_this_machine(local_backend):
    # Where a limit cannot be enforced (no cgroups, no user namespaces) the backend says so, the
    # worker logs it at start, and this test fails.
    assert LocalBackend.problems() == []
