"""The swe tier's environments with compiled extensions (``rules/tiers/swe/envs/sklearn.py``): every grading builds
the graded tree's own extensions, as the tester, behind the image's Cython cache and ccache, filled from the
environment's setup commit. A fixture repository made at test time (a Cython module and a C file, each with a
bug the gold patch fixes) is proved in the real engine: the fixes are in a ``.pyx`` and a ``.c``, so a grading that
ran the image's build of the base (cached) instead of the tree's own would fail the gold patch."""
from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))
from fixture_swe import fixture_instance, lay_answers, lay_rendered  # noqa: E402

from rules.tiers.swe import swebench  # noqa: E402
from rules.tiers.swe.envs import sklearn  # noqa: E402

docker = pytest.mark.docker

SETUP = '''from Cython.Build import cythonize
from setuptools import Extension, setup

setup(name="ops", packages=["ops"],
      ext_modules=cythonize([Extension("ops._ops", ["ops/_ops.pyx", "ops/helper.c"])]))
'''
BASE = {
    "setup.py": SETUP,
    "ops/__init__.py": "from ops._ops import add, neg\n",
    "ops/helper.h": "int c_neg(int a);\n",
    "ops/helper.c": '#include "helper.h"\n\nint c_neg(int a) { return a; }\n',
    "ops/_ops.pyx": 'cdef extern from "helper.h":\n    int c_neg(int a)\n\n\ndef add(int a, int b):\n'
                    '    return a - b\n\n\ndef neg(int a):\n    return c_neg(a)\n',
    "tests/test_ops.py": "from ops import add\n\n\ndef test_add_zero():\n    assert add(2, 0) == 2\n",
}
FIX = {"ops/helper.c": BASE["ops/helper.c"].replace("return a;", "return -a;"),
       "ops/_ops.pyx": BASE["ops/_ops.pyx"].replace("a - b", "a + b")}
TESTS = {"tests/test_ops.py": "from ops import add, neg\n\n\ndef test_add_zero():\n    assert add(2, 0) == 2\n\n\n"
                              "def test_add():\n    assert add(2, 3) == 5\n\n\ndef test_neg():\n    assert neg(4) == -4\n"}
FIRST = "tests/test_ops.py"


def make_ops(root: Path) -> tuple[Path, dict]:
    """``root/lab/ops``: the base commit, then the fix; returns the repos folder and the instance's record."""
    record = fixture_instance(root / "lab" / "ops", BASE, {**FIX, **TESTS}, source="ops", message="fix add and neg",
                              instance_id="lab__ops-1", problem_statement="add subtracts",
                              FAIL_TO_PASS=[f"{FIRST}::test_add", f"{FIRST}::test_neg"],
                              PASS_TO_PASS=[f"{FIRST}::test_add_zero"])
    return root, record


def ops_env(setup_commit: str):
    return sklearn.compiled("ops-test", "lab/ops", "0.1", "3.11", ("cython==3.0.10", "pytest==8.3.3",
                                                                 "setuptools==70.3.0"), setup_commit)


def test_the_build_runs_as_the_tester_after_the_canaries_and_first_in_the_agents_command(tmp_path):
    repos, record = make_ops(tmp_path)
    env = ops_env(record["base_commit"])
    rendered = swebench.render(swebench._instance(record), env, str(repos))
    check = rendered.task_files["check.sh"][0].decode()
    build = check.index("as_tester env -u PYTEST_ADDOPTS -u PYTEST_PLUGINS PYTHONDONTWRITEBYTECODE=1 timeout")
    assert check.index("chown -R $tester") < build < check.index("-m pytest")
    assert "cache=sys.argv[1]" in check[build:] and "CCACHE_READONLY=1" in check[build:]
    assert rendered.meta["test_cmd"].startswith("rm -rf /tmp/lab-cycache")
    assert rendered.meta["test_cmd"].index("build_ext") < rendered.meta["test_cmd"].index("-m pytest")
    # an environment without build lines renders no build at all (its check.sh is as it was)
    plain = swebench.render(swebench._instance(record), swebench.Env(
        "plain", "lab/ops", ("0.1",), "3.11", "bookworm", install=()), str(repos))
    assert "timeout --signal=KILL 900 \\\n  bash -c" not in plain.task_files["check.sh"][0].decode()


def test_build_and_setup_commit_leave_the_other_environments_digests_alone():
    plain = swebench.Env("x", "lab/x", ("1",), "3.11", "bookworm", install=())
    import dataclasses

    assert repr(dataclasses.replace(plain, build=("make",), setup_commit="abc")) == repr(plain)
    assert dataclasses.replace(plain, build=("make",)).digest() != plain.digest()
    assert dataclasses.replace(plain, setup_commit="abc").digest() != plain.digest()


@pytest.fixture(scope="module")
def ops(tmp_path_factory):
    from rules.config import Limits

    root = tmp_path_factory.mktemp("ops")
    repos, record = make_ops(root / "src")
    env = ops_env(record["base_commit"])
    rendered = swebench.render(swebench._instance(record), env, str(repos))
    lay_rendered(rendered, root)
    answers = lay_answers(rendered, root)
    swebench.build_env(env, repos / "lab" / "ops", env.setup_commit, log=open("/dev/null", "w"))
    limits = Limits(cpus=1.0, memory=2 * 1024**3, pids=512, timeout=300)
    logs = root / "logs"
    logs.mkdir()
    proof = swebench.prove(root / "task", answers, image=env.tag, limits=limits, meta=rendered.meta, log_dir=logs)
    return proof, logs


@docker
def test_a_fix_in_a_pyx_and_a_c_file_is_built_from_the_graded_tree_not_taken_from_the_cache(ops):
    proof, logs = ops
    # kept: the gold runs built the fixed .pyx and .c (the image's caches hold the base's), the base run failed both
    assert proof["status"] == "kept", proof
    assert proof["tests"] == ["tests.test_ops::test_add", "tests.test_ops::test_add_zero", "tests.test_ops::test_neg"]
    assert proof["before"]["fail_to_pass_passed"] == [] and proof["before"]["pass_to_pass_failed"] == []
    # each gold run built the tree's changed sources afresh; the base tree's came whole from the image's caches
    for log in ("reference.log", "reference-2.log", "reference-3.log"):
        assert "lab-build: 0 Cython output(s) and 0 compile(s) from the caches, 2 compile(s) made, in " in (
            logs / log).read_text()
    assert "lab-build: 1 Cython output(s) and 2 compile(s) from the caches, 0 compile(s) made, in " in (
        logs / "stub.log").read_text()
