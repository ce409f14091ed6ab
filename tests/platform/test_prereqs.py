"""scripts/prereqs.sh: the system packages `make run`, `make test` and CI check first.

Each test runs the real script with a PATH built for it: every tool this machine has, less the ones
the test takes away, and a fake `apt-get` that records its arguments (and, for `install`, puts a
working `bwrap` in place, as installing bubblewrap would).
"""

import os
import shutil
import stat
import subprocess
import tempfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
# Debian's own Python where there is one: a user switched to below may not read the test's virtualenv.
PYTHON = "/usr/bin/python3" if Path("/usr/bin/python3").exists() else "python3"
BWRAP_HELP = """usage: bwrap [OPTIONS...] [--] COMMAND [ARGS...]
    --ro-bind-fd FD DEST         Bind open directory or path fd read-only on DEST
    --as-pid-1                   Do not install a reaper process with PID=1
    --size BYTES                 Set size of next argument (only for --tmpfs)
    --mqueue DEST                Mount new mqueue on DEST
    --disable-userns             Disable further use of user namespaces inside sandbox
"""
NOBODY = 65534


@pytest.fixture
def box():
    """A folder anyone may read: what the Makefile reads of the repository, and a bin/ for PATH."""
    path = Path(tempfile.mkdtemp(prefix="ec-prereqs-"))
    path.chmod(0o755)
    (path / "scripts").mkdir()
    shutil.copy(ROOT / "scripts" / "prereqs.sh", path / "scripts" / "prereqs.sh")
    (path / "frontend").mkdir()
    for name in (
        "Makefile",
        "requirements.txt",
        "requirements-dev.txt",
        "frontend/package-lock.json",
        "frontend/build.mjs",
    ):
        shutil.copy(ROOT / name, path / name)
    (path / "bin").mkdir()
    (path / "log").mkdir(mode=0o777)
    (path / "log").chmod(0o777)
    yield path
    shutil.rmtree(path)


def executable(path: Path, text: str) -> None:
    path.write_text(text)
    path.chmod(path.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)


def path_without(box: Path, *tools: str, fake_apt: bool = True) -> str:
    """box/bin holding a link to every tool on this PATH except `tools`, and the fake apt-get."""
    bin_dir = box / "bin"
    for folder in os.environ["PATH"].split(os.pathsep):
        if not os.path.isdir(folder):
            continue
        for name in os.listdir(folder):
            target = bin_dir / name
            if name in tools or name == "apt-get" or target.exists() or target.is_symlink():
                continue
            target.symlink_to(os.path.join(folder, name))
    if fake_apt:
        record = box / "log" / "apt-get.log"
        installed_bwrap = f"#!/bin/sh\ncat <<'EOF'\n{BWRAP_HELP}EOF\n"
        executable(
            bin_dir / "apt-get",
            f"""#!/bin/sh
echo "$*" >> {record}
case " $* " in *" install "*" bubblewrap"*)
    cat > {bin_dir}/bwrap <<'FAKE'
{installed_bwrap}FAKE
    chmod 755 {bin_dir}/bwrap ;;
esac
""",
        )
    return str(bin_dir)


def prereqs(box: Path, mode: str, path: str, *, user: int | None = None, argv: list[str] | None = None):
    env = {"PATH": path, "PYTHON": PYTHON, "HOME": str(box), "LANG": "C.UTF-8"}
    command = argv or ["bash", "scripts/prereqs.sh", mode]
    if user is not None:
        command = ["setpriv", f"--reuid={user}", f"--regid={user}", "--clear-groups", *command]
    return subprocess.run(command, cwd=box, env=env, capture_output=True, text=True, timeout=120, check=False)


def apt_calls(box: Path) -> list[str]:
    record = box / "log" / "apt-get.log"
    return record.read_text().splitlines() if record.exists() else []


def root_only():
    if os.geteuid() != 0:
        pytest.skip("installing as root needs a test run as root")


def test_it_does_nothing_when_every_package_is_there(box):
    if not shutil.which("bwrap") or not shutil.which("redis-server") or not shutil.which("npm"):
        pytest.skip("this machine lacks a runtime package itself")
    fake = path_without(box)
    out = prereqs(box, "run", f"{fake}{os.pathsep}{os.environ['PATH']}")
    assert out.returncode == 0, out.stderr
    assert out.stderr == ""
    assert apt_calls(box) == []


def test_as_root_it_installs_a_missing_bubblewrap_with_apt(box):
    root_only()
    out = prereqs(box, "run", path_without(box, "bwrap"))
    assert out.returncode == 0, out.stderr
    assert "bubblewrap: no bwrap" in out.stderr
    assert apt_calls(box) == ["update -qq", "install -y -qq --no-install-recommends bubblewrap"]


def test_it_installs_a_bubblewrap_that_lacks_a_flag_the_sandbox_uses(box):
    root_only()
    path = path_without(box, "bwrap")
    executable(Path(path) / "bwrap", "#!/bin/sh\necho 'bubblewrap 0.4.1'\necho '    --ro-bind-fd FD DEST'\n")
    out = prereqs(box, "run", path)
    assert out.returncode == 0, out.stderr
    assert "lacks --as-pid-1" in out.stderr
    assert apt_calls(box)[-1].endswith(" bubblewrap")


def test_without_root_or_sudo_it_prints_the_command_and_stops_before_make_sets_anything_up(box):
    if os.geteuid() == 0:
        user = NOBODY
        if not shutil.which("setpriv"):
            pytest.skip("setpriv (util-linux) is needed to run as another user")
    else:
        user = None
        if shutil.which("sudo") and subprocess.run(["sudo", "-n", "true"], capture_output=True).returncode == 0:
            pytest.skip("this user has sudo without a password")
    path = path_without(box, "bwrap", "sudo")

    out = prereqs(box, "run", path, user=user)
    assert out.returncode == 1
    assert "    apt-get install -y bubblewrap\n" in out.stderr
    assert "as root" in out.stderr
    assert apt_calls(box) == []

    # `make run` stops there: no virtualenv, no database, no bundle.
    made = prereqs(box, "run", path, user=user, argv=["make", f"PYTHON={PYTHON}", "run"])
    assert made.returncode != 0
    assert "apt-get install -y bubblewrap" in made.stderr
    assert not (box / ".venv").exists()
    assert not (box / "var").exists()
    assert apt_calls(box) == []


def test_for_tests_it_also_wants_chromium_postgresql_docker_and_debootstrap(box):
    root_only()
    path = path_without(box, "chromium", "psql", "dockerd", "debootstrap")
    out = prereqs(box, "test", path)
    assert apt_calls(box)[-1] == (
        "install -y -qq --no-install-recommends chromium debootstrap docker.io postgresql-client"
    )
    # The fake installs nothing but bubblewrap, so the check after installing still finds them missing.
    assert out.returncode == 1
    assert "Still missing after apt-get install" in out.stderr
    run_mode = prereqs(box, "run", path)
    assert run_mode.returncode == 0, run_mode.stderr
