"""The swe tier tried as a hostile agent and as a hostile predictions file: every attack must end in the honest
outcome (``fail``/unresolved, ``tampered``, not plausible, or refused), never in a verdict the work does not
deserve.

Pure attacks on the host (a predictions file, a patch applied on the host) run without Docker. The others use the
fixture swe tier of tests/fixture_swe.py (``calc``: ``add`` subtracts; the held-out test ``test_add`` fails until it
adds) in the real engine: a work tree with the bug left in and an attack added is graded the way a trial grades it
(the patch laid on a fresh base, ``rules.trial.graded_tree``), or run through ``doit run suite=swe`` with scripted
agents.
"""
from __future__ import annotations

import json
import sys
import textwrap
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
from conftest import run_doit, write_suite  # noqa: E402
from fixture_swe import BASE, FIXED_SOURCE, calc_env, lay_rendered, make_calc  # noqa: E402
from fixture_upstream import make_upstream  # noqa: E402
from honest_kit import PYTEST_RUNNER_PATCH, REPORT_FLOOD, reports_handed_over  # noqa: E402

from rules.tiers.swe import swebench  # noqa: E402
from rules.config import Suite  # noqa: E402

docker = pytest.mark.docker
TASK = "lab__calc-1"
WRONG = BASE["calc/__init__.py"]  # add still subtracts


# ---- a hostile predictions file, on the host (no Docker) ----

@pytest.fixture
def swe_suite(tmp_path, monkeypatch):
    """A swe tier with one published task (its folder, task.json and tests.json; never graded here)."""
    import rules.config

    monkeypatch.setattr(rules.config, "EVALS", tmp_path / "home" / "evals")
    suite = Suite(name="swe", upstream="", ref="", languages=())
    task = suite.tasks_dir / TASK
    task.mkdir(parents=True)
    (task / "task.json").write_text(json.dumps({"task": TASK, "repo": "lab/calc", "image": "lab/swe-env:calc",
                                                "fail_to_pass": [], "pass_to_pass": []}))
    (task / "tests.json").write_text(json.dumps({"version": 1, "tests": ["tests.test_calc::test_add"]}))
    return suite


def test_a_predictions_file_cannot_write_outside_its_folder_nor_count_a_task_twice(swe_suite, tmp_path):
    """instance_id names a folder: ``../`` paths, absolute paths and second spellings of a published task are
    errors, write nothing, and never add to a count (before: ``out_dir / instance_id`` was written, and
    ``../tasks/<id>`` graded the task again under another name)."""
    outside = tmp_path / "outside"
    ids = [TASK, f"./{TASK}", f"../tasks/{TASK}", f"{TASK}/", "../../../../outside", str(outside), "..", "."]
    rows = [{"instance_id": i, "model_name_or_path": "m", "model_patch": ""} for i in ids]
    preds = tmp_path / "p.jsonl"
    preds.write_text("".join(json.dumps(r) + "\n" for r in rows))
    out = swebench.evaluate(swe_suite, preds, out_dir=tmp_path / "ev" / "p", log=open("/dev/null", "w"))
    assert out["empty_patch"] == [TASK] and out["resolved"] == [] and out["unresolved"] == []
    assert sorted(out["error"]) == sorted(ids[1:])
    assert all("not a published task" in out["instances"][i]["reason"] for i in ids[1:])
    assert not outside.exists() and not (tmp_path / "outside").exists()
    written = sorted(str(p.relative_to(tmp_path)) for p in tmp_path.rglob("*") if p.is_file() and "home" not in p.parts)
    assert written == ["ev/p/lab__calc-1/patch.diff", "ev/p/lab__calc-1/report.json", "ev/p/results.json", "p.jsonl"]


@pytest.mark.parametrize("patch", [["not", "text"], {"a": 1}, 7, "diff \ud800 lone surrogate\n"])
def test_a_model_patch_that_is_not_text_is_an_error_not_a_crash(swe_suite, tmp_path, patch):
    preds = tmp_path / "p.json"
    preds.write_text(json.dumps([{"instance_id": TASK, "model_name_or_path": "m", "model_patch": patch}]))
    out = swebench.evaluate(swe_suite, preds, out_dir=tmp_path / "ev", log=open("/dev/null", "w"))
    assert out["error"] == [TASK] and "not text" in out["instances"][TASK]["reason"], out["instances"][TASK]
    assert not (tmp_path / "ev" / TASK / "test_output.txt").exists()  # never graded


# ---- a patch applied on the host (rules.upstream.apply_patch; no Docker) ----

