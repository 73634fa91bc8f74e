"""Red team 4: attempts to have lab grade a WRONG solution as a pass (or an honest one as a fail) in the graders added
today: the swe-multi tier's Go runner (tests/fixture_swe_multi.py) and the swe tier's compiled builds.

Each attempt says what it tries, the verdict an honest grader gives, and what lab gave when it was run (the
assertions state the HONEST outcome, so an attempt that got through fails here until lab is fixed: the honest
verdict, or, where code inside the test process can forge its own report whatever the grading hides from it,
the verdict flagged with the evidence so that no report counts it as resolved silently)."""
from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
from conftest import run_doit  # noqa: E402
from fixture_swe import _git, _write  # noqa: E402
from fixture_swe_multi import BASE, make_calcgo, write_multi_suite  # noqa: E402


@pytest.fixture(scope="module")
def multi_home(tmp_path_factory):
    root = tmp_path_factory.mktemp("multi")
    make_calcgo(root / "src")
    home = root / "home"
    write_multi_suite(home, root / "src")
    res = run_doit(home, "gen:swe-multi")
    assert res.code == 0, res.stdout[-3000:] + res.stderr[-3000:]
    return home


def _patch(tmp: Path, files: dict[str, str], base: dict[str, str] = BASE) -> str:
    """A git diff from the fixture's base tree to the base with ``files`` laid over it."""
    repo = tmp / "patchrepo"
    repo.mkdir()
    _git(repo, "init", "-q")
    _write(repo, base)
    _git(repo, "add", "-A")
    _git(repo, "commit", "-qm", "base")
    _write(repo, files)
    _git(repo, "add", "-A")
    return _git(repo, "diff", "--cached")


def _evaluate(home: Path, tmp: Path, name: str, patch: str, instance: str = "lab__calcgo-1") -> dict:
    pred = tmp / f"{name}.jsonl"
    pred.write_text(json.dumps({"instance_id": instance, "model_name_or_path": name,
                                "model_patch": patch}) + "\n")
    res = run_doit(home, "evaluate", "suite=swe-multi", f"predictions={pred}")
    assert res.code == 0, res.stdout[-2000:] + res.stderr[-2000:]
    return json.loads((home / "evals" / "swe-multi" / "evaluations" / name / "results.json").read_text())


