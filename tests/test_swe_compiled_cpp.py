"""Environments of compiled projects (``rules/tiers/swe/envs/matplotlib.py``): the image compiles the trees an
environment names (``Env.build_trees``) once into a ccache; every grading builds the graded work tree's own
extensions, as the tester, reusing the cache only for byte-identical sources.

The unit tests need no engine; the Docker one proves a fixture instance whose bug and fix are in C (a package
``calcx`` laid out as matplotlib's: ``setup.py`` at the root, the package under ``lib/``): the gold patch can only
pass if the grading compiles the work tree's C source, since the image holds objects of the base's alone."""
from __future__ import annotations

import dataclasses
import subprocess
from pathlib import Path

import pytest

from fixture_swe import _git, _write, lay_answers, lay_rendered
from rules.tiers.swe import swebench
from rules.tiers.swe.envs import matplotlib as mpl

ENV = swebench.Env("demo", "demo/demo", ("1.0",), "3.11", "bookworm", install=("true",), setup_source=False)


def test_an_environment_without_build_trees_keeps_its_digest_and_dockerfile():
    with_trees = dataclasses.replace(ENV, build_trees=("abc123",))
    assert repr(with_trees) == repr(ENV)  # out of repr: every other environment keeps the digest it had
    assert with_trees.digest() != ENV.digest()  # yet the trees are part of the image's identity
    plain, built = swebench.env_dockerfile(ENV, "B"), swebench.env_dockerfile(with_trees, "B")
    assert "trees" not in plain
    assert "COPY trees /opt/lab/trees" in built and "rm -rf /opt/lab/setup /opt/lab/trees" in built


def test_matplotlib_prepare_builds_as_the_tester_in_check_sh_and_in_place_elsewhere():
    line = mpl.PREPARE[0].format(version="3.6", major="3", minor="6")
    assert 'lab-mpl-ext "$work" 3.6.0 "$tester" "$manifest"' in line and "SETUPTOOLS_SCM_PRETEND_VERSION=3.6.0" in line
    # check.sh sets $tester: the build runs through GRADE; the agents' command has none: in place, as itself
    fake = line.replace("bash -c", "echo GRADE").replace("python setup.py", "echo here")
    assert subprocess.run(["bash", "-c", fake], capture_output=True, text=True, env={"tester": "1000", "PATH": "/usr/bin:/bin"}
                          ).stdout.startswith("GRADE")
    assert subprocess.run(["bash", "-c", fake.replace("> /tmp/lab-mpl-build.log 2>&1", "")], capture_output=True,
                          text=True, env={"PATH": "/usr/bin:/bin"}).stdout.startswith("here build_ext")


FAST_C = r"""#define PY_SSIZE_T_CLEAN
#include <Python.h>

static PyObject *add(PyObject *self, PyObject *args) {
    long a, b;
    if (!PyArg_ParseTuple(args, "ll", &a, &b)) return NULL;
    return PyLong_FromLong(a OP b);
}

static PyObject *mul(PyObject *self, PyObject *args) {
    long a, b;
    if (!PyArg_ParseTuple(args, "ll", &a, &b)) return NULL;
    return PyLong_FromLong(a * b);
}

static PyMethodDef methods[] = {{"add", add, METH_VARARGS, ""}, {"mul", mul, METH_VARARGS, ""}, {NULL}};
static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_fast", NULL, -1, methods};
PyMODINIT_FUNC PyInit__fast(void) { return PyModule_Create(&module); }
"""
BASE = {
    "setup.py": ("from setuptools import Extension, setup\n\n"
                 "setup(name='calcx', version='0.1', package_dir={'': 'lib'}, packages=['calcx'],\n"
                 "      ext_modules=[Extension('calcx._fast', ['src/fast.c'])])\n"),
    "src/fast.c": FAST_C.replace("OP", "-"),
    "lib/calcx/__init__.py": "from calcx._fast import add, mul\n",
    "lib/calcx/tests/test_calcx.py": "from calcx import mul\n\n\ndef test_mul():\n    assert mul(2, 3) == 6\n",
}


def _instance(root: Path) -> tuple[Path, swebench.Instance]:
    repo = root / "repos" / "calcx"
    repo.mkdir(parents=True)
    _git(repo, "init", "-q", "-b", "main")
    _write(repo, BASE)
    _git(repo, "add", "-A")
    _git(repo, "commit", "-qm", "calcx")
    base = _git(repo, "rev-parse", "HEAD").strip()
    _write(repo, {"src/fast.c": FAST_C.replace("OP", "+"), "lib/calcx/tests/test_calcx.py": BASE[
        "lib/calcx/tests/test_calcx.py"].replace("import mul", "import add, mul") + (
        "\n\ndef test_add():\n    assert add(2, 3) == 5\n")})
    _git(repo, "add", "-A")
    _git(repo, "commit", "-qm", "fix add")
    gold = _git(repo, "diff", base, "HEAD", "--", "src")
    test_patch = _git(repo, "diff", base, "HEAD", "--", "lib")
    inst = swebench.Instance("lab__calcx-1", "lab/calcx", base, gold, test_patch, "add subtracts", "0.1", base,
                             ("lib/calcx/tests/test_calcx.py::test_add",),
                             ("lib/calcx/tests/test_calcx.py::test_mul",))
    return root / "repos", inst


@pytest.mark.docker
def test_a_fix_in_c_is_compiled_from_the_graded_tree_and_the_image_holds_only_the_base(tmp_path):
    from rules.config import Limits
    from rules.grade import grade

    repos, inst = _instance(tmp_path)
    env = swebench.Env("calcx-test", "lab/calcx", ("0.1",), "3.11", "bookworm",
                       install=("pip install pytest==8.3.3 setuptools==68.1.2",) + mpl.TOOLS + mpl.PRIME,
                       apt=("ccache",), pythonpath="lib", setup_source=False, prepare=mpl.PREPARE,
                       build_trees=(inst.base_commit,))
    swebench.build_env(env, repos / "calcx", "")
    rendered = swebench.render(inst, env, str(repos))
    tree = lay_rendered(rendered, tmp_path / "t")
    answers = lay_answers(rendered, tmp_path)
    limits = Limits(cpus=1.0, memory=2 * 1024**3, pids=512, timeout=300)
    proof = swebench.prove(tmp_path / "t" / "task", answers, image=env.tag, limits=limits, meta=rendered.meta)
    assert proof["status"] == "kept", proof
    assert proof["tests"] == ["lib.calcx.tests.test_calcx::test_add", "lib.calcx.tests.test_calcx::test_mul"]
    assert proof["stub"]["evidence"] == ["1 test(s) did not pass: lib.calcx.tests.test_calcx::test_add"]
    # the base tree's own build: every object from the image's cache, the link made afresh, the tester's work
    log = tmp_path / "base.log"
    g = grade(tmp_path / "t" / "task", tree, image=env.tag, limits=limits, expected=proof["tests"], log_path=log)
    said = log.read_text()
    assert "lab-mpl-ext: build_ext exit 0" in said and g.verdict == "fail", said[-3000:]