ESCAPES = {
    "dot-dot": "diff --git a/../escape.txt b/../escape.txt\nnew file mode 100644\n--- /dev/null\n+++ b/../escape.txt\n"
               "@@ -0,0 +1 @@\n+pwned\n",
    "absolute": "diff --git a/{abs} b/{abs}\nnew file mode 100644\n--- /dev/null\n+++ b/{abs}\n@@ -0,0 +1 @@\n+pwned\n",
    "through-a-symlink": "diff --git a/link b/link\nnew file mode 120000\n--- /dev/null\n+++ b/link\n@@ -0,0 +1 @@\n"
                         "+{outside}\n\\ No newline at end of file\n"
                         "diff --git a/link/through.txt b/link/through.txt\nnew file mode 100644\n--- /dev/null\n"
                         "+++ b/link/through.txt\n@@ -0,0 +1 @@\n+pwned\n",
    "git-hook": "diff --git a/.git/hooks/post-checkout b/.git/hooks/post-checkout\nnew file mode 100755\n"
                "--- /dev/null\n+++ b/.git/hooks/post-checkout\n@@ -0,0 +1 @@\n+touch {outside}/hook\n",
    "git-config": "diff --git a/.git/config b/.git/config\n--- a/.git/config\n+++ b/.git/config\n@@ -1 +1,2 @@\n"
                  " [core]\n+\tfsmonitor = touch {outside}/fsmonitor\n",
}


def _lab_repo(root: Path) -> Path:
    """A work tree as a task's setup.sh lays it: a fresh repository with one commit."""
    import subprocess

    root.mkdir(parents=True)
    (root / "a.txt").write_text("a\n")
    env = {"GIT_CONFIG_GLOBAL": "/dev/null", "GIT_CONFIG_NOSYSTEM": "1", "PATH": "/usr/bin:/bin",
           "GIT_AUTHOR_NAME": "l", "GIT_AUTHOR_EMAIL": "l@l", "GIT_COMMITTER_NAME": "l", "GIT_COMMITTER_EMAIL": "l@l"}
    for args in (["init", "-q"], ["add", "-A"], ["commit", "-qm", "base"]):
        subprocess.run(["git", *args], cwd=root, env=env, check=True)
    return root


@pytest.mark.parametrize("name", sorted(ESCAPES))
def test_a_patch_never_writes_outside_the_work_tree_nor_into_its_repository(tmp_path, name):
    from rules.upstream import apply_patch

    outside = tmp_path / "outside"
    outside.mkdir()
    tree = _lab_repo(tmp_path / "tree")
    config = (tree / ".git" / "config").read_text()
    patch = ESCAPES[name].format(abs=str(outside / "abs.txt"), outside=outside)
    problem = apply_patch(tree, patch)
    assert problem, "git apply refused it"
    assert list(outside.iterdir()) == [] and not (tmp_path / "escape.txt").exists()
    assert (tree / ".git" / "config").read_text() == config and not (tree / ".git" / "hooks" / "post-checkout").exists()


def test_reading_an_agents_work_tree_runs_nothing_of_its_git_settings(tmp_path):
    """lab diffs an agent's work tree on the host (``diff_against``) with the base's repository: the work tree's own
    ``.git/config``, a nested repository's config (fsmonitor, pager, external diff) and ``.gitattributes`` filters
    run nothing."""
    import subprocess

    from rules.upstream import diff_against

    base = _lab_repo(tmp_path / "base")
    work = tmp_path / "work"
    subprocess.run(["cp", "-a", str(base), str(work)], check=True)
    marks = tmp_path / "marks"
    marks.mkdir()
    evil = (f'[core]\n\tfsmonitor = "touch {marks}/fsmonitor; false"\n\tpager = "touch {marks}/pager"\n'
            f'[diff]\n\texternal = "touch {marks}/diff"\n[filter "evil"]\n\tclean = "touch {marks}/clean"\n')
    sub = _lab_repo(work / "sub")
    for cfg in (work / ".git" / "config", sub / ".git" / "config"):
        with open(cfg, "a") as f:
            f.write(evil)
    (work / ".gitattributes").write_text("* filter=evil diff=evil\n")
    (work / "a.txt").write_text("b\n")
    patch = diff_against(base, work)
    assert "+b" in patch and "Subproject commit" in patch
    assert list(marks.iterdir()) == []


# ---- an agent's work with odd files reaches the grading whole (no Docker) ----