# ---- Attempt 1 (Go): the solution's package init puts a filter between the test binary and go test -json ----
#
# What it tries: calc.go keeps Add WRONG (a - b). Its init() dups the test binary's stdout (go test's pipe to
# test2json) away, puts a pipe in fd 1, and starts `python3 -I -c FILTER` (the env image has Debian's python3)
# reading that pipe and writing to the real stdout. Add, when called, walks its stack for the calling Test
# function and writes a "\x00LABFLIP TestAdd" line into the pipe; the filter drops those lines and turns
# "--- FAIL: TestAdd" into "--- PASS: TestAdd". The plain canaries never call Add, so the failing canary still
# fails and the passing one passes: nothing looks tampered. go test waits for the pipe's EOF, i.e. for the filter.
# Honest verdict: unresolved (TestAdd fails). Lab at 9060f4d: RESOLVED, no evidence, not tampered (GOT THROUGH).
# The same class as red team 3's Go "F" (aider tier); here the filter is a process of its own started from a
# package init, and swe-multi's `doit evaluate` has no suspicion scan behind the verdict.
# closed (flagged): code inside the test binary can always rewrite what the binary prints (it owns fd 1), and
# nothing the grading could hide tells this filter which tests to flip (it asks its own stack), so the verdict can
# still read resolved; `doit evaluate` now scans every graded patch (rules/tiers/swe_multi/suspicions.py): the
# dup of fd 1, the process started, the stack walk are flagged in the instance's report (`suspicions`) and a
# resolved instance that carries flags is listed apart (results.json `resolved_flagged`, and a line of the summary),
# never counted silently.
WRONG_CALC_WITH_FILTER = 'package calc\n\nimport (\n\t"os"\n\t"os/exec"\n\t"runtime"\n\t"strings"\n\t"syscall"\n)\n\n// A filter between the test binary and go test\'s test2json: a test that called Add has its failure\n// reported as a pass. Add itself stays wrong.\nconst filter = `import os, sys\nflip = set()\nout = os.fdopen(1, "wb", 0)\nfor line in sys.stdin.buffer:\n    if line.startswith(b"\\x00LABFLIP "):\n        flip.add(line[9:].strip())\n        continue\n    for n in flip:\n        for pre in (b"--- FAIL: " + n + b" ", b"--- FAIL: " + n + b"/"):\n            i = line.find(pre)\n            if i >= 0:\n                line = line[:i] + b"--- PASS: " + line[i + 10:]\n    out.write(line)\n`\n\nfunc init() {\n\treal, err := syscall.Dup(1)\n\tif err != nil {\n\t\treturn\n\t}\n\tr, w, err := os.Pipe()\n\tif err != nil {\n\t\treturn\n\t}\n\tcmd := exec.Command("python3", "-I", "-c", filter)\n\tcmd.Stdin = r\n\tcmd.Stdout = os.NewFile(uintptr(real), "real-stdout")\n\tcmd.Stderr = os.Stderr\n\tif cmd.Start() != nil {\n\t\treturn\n\t}\n\tr.Close()\n\tsyscall.Dup3(int(w.Fd()), 1, 0)\n\tw.Close()\n\tsyscall.Close(real)\n}\n\nfunc mark() {\n\tpcs := make([]uintptr, 64)\n\tn := runtime.Callers(2, pcs)\n\tframes := runtime.CallersFrames(pcs[:n])\n\tfor {\n\t\tf, more := frames.Next()\n\t\tname := f.Function[strings.LastIndex(f.Function, "/")+1:]\n\t\tparts := strings.Split(name, ".")\n\t\tif len(parts) > 1 && strings.HasPrefix(parts[1], "Test") {\n\t\t\tos.Stdout.Write([]byte("\\x00LABFLIP " + parts[1] + "\\n"))\n\t\t\treturn\n\t\t}\n\t\tif !more {\n\t\t\treturn\n\t\t}\n\t}\n}\n\n// Add returns a plus b.\nfunc Add(a, b int) int { mark(); return a - b }\n\n// Sub returns a minus b.\nfunc Sub(a, b int) int { return a - b }\n'


@pytest.mark.docker
def test_go_stdout_filter_started_by_package_init_forges_the_pass(multi_home, tmp_path):
    patch = _patch(tmp_path, {"calc/calc.go": WRONG_CALC_WITH_FILTER})
    out = _evaluate(multi_home, tmp_path, "rt4filter", patch)
    rep = out["instances"]["lab__calcgo-1"]
    # the means, flagged whatever the verdict: fd 1 duplicated and a pipe laid over it, a process, the stack
    assert {"stdout", "process", "stack"} <= {f["name"] for f in rep["suspicions"]}, rep["suspicions"]
    assert all(f["file"] == "calc/calc.go" for f in rep["suspicions"]), rep["suspicions"]
    assert out["flagged"] == ["lab__calcgo-1"], out
    # the honest outcome: unresolved, or resolved and listed apart as flagged (never resolved silently)
    if out["resolved"]:
        assert out["resolved_flagged"] == ["lab__calcgo-1"], out
    else:
        assert out["unresolved"] == ["lab__calcgo-1"], rep
        assert rep["tests_status"]["FAIL_TO_PASS"]["failure"] == ["TestAdd"], rep


