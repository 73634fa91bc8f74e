"""A tiny SWE-bench-style fixture, built at test time: a package ``calc`` with a bug in ``add``, a later fix
commit (with a new test and a tag), and dataset records in SWE-bench's layout that point at it."""
from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

BASE = {
    "calc/__init__.py": "def add(a, b):\n    return a - b\n\n\ndef mul(a, b):\n    return a * b\n",
    "tests/test_calc.py": "from calc import mul\n\n\ndef test_mul():\n    assert mul(2, 3) == 6\n",
    "tests/test_other.py": "def test_truth():\n    assert True\n",
    "README.md": "calc: adds and multiplies\n",
}
FIXED_SOURCE = "def add(a, b):\n    return a + b\n\n\ndef mul(a, b):\n    return a * b\n"
FIXED_TESTS = BASE["tests/test_calc.py"].replace("from calc import mul", "from calc import add, mul") + (
    "\n\ndef test_add():\n    assert add(2, 3) == 5\n")
ISSUE = "add(2, 3) returns -1; it should return 5."
HINT = "look at the minus sign in calc/__init__.py"


def _git(repo: Path, *args: str) -> str:
    env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t", "GIT_COMMITTER_NAME": "t",
           "GIT_COMMITTER_EMAIL": "t@t", "GIT_CONFIG_GLOBAL": "/dev/null"}
    return subprocess.run(["git", *args], cwd=repo, env=env, check=True, capture_output=True, text=True).stdout


def _write(repo: Path, files: dict[str, str]) -> None:
    for rel, text in files.items():
        p = repo / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text)


def fixture_instance(repo: Path, base: dict[str, str], after: dict[str, str], *, source: str, tests: str = "tests",
                     message: str, **fields) -> dict:
    """Make the git repository ``repo`` (a commit of ``base``, then one of ``after`` laid over it, with ``message``)
    and return an instance record in SWE-bench's layout: ``repo`` as ``lab/<folder name>``, the base commit (also
    the environment's setup commit), version 0.1, the gold patch (the diff under ``source``), the test patch (under
    ``tests``), and ``fields`` (instance_id, problem_statement, FAIL_TO_PASS, PASS_TO_PASS: lists, made JSON)."""
    repo.mkdir(parents=True)
    _git(repo, "init", "-q", "-b", "main")
    _write(repo, base)
    _git(repo, "add", "-A")
    _git(repo, "commit", "-qm", "base")
    sha = _git(repo, "rev-parse", "HEAD").strip()
    _write(repo, after)
    _git(repo, "add", "-A")
    _git(repo, "commit", "-qm", message)
    record = {"repo": f"lab/{repo.name}", "base_commit": sha, "version": "0.1",
              "patch": _git(repo, "diff", sha, "HEAD", "--", source),
              "test_patch": _git(repo, "diff", sha, "HEAD", "--", tests), "hints_text": "",
              "created_at": "2026-01-01T00:00:00Z", "environment_setup_commit": sha}
    return {**record, **{k: json.dumps(v) if isinstance(v, list) else v for k, v in fields.items()}}


def make_calc(root: Path) -> tuple[Path, list[dict]]:
    """Make ``root/repos/calc`` (base commit, then the fix commit tagged v1.0) and ``root/data.jsonl`` with three
    instances: ``lab__calc-1`` (sound), ``lab__calc-2`` (its only FAIL_TO_PASS test passes before the fix: the
    base would be resolved, to be rejected) and ``lab__calc-3`` (one of its two FAIL_TO_PASS tests passes before
    the fix, as django-11099's: kept, with that test noted). Returns the repos folder and the records."""
    repo = root / "repos" / "calc"
    repo.mkdir(parents=True)
    _git(repo, "init", "-q", "-b", "main")
    _write(repo, BASE)
    _git(repo, "add", "-A")
    _git(repo, "commit", "-qm", "calc")
    base = _git(repo, "rev-parse", "HEAD").strip()
    _write(repo, {"calc/__init__.py": FIXED_SOURCE, "tests/test_calc.py": FIXED_TESTS})
    _git(repo, "add", "-A")
    _git(repo, "commit", "-qm", "fix add")
    _git(repo, "tag", "v1.0")
    gold = _git(repo, "diff", base, "HEAD", "--", "calc")
    test_patch = _git(repo, "diff", base, "HEAD", "--", "tests")
    common = {"repo": "lab/calc", "base_commit": base, "patch": gold, "test_patch": test_patch,
              "problem_statement": ISSUE, "hints_text": HINT, "created_at": "2026-01-01T00:00:00Z",
              "version": "0.1", "environment_setup_commit": base}
    records = [
        {**common, "instance_id": "lab__calc-1", "FAIL_TO_PASS": json.dumps(["tests/test_calc.py::test_add"]),
         "PASS_TO_PASS": json.dumps(["tests/test_calc.py::test_mul"])},
        {**common, "instance_id": "lab__calc-2", "FAIL_TO_PASS": json.dumps(["tests/test_calc.py::test_mul"]),
         "PASS_TO_PASS": json.dumps([])},
        {**common, "instance_id": "lab__calc-3",
         "FAIL_TO_PASS": json.dumps(["tests/test_calc.py::test_add", "tests/test_calc.py::test_mul"]),
         "PASS_TO_PASS": json.dumps([])},
    ]
    (root / "data.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records))
    return root / "repos", records


SUITE = """dataset = "{dataset}"
instances = ["lab__calc-1", "lab__calc-2"]
repos = "{repos}"

[envs.calc]
repo = "lab/calc"
versions = ["0.1"]
install = ["pip install pytest==8.3.3"]
setup_source = false

[prove]
cpus = 1.0
memory = "2g"
pids = 512
timeout = 300
"""


def write_swe_suite(home: Path, root: Path) -> None:
    """A lab home whose swe tier reads the fixture dataset and repository."""
    (home / "evals" / "swe").mkdir(parents=True, exist_ok=True)
    (home / "evals" / "swe" / "suite.toml").write_text(
        SUITE.format(dataset=root / "data.jsonl", repos=root / "repos"))


def calc_env(**more):
    """The swe tier's environment for the calc fixture (``more``: other ``swebench.Env`` fields)."""
    from rules.tiers.swe import swebench

    return swebench.Env("calc", "lab/calc", ("0.1",), "3.11", "bookworm", install=("pip install pytest",),
                        setup_source=False, **more)


def lay_rendered(rendered, dest: Path) -> Path:
    """Write a rendered swe task's files to ``dest/task`` and lay its work tree (its setup.sh) at ``dest/work``;
    returns the work tree."""
    task = dest / "task"
    for rel, (data, mode) in rendered.task_files.items():
        (task / rel).parent.mkdir(parents=True, exist_ok=True)
        (task / rel).write_bytes(data)
        (task / rel).chmod(mode)
    tree = dest / "work"
    subprocess.run(["sh", str(task / "setup.sh"), str(tree)], check=True)
    return tree


def lay_answers(rendered, dest: Path) -> Path:
    """Write a rendered swe task's answer files (the gold patch's files) under ``dest/answers``; returns that folder
    (the reference tree ``swebench.prove`` takes)."""
    answers = dest / "answers"
    for rel, (data, _) in rendered.answer_files.items():
        (answers / rel).parent.mkdir(parents=True, exist_ok=True)
        (answers / rel).write_bytes(data)
    return answers