def test_a_work_tree_with_odd_files_becomes_a_patch_that_lays_it_whole(tmp_path, monkeypatch):
    """Files in another encoding than UTF-8, binary files, names that are not UTF-8 or hold a newline, and
    symlinks: the trial's patch (``graded_tree``) and the prediction written from it carry them all, so a right
    fix is never lost to lab's own plumbing (before: a Latin-1 file made ``apply_patch`` raise
    UnicodeEncodeError and the trial crash)."""
    import os

    import rules.config
    from rules.worktree import lay_work_tree
    from rules.trial import graded_tree
    from rules.upstream import apply_patch

    repos, records = make_calc(tmp_path / "src")
    rendered = swebench.render(swebench._instance(records[0]), calc_env(), str(repos))
    task, work = tmp_path / "task", lay_rendered(rendered, tmp_path)
    files = {b"calc/__init__.py": FIXED_SOURCE.encode(), b"calc/latin.py": b"# caf\xe9\nx = 1\n",
             b"README.md": b"calc \xff\xfe\n", b"calc/\xffodd.py": b"x = 1\n", b"calc/new\nline.py": b"y = 2\n",
             b"calc/blob.bin": bytes(range(256)) * 4}
    for rel, data in files.items():
        with open(os.path.join(os.fsencode(work), rel), "wb") as f:
            f.write(data)
    os.symlink("../README.md", work / "calc" / "link")
    tree, note = graded_tree(task, work, tmp_path / "graded")
    assert note == ""
    for rel, data in files.items():
        with open(os.path.join(os.fsencode(tree), rel), "rb") as f:
            assert f.read() == data, rel
    assert os.readlink(tree / "calc" / "link") == "../README.md"
    # the prediction a run writes carries the same bytes (JSON escapes them) and applies again
    monkeypatch.setattr(rules.config, "EVALS", tmp_path / "home" / "evals")
    suite = Suite(name="swe", upstream="", ref="", languages=())
    path = swebench.write_predictions(suite, "odd", "odd", {TASK: swebench.work_patch(task, work)})
    again = tmp_path / "again"
    lay_work_tree(task, again)
    assert apply_patch(again, swebench.read_predictions(path)[0]["model_patch"]) is None
    with open(os.path.join(os.fsencode(again), b"calc/latin.py"), "rb") as f:
        assert f.read() == files[b"calc/latin.py"]


CHANGES = {
    "empty-file": lambda w: (w / "calc/empty.py").write_bytes(b""),
    "mode-change": lambda w: (w / "README.md").chmod(0o755),
    "delete": lambda w: (w / "tests/test_other.py").unlink(),
    "file-to-folder": lambda w: ((w / "README.md").unlink(), (w / "README.md").mkdir(),
                                 (w / "README.md" / "x.txt").write_text("x\n")),
    "crlf": lambda w: (w / "calc/__init__.py").write_bytes(FIXED_SOURCE.replace("\n", "\r\n").encode()),
    "no-final-newline": lambda w: (w / "calc/__init__.py").write_bytes(FIXED_SOURCE.rstrip("\n").encode()),
    "large-file": lambda w: (w / "calc/big.txt").write_bytes(b"x\n" * 5_000_000),
    "attributes-no-diff": lambda w: ((w / ".gitattributes").write_text("*.py -diff\n"),
                                     (w / "calc/__init__.py").write_text(FIXED_SOURCE)),
    "attributes-crlf": lambda w: ((w / ".gitattributes").write_text("* text eol=crlf\n"),
                                  (w / "calc/__init__.py").write_text(FIXED_SOURCE)),
    "ignored-folder": lambda w: ((w / ".gitignore").write_text("calc/\n"), (w / "calc/__init__.py").write_text(FIXED_SOURCE)),
}


@pytest.mark.parametrize("name", sorted(CHANGES))
def test_a_work_tree_change_reaches_the_grading_as_made(tmp_path, name):
    """What a trial grades (its patch laid on a fresh base) is the work tree as the agent left it, whatever the
    kind of change: a right fix is never lost to lab's own diff and apply (that would be lab's failure counted
    as the agent's)."""
    import subprocess

    from rules.trial import graded_tree

    repos, records = make_calc(tmp_path / "src")
    rendered = swebench.render(swebench._instance(records[0]), calc_env(), str(repos))
    task, work = tmp_path / "task", lay_rendered(rendered, tmp_path)
    CHANGES[name](work)
    tree, note = graded_tree(task, work, tmp_path / "graded")
    assert note == ""
    diff = subprocess.run(["diff", "-r", "--no-dereference", "-x", ".git", str(work), str(tree)], capture_output=True,
                          text=True)
    assert diff.returncode == 0, diff.stdout[:2000]
    if (work / "README.md").is_file():
        assert (work / "README.md").stat().st_mode == (tree / "README.md").stat().st_mode


# ---- the fixture swe tier in the real engine ----

PKG_SETUP = 'from setuptools import setup\n\nsetup(name="calc", version="0.1", packages=["calc"])\n'
PKG_ENV = """
[envs.calcpkg]
repo = "lab/calcpkg"
versions = ["0.1"]
# the repository installed from its environment-setup commit, as the real tables do for flask, pytest, pylint
install = ["pip install pytest==8.3.3 ."]
"""