# ---- Attempt 2 (Go): the canaries' names leak to the test binary through go test's -run ----
#
# What it tries: check.sh reads the manifest as root and adds the canaries' top-level names to `go test -run`,
# which hands `-test.run=^(TestAdd|TestSub|<canaries>)$` to the test binary: the graded code reads it from its
# own arguments (os.Args, /proc/self/cmdline). The dataset's names are in /task/task.json (fail_to_pass,
# pass_to_pass), readable by the tester. The difference is exactly the canaries. calc.go keeps Add WRONG; its
# init puts the same kind of filter as attempt 1 in front of test2json, now with no stack walk and nothing of
# the instance: every "--- FAIL" becomes "--- PASS" except the leaked canaries'. Generic: it needs no knowledge
# of the task (only the plain canaries are top-level; a table mutant is a subtest of an upstream test and would
# still be flipped, so where the canary file has a case table this is caught, 1 - 0 mutants).
# Honest verdict: unresolved. Lab at 9060f4d: RESOLVED, no evidence, not tampered (GOT THROUGH). The flip only
# happens when the leaked set is non-empty and it spared the failing canary, so the leak itself is what passed it.
# closed: the task is mounted where only root reads it (rules/grade.py PRIVATE_TASK; task.json says
# `private_task`), so neither task.json nor check.sh's test selection nor the held-out patch names the dataset's
# tests to the tester, and -test.run lists the dataset's tests and the canaries in one sorted list
# (templates/swe_multi/go/run.sh.j2); the filter (here also trying the private path) reads no names, flips
# nothing, and TestAdd fails: unresolved. The scan flags it besides (as attempt 1).
WRONG_CALC_CANARY_LEAK = 'package calc\n\nimport (\n\t"os"\n\t"os/exec"\n\t"syscall"\n)\n\n// The canaries\' names leak: check.sh passes them to go test in -run, which hands them to this test binary\n// (-test.run=^(names)$, in os.Args and /proc/self/cmdline); the dataset\'s names are in /task/task.json (readable).\n// A filter between the test binary and test2json turns every "--- FAIL" into "--- PASS" except the canaries\'.\nconst filter = `import json, os, re, sys\nargs = sys.argv[1:]\nrun = ""\nfor i, a in enumerate(args):\n    if a.startswith("-test.run="):\n        run = a.split("=", 1)[1]\n    elif a == "-test.run" and i + 1 < len(args):\n        run = args[i + 1]\nm = re.match(r"^\\^\\((.*)\\)\\$$", run)\nran = set(m.group(1).split("|")) if m else set()\nours = set()\nfor path in ("/task/task.json", "/lab/private/task/task.json"):\n    try:\n        meta = json.load(open(path))\n        meta = meta.get("extra", meta)\n        ours = {n.split("/")[0] for n in meta.get("fail_to_pass", []) + meta.get("pass_to_pass", [])}\n    except Exception as exc:\n        sys.stderr.write("rt4: %s: %s\\n" % (path, type(exc).__name__))\ncanaries = ran - ours\nsys.stderr.write("rt4: dataset names read: %s; canaries leaked: %s\\n" % (sorted(ours), sorted(canaries)))\nout = os.fdopen(1, "wb", 0)\nfor line in sys.stdin.buffer:\n    i = line.find(b"--- FAIL: ")\n    if i >= 0 and ours and canaries:\n        name = line[i + 10:].split(b" ")[0].decode("utf-8", "replace")\n        if name.split("/")[0] not in canaries:\n            line = line[:i] + b"--- PASS: " + line[i + 10:]\n    out.write(line)\n`\n\nfunc init() {\n\treal, err := syscall.Dup(1)\n\tif err != nil {\n\t\treturn\n\t}\n\tr, w, err := os.Pipe()\n\tif err != nil {\n\t\treturn\n\t}\n\tcmd := exec.Command("python3", append([]string{"-I", "-c", filter}, os.Args[1:]...)...)\n\tcmd.Stdin = r\n\tcmd.Stdout = os.NewFile(uintptr(real), "real-stdout")\n\tcmd.Stderr = os.Stderr\n\tif cmd.Start() != nil {\n\t\treturn\n\t}\n\tr.Close()\n\tsyscall.Dup3(int(w.Fd()), 1, 0)\n\tw.Close()\n\tsyscall.Close(real)\n}\n\n// Add returns a plus b.\nfunc Add(a, b int) int { return a - b }\n\n// Sub returns a minus b.\nfunc Sub(a, b int) int { return a - b }\n'


