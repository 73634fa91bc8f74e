"""Shared fixtures: a fixture upstream repo, a throwaway lab home, a doit runner and the grader image."""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
from fixture_upstream import make_upstream  # noqa: E402

PROJECT = Path(__file__).resolve().parent.parent
AGENTS = Path(__file__).resolve().parent / "agents.toml"  # lab's shipped agents; evals/agents.toml is the user's


def docker_available() -> bool:
    try:
        from rules import sandbox

        sandbox.client()
        return True
    except Exception:
        return False


@pytest.fixture(scope="session", autouse=True)
def own_image_stamps(tmp_path_factory) -> Path:
    """What a test writes into a lab home's ``.lab`` from this process (image stamps: ``swebench.build_env``,
    ``images.build_agent``; a trial's scratch folders through the local backend: ``backends.execute``) goes to a
    lab home of the tests' own, never the project's ``.lab`` (a user's next command would read those stamps as
    its images' builds). Yields its ``.lab/images``. Commands a test runs through doit have their own LAB_HOME."""
    from rules import backends, images

    state = tmp_path_factory.mktemp("lab-home") / ".lab"
    saved = images.stamps_dir, backends.scratch_root
    images.stamps_dir = lambda: state / "images"
    backends.scratch_root = lambda: state / "trials"
    yield state / "images"
    images.stamps_dir, backends.scratch_root = saved


@pytest.fixture(scope="session")
def grader_image():
    """The grader image tag, built (or found up to date) once per test session."""
    if not docker_available():
        pytest.fail("no Docker engine answers: start dockerd (`bash .ci/run` does) before the docker tests")
    from rules import images

    images.build_grader("debian:bookworm", stamp_file=False)
    return images.GRADER


@pytest.fixture
def upstream(tmp_path) -> Path:
    """A fresh fixture upstream git repo (branch main)."""
    return make_upstream(tmp_path / "upstream")


def write_suite(home: Path, upstream: Path, languages=("go", "javascript", "python", "rust"), timeout=60,
                sample=3) -> None:
    (home / "evals" / "aider").mkdir(parents=True, exist_ok=True)
    langs = ", ".join(f'"{x}"' for x in languages)
    (home / "evals" / "aider" / "suite.toml").write_text(
        f'upstream = "{upstream}"\nref = "main"\nlanguages = [{langs}]\nsample = {sample}\n'
        f'\n[prove]\ncpus = 1.0\nmemory = "2g"\npids = 512\ntimeout = {timeout}\n'
    )
    shutil.copy(AGENTS, home / "evals" / "agents.toml")


@pytest.fixture
def lab_home(tmp_path, upstream) -> Path:
    """A lab home (LAB_HOME) whose aider tier points at the fixture upstream."""
    home = tmp_path / "home"
    write_suite(home, upstream)
    return home


class DoitResult:
    """A finished ``doit`` run: exit code, stdout, stderr, and which tasks ran.

    lab's reporter (rules/loader.py) starts a line with ``.  `` for a task it executes and prints none for one
    that is up to date (``skipped`` is filled only with ``-r console``). (doit's JSON reporter was not used: on
    a fresh dep file it exited 3 with no output here.)
    """

    def __init__(self, proc: subprocess.CompletedProcess):
        self.code, self.stdout, self.stderr = proc.returncode, proc.stdout, proc.stderr
        self.ran = {line[3:].strip() for line in proc.stdout.splitlines() if line.startswith(".  ")}
        self.skipped = {line[3:].strip() for line in proc.stdout.splitlines() if line.startswith("-- ")}

    def executed(self, prefix: str = "") -> set[str]:
        """Names of the tasks that ran (not up to date), optionally only those starting with ``prefix``."""
        return {n for n in self.ran if n.startswith(prefix)}


def run_doit(home: Path, *args: str, timeout: float = 1500) -> DoitResult:
    """Run ``doit ARGS`` on the project's dodo.py with LAB_HOME=home, started in the project folder (whose
    pyproject.toml selects lab's task loader)."""
    env = {**os.environ, "LAB_HOME": str(home)}
    proc = subprocess.run([sys.executable, "-m", "doit", "-f", str(PROJECT / "dodo.py"), *args],
                          cwd=PROJECT, env=env, capture_output=True, text=True, timeout=timeout)
    return DoitResult(proc)


@pytest.fixture
def doit():
    return run_doit