def _make_calcpkg(src: Path) -> dict:
    """``src/repos/calcpkg``: the calc fixture as an installable package, and its instance ``lab__calcpkg-1``
    whose environment-setup commit is the fix commit (as SWE-bench's often is: the last commit of a version)."""
    from fixture_swe import FIXED_TESTS, ISSUE, _git, _write

    repo = src / "repos" / "calcpkg"
    repo.mkdir(parents=True)
    _git(repo, "init", "-q", "-b", "main")
    _write(repo, {**BASE, "setup.py": PKG_SETUP})
    _git(repo, "add", "-A")
    _git(repo, "commit", "-qm", "calc")
    base = _git(repo, "rev-parse", "HEAD").strip()
    _write(repo, {"calc/__init__.py": FIXED_SOURCE, "tests/test_calc.py": FIXED_TESTS})
    _git(repo, "add", "-A")
    _git(repo, "commit", "-qm", "fix add")
    fix = _git(repo, "rev-parse", "HEAD").strip()
    return {"repo": "lab/calcpkg", "instance_id": "lab__calcpkg-1", "base_commit": base,
            "patch": _git(repo, "diff", base, "HEAD", "--", "calc"),
            "test_patch": _git(repo, "diff", base, "HEAD", "--", "tests"), "problem_statement": ISSUE,
            "hints_text": "", "created_at": "2026-01-01T00:00:00Z", "version": "0.1",
            "environment_setup_commit": fix, "FAIL_TO_PASS": json.dumps(["tests/test_calc.py::test_add"]),
            "PASS_TO_PASS": json.dumps(["tests/test_calc.py::test_mul"])}


# a blanket forger in the graded code: at exit, every failure of every JUnit report is dropped
FORGE_AT_EXIT = textwrap.dedent('''\
    import atexit as _atexit, glob as _glob, os as _os, re as _re

    def _forge():
        for path in _glob.glob("/tmp/**/*.xml", recursive=True):
            try:
                text = open(path).read()
                text = _re.sub(r"<(failure|error|skipped)\\b.*?</\\1>", "", text, flags=_re.S)
                text = _re.sub(r'(failures|errors|skipped)="\\d+"', r'\\1="0"', text)
                open(path, "w").write(text)
            except OSError:
                pass
        _os._exit(0)

    _atexit.register(_forge)
    ''')

AGENTS = f"""
[copier]
image = "noop"
command = ["sh", "-c", '''grep -rlsIzP 'def add\\(a, b\\):\\n    return a \\+ b' /opt /root /srv /home /var /etc /tmp /usr/local | sed 's/^/LEAK /'
f=$(find / \\( -path /proc -o -path /sys -o -path /work \\) -prune -o -path '*site-packages/calc/__init__.py' -print 2>/dev/null | head -n1)
echo "INSTALLED=$f"; if [ -n "$f" ]; then cp "$f" calc/__init__.py; fi; true''']
network = "none"

[forger]
image = "noop"
command = ["sh", "-c", '''cat > calc/__init__.py <<'EOF'
{FIXED_SOURCE.replace("return a * b", "return a + b")}
{FORGE_AT_EXIT}
EOF''']
network = "none"

[hider]
image = "noop"
command = ["sh", "-c", '''printf 'calc/_helper.py\\n' > .gitignore
printf 'def mul(a, b):\\n    return a * b\\n' > calc/_helper.py
cat > calc/__init__.py <<'EOF'
def add(a, b):
    return a + b


try:
    from calc._helper import mul
except ImportError:
    def mul(a, b):
        return a + b
EOF''']
network = "none"
"""


@pytest.fixture(scope="module")
def home(tmp_path_factory):
    """A lab home with the fixture swe tier generated: ``lab__calc-1`` (environment ``calc``: pytest only) and
    ``lab__calcpkg-1`` (environment ``calcpkg``: the repository installed from its fix commit), and the
    scripted hostile agents."""
    from fixture_swe import SUITE

    root = tmp_path_factory.mktemp("honest-swe")
    make_calc(root / "src")
    extra = _make_calcpkg(root / "src")
    with open(root / "src" / "data.jsonl", "a") as f:
        f.write(json.dumps(extra) + "\n")
    home = root / "home"
    write_suite(home, make_upstream(root / "upstream"))
    (home / "evals" / "swe").mkdir(parents=True, exist_ok=True)
    suite = SUITE.format(dataset=root / "src" / "data.jsonl", repos=root / "src" / "repos").replace(
        'instances = ["lab__calc-1", "lab__calc-2"]', 'instances = ["lab__calc-1", "lab__calcpkg-1"]')
    (home / "evals" / "swe" / "suite.toml").write_text(suite + PKG_ENV)
    agents = home / "evals" / "agents.toml"
    agents.write_text(agents.read_text() + AGENTS)
    res = run_doit(home, "gen:swe")
    assert res.code == 0, res.stdout[-3000:] + res.stderr[-3000:]
    manifest = json.loads((home / "evals" / "swe" / "manifest.json").read_text())
    status = {t["task"]: t["status"] for t in manifest["tasks"]}
    assert (status[TASK], status["lab__calcpkg-1"]) == ("kept", "kept"), manifest
    return home


def _run(home: Path, *args: str):
    res = run_doit(home, "run", "suite=swe", "jobs=1", *args)
    assert res.code == 0, res.stdout[-4000:] + res.stderr[-3000:]
    return res


def _result(home: Path, run: str, task: str = TASK) -> dict:
    return json.loads((home / "evals" / "swe" / "runs" / run / task / "result.json").read_text())