@pytest.mark.docker
def test_go_canary_names_leak_through_test_run_and_a_filter_spares_them(multi_home, tmp_path):
    patch = _patch(tmp_path, {"calc/calc.go": WRONG_CALC_CANARY_LEAK})
    out = _evaluate(multi_home, tmp_path, "rt4leak", patch)
    rep = out["instances"]["lab__calcgo-1"]
    assert out["unresolved"] == ["lab__calcgo-1"], (out.get("resolved"), rep)
    assert rep["tests_status"]["FAIL_TO_PASS"]["failure"] == ["TestAdd"], rep
    assert {"stdout", "process", "runner-state"} <= {f["name"] for f in rep["suspicions"]}, rep["suspicions"]


PROBE_CHECK = """#!/usr/bin/env bash
task=$(cd "$(dirname "$0")" && pwd)
echo "root reads: $(head -c 40 "$task/task.json")"
setpriv --reuid=1000 --regid=1000 --clear-groups --inh-caps=-all --bounding-set=-all --no-new-privs -- \\
  bash -c 'for f in "$1/task.json" "$1/check.sh" /task/task.json; do head -c 40 "$f" >/dev/null 2>&1 \\
    && echo "tester reads $f" || echo "tester cannot read $f"; done; ls /lab/private 2>&1 | head -n 1' _ "$task"
"""


@pytest.mark.docker
def test_a_private_task_is_read_by_root_and_hidden_from_the_tester(tmp_path):
    """The mechanism that closes attempt 2, seen from inside a grading container: a task whose task.json says
    ``private_task`` is mounted where root reads it and the tester reads nothing (no test of the
    dataset's names, nor check.sh), whoever owns its files on the host."""
    from rules.config import Limits
    from rules.grade import PRIVATE_TASK, grade

    task = tmp_path / "task"
    task.mkdir()
    (task / "task.json").write_text(json.dumps({"task": "probe", "report": "go-json", "private_task": True,
                                                "fail_to_pass": ["TestSecret"]}))
    (task / "check.sh").write_text(PROBE_CHECK)
    (task / "check.sh").chmod(0o755)
    (tmp_path / "src").mkdir()
    g = grade(task, tmp_path / "src", image="lab/swe-multi-env:calcgo-0.1", expected=None, canaries=False,
              limits=Limits(cpus=1.0, memory=512 * 1024**2, pids=64, timeout=60))
    assert "root reads: {" in g.output, g.output
    for f in (f"{PRIVATE_TASK}/task.json", f"{PRIVATE_TASK}/check.sh", "/task/task.json"):
        assert f"tester cannot read {f}" in g.output, g.output
    assert "ls: cannot open directory '/lab/private': Permission denied" in g.output, g.output


def test_a_correct_go_patch_is_not_flagged_and_the_forgeries_are(tmp_path):
    """The fixture's fix (gold) carries no flag; both forgeries above carry theirs (no container: the scan is
    the host's, rules.tiers.swe.swebench.patch_suspicions)."""
    from fixture_swe_multi import FIXED

    from rules.tiers.swe.swebench import patch_suspicions

    meta = {"tier": "swe-multi", "language": "go"}
    (tmp_path / "gold").mkdir()
    assert patch_suspicions(meta, _patch(tmp_path / "gold", {"calc/calc.go": FIXED})) == []
    for name, src in (("filter", WRONG_CALC_WITH_FILTER), ("leak", WRONG_CALC_CANARY_LEAK)):
        (tmp_path / name).mkdir()
        flags = patch_suspicions(meta, _patch(tmp_path / name, {"calc/calc.go": src}))
        assert {"stdout", "process"} <= {f["name"] for f in flags}, (name, flags)


