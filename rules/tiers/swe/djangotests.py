"""django's own test runner in the swe tier (``Env.runner = "django"``; ``rules.tiers.swe.runners``).

The command is SWE-bench's (v4.1.0 ``swebench/harness/constants/python.py``, TEST_DJANGO):
``./tests/runtests.py --verbosity 2 --settings=test_sqlite --parallel 1 <labels>``, the labels being the test
patch's files that are no data (``get_test_directives``: not ending in one of NON_TEST_EXTS), without ``tests/``
and ``.py``, ``/`` → ``.``. check.sh runs it through lab's recorder (``templates/swe/django_run.py.j2``), which
writes a JUnit XML report from unittest's own result calls: nothing the tests print is read.

Names. SWE-bench names a django test by what unittest's verbose runner prints for it (``parse_log_django``):
``test_x (app.module.Class)``, under Python 3.11 ``test_x (app.module.Class.test_x)``, and for a test method
with a docstring the docstring's first line (``shortDescription``), which that runner prints on a line of its
own before the verdict.

Report ids (the recorder's): ``tests.<module>.<Class>::<method>`` for every test (its module as runtests.py
imports it, from the tests folder: the id pytest's JUnit report gives a test of the file
``tests/<module path>.py``), and for a test with a docstring also ``lab.description::<first line> (<that
id>)``, with the same outcome. A regular name maps to the first kind; a docstring line to
``lab.description::<line>``, which stands for every id that begins with it and a space (``stands_for``):
the tests the gold patch's run gave that description (several may share one; SWE-bench's parser keeps the last
one's verdict, lab expects each of them).
"""
from __future__ import annotations

import re

# SWE-bench v4.1.0, swebench/harness/constants/__init__.py (NON_TEST_EXTS): test patch files that are no test
NON_TEST_EXTS = (".json", ".png", "csv", ".txt", ".md", ".jpg", ".jpeg", ".pkl", ".yml", ".yaml", ".toml")
NAME = re.compile(r"(test\w*) \(([\w.]+\.\w+)\)")
DESCRIPTION = "lab.description"  # the report's class of the tests' descriptions
COMMAND = "tests/runtests.py --verbosity 2 --settings=test_sqlite --parallel 1"


def report_id(name: str) -> str:
    """The report id of the SWE-bench django test ``name``: ``test_x (a.b.C)`` and ``test_x (a.b.C.test_x)`` →
    ``tests.a.b.C::test_x``; any other name is a docstring's first line → ``lab.description::<name>``."""
    found = NAME.fullmatch(name)
    if not found:
        return f"{DESCRIPTION}::{name}"
    method, where = found.groups()
    if where.endswith("." + method) and where.count(".") >= 2:  # Python 3.11 adds the method to the class
        where = where[: -len(method) - 1]
    return f"tests.{where}::{method}"


def test_name(name: str) -> bool:
    """Every non-blank dataset name can be a test (a docstring line is any text)."""
    return bool(name.strip())


def stands_for(name: str) -> bool:
    """A docstring line stands for the tests that have it (resolved against the gold patch's run)."""
    return NAME.fullmatch(name) is None


def test_ids(inst, test_files: dict[str, str]) -> dict[str, str]:
    """Every FAIL_TO_PASS and PASS_TO_PASS name of ``inst`` → its report id (``report_id``); ``test_files`` is
    not needed: a django name carries its module and class."""
    return {n: report_id(n) for n in inst.fail_to_pass + inst.pass_to_pass}


def run_files(inst, test_files: dict[str, str]) -> list[str]:
    """The files whose labels the grading runs: SWE-bench's directives, every file of the test patch (its new
    name) that is no data file, in the patch's order."""
    out: list[str] = []
    for path in re.findall(r"^diff --git a/\S+ b/(\S+)$", inst.test_patch, re.M):
        if not path.endswith(NON_TEST_EXTS) and path not in out:
            out.append(path)
    return out


def labels(files: list[str]) -> list[str]:
    """runtests.py's labels of ``files``: ``tests/auth_tests/test_validators.py`` → ``auth_tests.test_validators``."""
    out = []
    for f in files:
        f = f[:-3] if f.endswith(".py") else f
        f = f[len("tests/"):] if f.startswith("tests/") else f
        out.append(f.replace("/", "."))
    return out


def test_cmd(files: list[str], inifile: str | None, pythonpath: str, deselect: tuple[str, ...] = (),
             prepare: tuple[str, ...] | list[str] = (), test_env: tuple[tuple[str, str], ...] = ()) -> str:
    """The agents' command for the pre-existing tests of ``files`` (run from the work tree's root, the work tree
    first on the path: no copy of django is installed). ``inifile`` and ``deselect`` are pytest's: unused.
    ``test_env``: the environment's extra variables of the test run (django's locale), set as the grading sets
    them."""
    import shlex

    if not files:
        return ""
    env = f"PYTHONPATH={pythonpath} " if pythonpath else ""
    env += "".join(f"{k}={shlex.quote(v)} " for k, v in test_env)
    first = "".join(f"{line} && " for line in prepare)
    return f"{first}{env}python {COMMAND} " + " ".join(shlex.quote(x) for x in labels(files))