@docker
def test_the_fix_installed_in_the_environment_image_is_not_in_the_agents_container(home):
    """The environment image installs the repository from its environment-setup commit, here the fix commit:
    an agent that copied the installed copy over the work tree resolved the task without solving it. The image
    keeps the installed distribution's metadata and loses its code (``swebench.STRIP_INSTALLED``)."""
    _run(home, "agent=copier")
    r = _result(home, "copier", "lab__calcpkg-1")
    log = (home / "evals" / "swe" / "runs" / "copier" / "lab__calcpkg-1" / "attempt-1" / "agent-1.log").read_text()
    assert "INSTALLED=\n" in log or log.rstrip().endswith("INSTALLED="), log[-2000:]
    assert "LEAK" not in log, log[-2000:]
    assert (r["status"], r["resolved"]) == ("fail", False), r
    # the distribution is still installed as far as its metadata goes; its code is gone
    from rules.sandbox import run as run_container
    probe = run_container("lab/swe-env:calcpkg", ["python", "-c", "import importlib.metadata as m; print(m.version('calc'))\n"
                          "import os; os.chdir('/'); import calc"], network="none")
    assert "0.1" in probe.output and "No module named 'calc'" in probe.output, probe.output


# the work tree's package made to load the copy installed in the image (from the fix commit) instead of itself
REDIRECT = textwrap.dedent('''\
    import sys as _sys
    if not getattr(_sys, "_lab_redirect", False):
        _sys._lab_redirect = True
        _sys.path[:] = [p for p in _sys.path if not p.startswith("/work") and p not in ("", ".")]
        del _sys.modules["calc"]
        import calc as _installed
        _sys.modules["calc"] = _installed
    ''')


@docker
def test_a_patch_that_imports_the_installed_fix_instead_of_its_own_code_is_not_resolved(home, tmp_path):
    """No fix, only a redirect: ``import calc`` loads the copy the environment image installed from the fix
    commit. Resolved before (pytest-dev__pytest-11143 and pallets__flask-4992 too, on their real images); with
    the installed code gone from the image, the tests cannot import calc at all."""
    g, note = _grade_attack(home, tmp_path, "redirect", {"calc/__init__.py": REDIRECT}, {}, [], task="lab__calcpkg-1")
    assert note == "" and g.verdict == "fail" and not g.passed, (g.evidence, g.output[-2000:])
    fixed, _ = _grade_attack(home, tmp_path, "fixed", {"calc/__init__.py": FIXED_SOURCE}, {}, [], task="lab__calcpkg-1")
    assert fixed.verdict == "pass", (fixed.evidence, fixed.output[-2000:])


# ---- forged verdicts: the held-out grading of a work tree that leaves add() wrong ----

PLUGIN_ALL_PASS = textwrap.dedent('''\
    import pytest

    print("LAB-ATTACK-LOADED")

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_makereport(item, call):
        outcome = yield
        report = outcome.get_result()
        report.outcome, report.longrepr = "passed", None
    ''')
PLUGIN_XFAIL = textwrap.dedent('''\
    import pytest

    print("LAB-ATTACK-LOADED")

    def pytest_collection_modifyitems(items):
        for item in items:
            item.add_marker(pytest.mark.xfail(reason="skip them all", run=False))
    ''')
# a whole fake pytest, found first on the path (`python -m pytest` from /work): it reports every test function of
# the files it is given, passed
FAKE_PYTEST = textwrap.dedent('''\
    import re, sys
    print("LAB-ATTACK-LOADED")
    out = [a.split("=", 1)[1] for a in sys.argv if a.startswith("--junitxml=")][0]
    cases = []
    for path in [a for a in sys.argv[1:] if a.endswith(".py")]:
        cls = path[:-3].replace("/", ".")
        cases += [f'<testcase classname="{cls}" name="{n}"/>' for n in re.findall(r"^def (test_\\w+)", open(path).read(), re.M)]
    open(out, "w").write(f'<testsuites><testsuite tests="{len(cases)}" failures="0">{"".join(cases)}</testsuite></testsuites>')
    sys.exit(0)
    ''')
RUNNER_PATCHED = WRONG + PYTEST_RUNNER_PATCH
EXTRA_REPORT = WRONG + textwrap.dedent('''\
    import os
    for d in ("/tmp/lab-out", "/tmp/lab-out/more"):
        try:
            os.makedirs(d, exist_ok=True)
            open(d + "/zz.xml", "w").write('<testsuite><testcase classname="tests.test_calc" name="test_add"/>'
                                          '<testcase classname="tests.test_calc" name="test_mul"/></testsuite>')
        except OSError:
            pass
    ''')
DIST = {"evil-1.0.dist-info/METADATA": "Metadata-Version: 2.1\nName: evil\nVersion: 1.0\n",
        "evil-1.0.dist-info/entry_points.txt": "[pytest11]\nevil = calc._plug\n"}
PASSING_TESTS = "def test_add():\n    pass\n\n\ndef test_mul():\n    pass\n"