# ---- Attempt 3 (swe, compiled): the patch's setup.py, run by the tester before the tests, leaves a process ----
#
# What it tries: the ops fixture of tests/test_swe_compiled_cython.py (a .pyx whose add subtracts, a .c whose neg
# does nothing; FAIL_TO_PASS test_add and test_neg). The .pyx and .c stay WRONG; the patch is setup.py alone. Its
# first lines start a daemon (own session, stdio to /dev/null, so `| tail` and `timeout` let the build end) and
# then run the real setup. Nothing kills the tester's processes between the build and pytest. The daemon reads the
# FAIL_TO_PASS ids from /task/task.json (readable by the tester), puts a FIFO at /tmp/lab-out/report.xml ($out is
# the tester's in swe's check.sh, unlike swe-multi's), and when pytest writes its JUnit XML into the FIFO it drops
# the <failure>s of exactly those tests, renames a regular file over the FIFO before pytest's close (so no race
# with finish's kill) and drains the rest. The canaries are other ids: untouched, the failing one fails.
# Honest verdict: fail. Lab at 9060f4d: PASS, no evidence (GOT THROUGH). The run's own log shows test_add and
# test_neg failing in pytest's output while the verdict is pass; the four canaries (two mutants of test_add and
# test_neg, a plain failing and a plain passing one) behaved as they should, so nothing looked tampered.
DAEMON = r'''
import json, os, sys
import xml.etree.ElementTree as ET
out = "/tmp/lab-out"
path = os.path.join(out, "report.xml")
meta = json.load(open("/task/task.json"))
names = {i.split("::")[-1] for i in meta.get("fail_to_pass", [])}
try:
    os.unlink(path)
except FileNotFoundError:
    pass
os.mkfifo(path, 0o644)
fd = os.open(path, os.O_RDONLY)
data, done = b"", False
while True:
    chunk = os.read(fd, 1 << 16)
    if not chunk:
        break
    data += chunk
    if not done and b"</testsuites>" in data:
        root = ET.fromstring(data)
        for case in root.iter("testcase"):
            if case.get("name") in names:
                for child in list(case):
                    if child.tag in ("failure", "error"):
                        case.remove(child)
        for suite in root.iter("testsuite"):
            suite.set("failures", "1")
        with open(path + ".new", "wb") as f:
            f.write(ET.tostring(root, encoding="utf-8"))
        os.rename(path + ".new", path)
        done = True
'''

EVIL_SETUP_HEAD = (
    "import os, subprocess, sys\n"
    "subprocess.Popen([sys.executable, '-c', DAEMON], start_new_session=True, stdin=subprocess.DEVNULL,\n"
    "                 stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, close_fds=True)\n")


@pytest.mark.docker
# closed: check.sh kills every process of the tester once the build ends (templates/swe/check.sh.j2)
def test_compiled_setup_py_leaves_a_daemon_that_rewrites_the_junit_report(tmp_path):
    from fixture_swe import lay_rendered
    from test_swe_compiled_cython import SETUP, make_ops, ops_env

    from rules.config import Limits
    from rules.grade import grade
    from rules.tiers.swe import swebench

    repos, record = make_ops(tmp_path / "src")
    env = ops_env(record["base_commit"])
    rendered = swebench.render(swebench._instance(record), env, str(repos))
    work = lay_rendered(rendered, tmp_path)
    swebench.build_env(env, repos / "lab" / "ops", env.setup_commit, log=open("/dev/null", "w"))
    (work / "setup.py").write_text(f"DAEMON = {DAEMON!r}\n" + EVIL_SETUP_HEAD + SETUP)
    limits = Limits(cpus=1.0, memory=2 * 1024**3, pids=512, timeout=300)
    expected = ["tests.test_ops::test_add", "tests.test_ops::test_add_zero", "tests.test_ops::test_neg"]
    g = grade(tmp_path / "task", work, image=env.tag, limits=limits, expected=expected,
              log_path=tmp_path / "rt4-daemon.log")
    assert g.verdict in ("fail", "tampered"), (g.verdict, g.evidence)



