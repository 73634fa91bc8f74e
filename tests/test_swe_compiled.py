"""A swe environment whose repository has a compiled extension (astropy's route, rules/tiers/swe/envs/astropy.py),
on a fixture repository made at test time: the grading builds the graded tree's own extension through the
image's ccache, so a gold patch that edits the C source is what the tests import, and the image holds no built
copy of the repository."""
from __future__ import annotations

import json
import subprocess

import pytest

from conftest import run_doit, write_suite
from fixture_swe import _git, _write
from fixture_upstream import make_upstream
from rules.tiers.swe.envs.astropy import BUILD_EXT, build_ext_install

SETUP = ('from setuptools import Extension, setup\n\nsetup(name="cext", version="0.1", packages=["cext"],\n'
         '      ext_modules=[Extension("cext._val", ["cext/_val.c"])])\n')
C_SOURCE = """#define PY_SSIZE_T_CLEAN
#include <Python.h>

static PyObject *value(PyObject *self, PyObject *args) { return PyLong_FromLong(%d); }

static PyMethodDef methods[] = {{"value", value, METH_NOARGS, "the value"}, {NULL, NULL, 0, NULL}};
static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_val", NULL, -1, methods};
PyMODINIT_FUNC PyInit__val(void) { return PyModule_Create(&module); }
"""
TESTS = "from cext import _val\n\n\ndef test_import():\n    assert _val.value() in (1, 2)\n"
FIXED_TESTS = TESTS + "\n\ndef test_value():\n    assert _val.value() == 2\n"


def _make(root):
    """``root/repos/cext`` (base: the extension returns 1; fix: 2, with a new test) and ``root/data.jsonl``."""
    repo = root / "repos" / "cext"
    repo.mkdir(parents=True)
    _git(repo, "init", "-q", "-b", "main")
    _write(repo, {"setup.py": SETUP, "cext/__init__.py": "", "cext/_val.c": C_SOURCE % 1, "tests/test_val.py": TESTS})
    _git(repo, "add", "-A")
    _git(repo, "commit", "-qm", "cext")
    base = _git(repo, "rev-parse", "HEAD").strip()
    _write(repo, {"cext/_val.c": C_SOURCE % 2, "tests/test_val.py": FIXED_TESTS})
    _git(repo, "add", "-A")
    _git(repo, "commit", "-qm", "fix")
    record = {"repo": "lab/cext", "instance_id": "lab__cext-1", "base_commit": base,
              "patch": _git(repo, "diff", base, "HEAD", "--", "cext"),
              "test_patch": _git(repo, "diff", base, "HEAD", "--", "tests"), "problem_statement": "value() is 1",
              "version": "0.1", "environment_setup_commit": base,
              "FAIL_TO_PASS": json.dumps(["tests/test_val.py::test_value"]),
              "PASS_TO_PASS": json.dumps(["tests/test_val.py::test_import"])}
    (root / "data.jsonl").write_text(json.dumps(record) + "\n")


def _suite(home, root) -> None:
    install = json.dumps(list(build_ext_install("pip install pytest==8.3.3", "0.1")))
    (home / "evals" / "swe").mkdir(parents=True, exist_ok=True)
    (home / "evals" / "swe" / "suite.toml").write_text(f"""dataset = "{root / 'data.jsonl'}"
instances = ["lab__cext-1"]
repos = "{root / 'repos'}"

[envs.cext]
repo = "lab/cext"
versions = ["0.1"]
install = {install}
apt = ["ccache"]
pythonpath = "."
prepare = ["{BUILD_EXT}"]

[prove]
cpus = 1.0
memory = "2g"
pids = 512
timeout = 300
""")


@pytest.mark.docker
def test_a_patch_to_the_c_source_is_graded_with_its_own_build_and_the_image_holds_no_built_copy(tmp_path):
    _make(tmp_path / "src")
    home = tmp_path / "home"
    write_suite(home, make_upstream(tmp_path / "upstream"))
    _suite(home, tmp_path / "src")
    res = run_doit(home, "gen:swe")
    assert res.code == 0, res.stdout[-3000:] + res.stderr[-3000:]
    proof = json.loads((home / ".lab" / "build" / "swe" / "lab__cext-1" / "proof.json").read_text())
    # the image's cache was filled from the base commit (returns 1): the gold tree's _val.c misses it and is
    # compiled, so its tests see 2; the base tree's hits it and fails the new test
    assert proof["status"] == "kept", proof.get("reason")
    assert [r["verdict"] for r in proof["gold_runs"]] == ["pass"] * 3
    assert proof["stub"]["evidence"] == ["1 test(s) did not pass: tests.test_val::test_value"]
    found = subprocess.run(["docker", "run", "--rm", "--network", "none", "lab/swe-env:cext", "sh", "-c",
                            "find / -xdev -name '_val*.so' -o -xdev -name '_val.c' | grep -v ^/proc; "
                            "CCACHE_DIR=/opt/lab/ccache ccache -s | grep -iE 'files|size'"],
                           capture_output=True, text=True, check=True).stdout
    assert "_val" not in found  # no built copy, no source: only the cache
    assert "0 files" not in found.lower()