# name: (files to write (path -> text or bytes), symlinks (path -> target), paths to remove, the verdict expected)
SHADOW_TESTS = textwrap.dedent('''\
    import os, runpy
    __file__ = __path__[0] + ".py"
    for _name, _value in runpy.run_path(__file__).items():
        if _name in ("test_add", "test_mul"):
            _value = lambda: None
        globals()[_name] = _value
    ''')

ATTACKS = {
    "report-rewritten-at-exit": ({"calc/__init__.py": WRONG + FORGE_AT_EXIT}, {}, [], "tampered"),
    "runner-internals-patched": ({"calc/__init__.py": RUNNER_PATCHED}, {}, [], "tampered"),
    # a conftest.py that is a symlink to a plugin passing every test: removed like a conftest.py file (before:
    # loaded, and caught by the canaries only)
    "conftest-symlink": ({"calc/_plug.py": PLUGIN_ALL_PASS}, {"tests/conftest.py": "../calc/_plug.py"}, [], "fail"),
    # a distribution in the work tree whose pytest11 entry point pytest loads on its own
    "entry-point-plugin": ({"calc/_plug.py": PLUGIN_ALL_PASS, **DIST}, {}, [], "tampered"),
    "entry-point-xfails-everything": ({"calc/_plug.py": PLUGIN_XFAIL, **DIST}, {}, [], "tampered"),
    # pytest itself shadowed by a module of the work tree
    "pytest-shadowed": ({"pytest.py": FAKE_PYTEST}, {}, [], "tampered"),
    "pytest-package-shadowed": ({"pytest/__init__.py": "", "pytest/__main__.py": FAKE_PYTEST}, {}, [], "tampered"),
    # interpreter start-up hooks, and a .pth file, in the work tree
    "site-hooks": ({"sitecustomize.py": FORGE_AT_EXIT, "usercustomize.py": FORGE_AT_EXIT,
                    "lab-forge.pth": "import sitecustomize\n", "calc/__init__.py": WRONG + "import sitecustomize\n"},
                   {}, [], "fail"),  # never imported: the work tree is not on the path at start-up here
    # pytest's settings in every file it reads them from: ignored (`-c` the base's settings, here none)
    "settings-files": ({"calc/_plug.py": PLUGIN_ALL_PASS, "setup.cfg": "[tool:pytest]\naddopts = -p calc._plug\n",
                        "tox.ini": "[pytest]\naddopts = --deselect tests/test_calc.py::test_add\n",
                        "pytest.ini": "[pytest]\naddopts = -k 'not add'\n",
                        "pyproject.toml": "[tool.pytest.ini_options]\naddopts = '-p calc._plug'\n"}, {}, [], "fail"),
    # the held-out test file written by the agent, or every test file deleted: laid back from the base + patch
    "held-out-file-rewritten": ({"tests/test_calc.py": PASSING_TESTS}, {}, [], "fail"),
    "tests-deleted": ({}, {}, ["tests/test_calc.py", "tests/test_other.py"], "fail"),
    # the tests folder replaced by a link to a folder of passing tests
    "tests-folder-symlinked": ({"mytests/test_calc.py": PASSING_TESTS, "mytests/test_other.py": PASSING_TESTS},
                               {"tests": "mytests"}, ["tests/test_calc.py", "tests/test_other.py", "tests"], "fail"),
    "skip-at-import": ({"tests/__init__.py": "import pytest\npytest.skip('no', allow_module_level=True)\n"}, {}, [],
                       None),
    # a second report beside pytest's claiming the tests passed: the worst outcome of a test counts
    "extra-report-file": ({"calc/__init__.py": EXTRA_REPORT}, {}, [], "fail"),
    # a package named as the held-out test module, imported in its place: it runs the real file and empties every
    # test but the canary-like ones (red team 3); check.sh removes the folder, so the real tests run
    "test-module-shadowed": ({"tests/test_calc/__init__.py": SHADOW_TESTS}, {}, [], "fail"),
    # odd file names (not UTF-8, a newline) and binary files in the work tree
    "odd-names-and-binary": ({b"calc/\xffodd.py": b"x = 1\n", "calc/new\nline.py": "y = 2\n",
                              "calc/blob.bin": bytes(range(256)) * 64}, {}, [], "fail"),
}


def _grade_attack(home: Path, tmp: Path, name: str, files: dict, links: dict, remove: list, task: str = TASK):
    """Grade, with the held-out tests, a fresh work tree of the task with ``files`` written, ``links`` made and
    ``remove`` removed, the way a trial grades it (its patch laid on a fresh base). Returns (Grade, note)."""
    import os
    import shutil

    from rules.config import Limits
    from rules.grade import grade
    from rules.worktree import lay_work_tree
    from rules.trial import graded_tree

    task = home / "evals" / "swe" / "tasks" / task
    work = tmp / name / "work"
    lay_work_tree(task, work)
    for rel in remove:
        p = work / rel
        shutil.rmtree(p) if p.is_dir() and not p.is_symlink() else p.unlink()
    for rel, data in files.items():
        p = Path(os.fsdecode(os.path.join(os.fsencode(work), rel if isinstance(rel, bytes) else rel.encode())))
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_bytes(data if isinstance(data, bytes) else data.encode())
    for rel, target in links.items():
        os.symlink(target, work / rel)
    tree, note = graded_tree(task, work, tmp / name / "graded")
    meta = json.loads((task / "task.json").read_text())
    g = grade(task, tree, image=meta["image"], limits=Limits(cpus=1, memory=2 * 1024**3, pids=512, timeout=300),
              log_path=tmp / name / "grade.log")
    return g, note