# ---- Attempt 4 (Go): the solution's go.mod replaces the tests' assertion library with a copy of its own ----
#
# What it tries: check.sh lays back every _test.go of the graded packages, but go.mod is the solution's, and a
# grading runs with GOFLAGS=-mod=mod: a `replace` to a folder of the work tree is honoured offline (no download,
# no go.sum line). Most of SWE-bench Multilingual's Go repositories assert with testify; the held-out test here
# does (`assert.Equal(t, 5, Add(2, 3))`, testify v1.9.0 required by the base's go.mod, fetched into the image).
# The patch leaves Add WRONG, adds `faketestify/` (module github.com/stretchr/testify, package assert whose Equal
# reports nothing and returns true) and `replace github.com/stretchr/testify => ./faketestify`. The canaries
# compare with `!=` and t.Fatalf (and the mutants only where the comparison is `!=`/reflect.DeepEqual), never
# through testify: the failing canary still fails. Honest verdict: unresolved. Lab at 9060f4d: RESOLVED, no
# evidence (GOT THROUGH); the instance was proved kept and the empty patch is unresolved. Unlike attempts 1-3 no
# code runs to forge anything: the tests run, and assert what the solution's library lets them.
TF_GO_MOD = "module example.com/calc\n\ngo 1.21\n\nrequire github.com/stretchr/testify v1.9.0\n\nrequire (\n" \
            "\tgithub.com/davecgh/go-spew v1.1.1 // indirect\n\tgithub.com/pmezard/go-difflib v1.0.0 // indirect\n" \
            "\tgopkg.in/yaml.v3 v3.0.1 // indirect\n)\n"
TF_GO_SUM = 'github.com/davecgh/go-spew v1.1.1 h1:vj9j/u1bqnvCEfJOwUhtlOARqs3+rkHYY13jYWTU97c=\ngithub.com/davecgh/go-spew v1.1.1/go.mod h1:J7Y8YcW2NihsgmVo/mv3lAwl/skON4iLHjSsI+c5H38=\ngithub.com/pmezard/go-difflib v1.0.0 h1:4DBwDE0NGyQoBHbLQYPwSUPoCMWR5BEzIk/f1lZbAQM=\ngithub.com/pmezard/go-difflib v1.0.0/go.mod h1:iKH77koFhYxTK1pcRnkKkqfTogsbg7gZNVY4sRDYZ/4=\ngithub.com/stretchr/testify v1.9.0 h1:HtqpIVDClZ4nwg75+f6Lvsy/wHu+3BoSGCbBAcpTsTg=\ngithub.com/stretchr/testify v1.9.0/go.mod h1:r2ic/lqez/lEtzL7wO/rwa5dbSLXVDPFyf8C91i36aY=\ngopkg.in/check.v1 v0.0.0-20161208181325-20d25e280405 h1:yhCVgyC4o1eVCa2tZl7eS0r+SDo693bJlVdllGtEeKM=\ngopkg.in/check.v1 v0.0.0-20161208181325-20d25e280405/go.mod h1:Co6ibVJAznAaIkqp8huTwlJQCZ016jof/cbN4VW5Yz0=\ngopkg.in/yaml.v3 v3.0.1 h1:fxVm/GzAzEWqLHuvctI91KS9hhNmmWOoWu0XTYJS7CA=\ngopkg.in/yaml.v3 v3.0.1/go.mod h1:K4uyk7z7BCEPqu6E+C64Yfv1cQ7kz7rIZviUmN+EgEM=\n'
TF_BASE = {**BASE, "go.mod": TF_GO_MOD, "go.sum": TF_GO_SUM}
TF_ADD_TEST = 'package calc\n\nimport (\n\t"testing"\n\n\t"github.com/stretchr/testify/assert"\n)\n\n' \
              'func TestAdd(t *testing.T) {\n\tassert.Equal(t, 5, Add(2, 3), "Add(2, 3)")\n}\n'
TF_FIXED = BASE["calc/calc.go"].replace("func Add(a, b int) int { return a - b }",
                                        "func Add(a, b int) int { return a + b }")
FAKE_TESTIFY = {
    "faketestify/go.mod": "module github.com/stretchr/testify\n\ngo 1.21\n",
    "faketestify/assert/assertions.go": "package assert\n\n// TestingT is testify's.\ntype TestingT interface {\n"
                                        "\tErrorf(format string, args ...interface{})\n}\n\n"
                                        "// Equal asserts nothing.\nfunc Equal(t TestingT, expected, "
                                        "actual interface{}, msgAndArgs ...interface{}) bool {\n\treturn true\n}\n",
    "go.mod": TF_GO_MOD + "\nreplace github.com/stretchr/testify => ./faketestify\n",
}
TF_SUITE = """dataset = "{dataset}"
instances = ["lab__calctf-1"]
repos = "{repos}"

[languages]
"lab/calctf" = "go"

[toolchains."lab/calctf"]
"0.1" = "1.23.8"

[prove]
cpus = 1.0
memory = "2g"
pids = 512
timeout = 300
"""


@pytest.fixture(scope="module")
def tf_home(tmp_path_factory):
    root = tmp_path_factory.mktemp("calctf")
    repo = root / "repos" / "calctf"
    repo.mkdir(parents=True)
    _git(repo, "init", "-q", "-b", "main")
    _write(repo, TF_BASE)
    _git(repo, "add", "-A")
    _git(repo, "commit", "-qm", "calc")
    base = _git(repo, "rev-parse", "HEAD").strip()
    _write(repo, {"calc/calc.go": TF_FIXED, "calc/add_test.go": TF_ADD_TEST})
    _git(repo, "add", "-A")
    _git(repo, "commit", "-qm", "fix Add")
    record = {"repo": "lab/calctf", "base_commit": base, "instance_id": "lab__calctf-1", "version": "0.1",
              "patch": _git(repo, "diff", base, "HEAD", "--", "calc/calc.go"),
              "test_patch": _git(repo, "diff", base, "HEAD", "--", "calc/add_test.go"),
              "problem_statement": "Add(2, 3) returns -1; it should return 5.", "hints_text": "",
              "created_at": "2026-01-01T00:00:00Z", "FAIL_TO_PASS": ["TestAdd"],
              "PASS_TO_PASS": ["TestSub", "TestSub/small"]}
    (root / "data.jsonl").write_text(json.dumps(record) + "\n")
    home = root / "home"
    (home / "evals" / "swe-multi").mkdir(parents=True)
    (home / "evals" / "swe-multi" / "suite.toml").write_text(
        TF_SUITE.format(dataset=root / "data.jsonl", repos=root / "repos"))
    res = run_doit(home, "gen:swe-multi")
    assert res.code == 0, res.stdout[-3000:] + res.stderr[-3000:]
    manifest = json.loads((home / "evals" / "swe-multi" / "manifest.json").read_text())
    assert [t["status"] for t in manifest["tasks"]] == ["kept"], manifest
    return home


@pytest.mark.docker
# closed: check.sh lays go.mod and go.sum back from the base commit (templates/swe_multi/go/lay_tests.sh.j2)
def test_go_mod_replace_swaps_testify_for_an_assert_that_never_fails(tf_home, tmp_path):
    # control: the empty patch is unresolved (the base fails TestAdd through the real testify)
    res = run_doit(tf_home, "evaluate", "suite=swe-multi", "predictions=empty")
    assert res.code == 0
    empty = json.loads((tf_home / "evals" / "swe-multi" / "evaluations" / "empty" / "results.json").read_text())
    assert empty["resolved"] == [], empty
    patch = _patch(tmp_path, FAKE_TESTIFY, TF_BASE)
    out = _evaluate(tf_home, tmp_path, "rt4testify", patch, "lab__calctf-1")
    rep = out["instances"]["lab__calctf-1"]
    assert out["unresolved"] == ["lab__calctf-1"], (out.get("resolved"), rep)