@docker
def test_odd_names_in_the_report_folder_never_make_root_copy_through_links(home, tmp_path, monkeypatch):
    """check.sh copies the tester's report folder to the host as root: a file name holding a newline once made a
    line of it read as a path of its own, so a link to /dev/zero the tester left in /work was copied, 50 MB a
    name, 64 names a grading, onto the host's disk. Names are NUL-separated now and links never followed."""
    seen = reports_handed_over(monkeypatch)
    g, _ = _grade_attack(home, tmp_path, "flood", {"calc/__init__.py": WRONG + REPORT_FLOOD}, {}, [])
    assert g.verdict == "fail" and "report.xml" in seen, (g.evidence, seen)
    assert max(seen.values()) < 1_000_000 and not any(k.startswith(("zz", "link")) for k in seen), seen


@docker
def test_the_honest_fix_is_resolved_with_fresh_canaries(home, tmp_path):
    g, note = _grade_attack(home, tmp_path, "fix", {"calc/__init__.py": FIXED_SOURCE}, {}, [])
    assert (g.verdict, g.passed, note) == ("pass", True, ""), g.output[-2000:]


@docker
@pytest.mark.parametrize("name", sorted(ATTACKS))
def test_a_forged_swe_verdict_is_never_a_pass(home, tmp_path, name):
    files, links, remove, expected = ATTACKS[name]
    g, note = _grade_attack(home, tmp_path, name, files, links, remove)
    assert g.verdict in ("fail", "tampered") and not g.passed, (g.evidence, g.output[-3000:])
    if expected:
        assert g.verdict == expected, (g.evidence, note, g.output[-3000:])


# ---- plausibility: an attempt that breaks pre-existing tests is never plausible ----

@docker
def test_a_forged_pretest_run_makes_the_attempt_not_plausible(home):
    """``forger`` fixes add, breaks mul (a pre-existing test) and drops every failure from the reports at exit:
    the pre-existing tests' run (with its own canaries) shows the forging, so the attempt is not plausible, and
    the held-out grading says tampered."""
    _run(home, "agent=forger")
    r = _result(home, "forger")
    a = r["attempts"][0]
    assert a["plausible"] is False and any(b.startswith("tampered:") for b in a["broken"]), a
    assert (r["status"], r["resolved"], r["plausible"]) == ("tampered", False, False), r


@docker
def test_files_the_patch_leaves_out_never_make_an_attempt_plausible(home):
    """``hider`` keeps a working mul in a file its own .gitignore hides from the patch; the patch itself (what is
    graded and predicted) breaks mul. Plausibility is measured on the patch laid on a fresh base, so the attempt
    breaks test_mul there (before: measured on the work tree, it looked plausible)."""
    _run(home, "agent=hider")
    r = _result(home, "hider")
    a = r["attempts"][0]
    patch = (home / "evals" / "swe" / "runs" / "hider" / TASK / "patch.diff").read_text()
    assert "_helper" not in patch.split("+++ b/.gitignore", 1)[0] and "calc/_helper.py" in patch  # only in .gitignore
    assert a["broken"] == ["tests.test_calc::test_mul"] and a["plausible"] is False, a
    assert (r["status"], r["resolved"], r["plausible"]) == ("fail", False, False), r


# ---- a forger that spares the old canaries' shape ----

# The graded code runs in pytest's process and may rewrite its report. The canaries had one shape (``test_k`` and
# 11 hex digits, the last two functions of the first test file), so a forger that spared them passed (a documented
# limit until issue 19). They are now named and placed like the instance's own tests, with copies of its tests
# whose expected value is changed (templates/swe/canaries.py.j2): the forger below turns their failures into
# passes too, and the grading says tampered.
CANARY_AWARE = WRONG + textwrap.dedent('''\
    import atexit as _atexit, glob as _glob, os as _os, re as _re

    def _forge():  # drop the failure of every test but those named like a canary
        for path in _glob.glob("/tmp/**/*.xml", recursive=True):
            text = open(path).read()
            text = _re.sub(r'(<testcase [^>]* name="(?!test_k[0-9a-f]{11}")[^"]*"[^>]*>)\\s*<(failure|error)\\b.*?</\\2>',
                           r"\\1", text, flags=_re.S)
            open(path, "w").write(text)
        _os._exit(0)

    _atexit.register(_forge)
    ''')


@docker
def test_a_forger_that_spares_the_old_canary_shape_is_tampered(home, tmp_path):
    assert "test_k[0-9a-f]{11}" in CANARY_AWARE
    g, _ = _grade_attack(home, tmp_path, "canary-aware", {"calc/__init__.py": CANARY_AWARE}, {}, [])
    assert (g.verdict, g.passed) == ("tampered", False), (g.evidence, g.output[-2000:])
    assert any("expected value changed" in e or "must fail" in e for e in g.evidence), g.evidence


# ---- infrastructure is never the agent's doing ----

@pytest.mark.parametrize("cut", ["timed_out", "oom_killed"])
def test_a_pretest_baseline_cut_short_by_the_machine_is_an_error_never_kept(tmp_path, monkeypatch, cut):
    """The baseline (the pre-existing tests passing at base) is cached for every later trial: one cut short by
    a timeout or the memory limit would be kept with tests missing, and attempts breaking those tests would look
    plausible. It is an infrastructure error (SandboxError: the trial ends in ``error`` and runs again) instead;
    an attempt's own run cut short is a problem of the attempt, named (its code may be what hangs)."""
    import rules.grade
    import rules.tiers.swe.swebench
    from rules.config import Limits
    from rules.grade import Grade
    from rules.sandbox import SandboxError

    def cut_short(*args, **kwargs):
        return Grade(passed=False, ran=0, passed_tests=0, failed_tests=0, exit_code=None, timed_out=cut == "timed_out",
                     seconds=1.0, output="", oom_killed=cut == "oom_killed", tests=["tests.test_calc::test_mul"])

    monkeypatch.setattr(rules.grade, "grade", cut_short)
    monkeypatch.setattr(rules.tiers.swe.swebench, "lay_work_tree", lambda task, tree, answer=None: Path(tree).mkdir(parents=True))
    limits = Limits(timeout=30)
    with pytest.raises(SandboxError, match="did not finish on the untouched base"):
        swebench.pretest_baseline(tmp_path / "pretest", tmp_path / "task", image="x", limits=limits)
    broken = swebench.pretest_failures(tmp_path / "pretest", tmp_path, ["tests.test_calc::test_mul", "t::b"],
                                       image="x", limits=limits)
    assert broken[0] == "t::b" and broken[1].endswith(": the pre-existing tests did not finish"), broken


@pytest.mark.parametrize("runner", ["pytest", "django"])
def test_the_agents_test_cmd_sets_the_environments_test_env_as_the_grading_does(tmp_path, runner):
    """``{test_cmd}`` sets the environment's ``test_env`` (sphinx's PYTHONWARNINGS/PYTHONDEVMODE, django's locale)
    as check.sh sets it for the grading, for either runner; check.sh and the environment's digest do not
    change with it (the grading already set them)."""
    import shlex

    from fixture_django import make_shop, shop_env

    test_env = (("LANG", "en_US.UTF-8"), ("PYTHONWARNINGS", "error::DeprecationWarning,ignore::ResourceWarning"))
    if runner == "pytest":
        repos, records = make_calc(tmp_path / "src")
        record, env, plain = records[0], calc_env(test_env=test_env), calc_env()
    else:
        repos, record = make_shop(tmp_path)
        env, plain = shop_env(test_env=test_env), shop_env()
    rendered = swebench.render(swebench._instance(record), env, str(repos))
    cmd = rendered.meta["test_cmd"]
    for k, v in test_env:
        assert f"{k}={shlex.quote(v)} " in cmd, cmd
        assert f"{k}={shlex.quote(v)} " in rendered.task_files["check.sh"][0].decode(), "the grading sets it too"
    without = swebench.render(swebench._instance(record), plain, str(repos)).meta["test_cmd"]
    assert cmd.replace("LANG=en_US.UTF-8 PYTHONWARNINGS=" + shlex.quote(test_env[1][1]) + " ", "") == without
    assert shlex.split(cmd)[-1] == shlex.split(without)[-1], "the same tests run"


def test_the_agents_test_cmd_runs_the_pre_existing_tests_as_the_grading_does(tmp_path):
    """``{test_cmd}`` runs the environment's prepare lines first (pytest's own repository needs its version file,
    which no commit holds: without it every pre-existing test of the 17 pytest instances failed to import) and
    puts the work tree's folder on the path absolutely (tests that run pytest again from another folder import
    the work tree's copy, not none: the agent's image has no installed copy)."""
    repos, records = make_calc(tmp_path / "src")
    env = calc_env(pythonpath=".", prepare=("printf 'v = \"{version}\"\\n' > calc/_v.py",))
    meta = swebench.render(swebench._instance(records[0]), env, str(repos)).meta
    assert meta["test_cmd"] == ("printf 'v = \"0.1\"\\n' > calc/_v.py && PYTHONPATH=/work python -m pytest -rA "
                                "-p no:cacheprovider tests/test_calc.py"), meta["test_cmd"]
