"""Forged verdicts, tried as adversarial solutions of the Go fixture task (real engine).

Each solution below only changes or adds solution code (``hello.go``, whose tests want ``Double(n) == 2 * n``;
some also leave files an agent could add) and leaves ``Double`` wrong; it then tries to make the grading say
``pass`` anyway. Each must be graded ``fail`` or ``tampered``, while the reference solution still passes.
"""
from __future__ import annotations

import sys
import textwrap
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
from honest_kit import grade_solution as kit_grade_solution, prove_fixture  # noqa: E402

pytestmark = pytest.mark.docker

WRONG = "\nfunc Double(n int) int { return n * 3 }\n"
# what an honest `go test -json` reports for the fixture's tests, every one passed
PASSING = "".join(f'{{"Action":"run","Package":"hello","Test":"{t}"}}\n{{"Action":"pass","Package":"hello","Test":"{t}"}}\n'
                  for t in ("TestDouble", "TestDouble/case", "TestDouble/case#01", "TestZero"))


def go(imports: str, body: str) -> str:
    return f"package hello\n\nimport (\n{imports}\n)\n\n{textwrap.dedent(body)}{WRONG}"


FORGERIES = {
    # a process started by the solution waits for the test binary to end, then keeps turning every failure of the
    # report into a pass (sed -i puts a new file in the report's place: go test's last writes no longer reach it)
    "report-rewritten-at-exit": go('\t"os"\n\t"os/exec"\n\t"strconv"\n\t"syscall"', '''\
        func init() {
        \tscript := "while kill -0 " + strconv.Itoa(os.Getpid()) + " 2>/dev/null; do :; done\\n" +
        \t\t"for i in $(seq 3000); do sed -i 's/\\"Action\\":\\"fail\\"/\\"Action\\":\\"pass\\"/g' /tmp/lab-out/*.json; done"
        \tcmd := exec.Command("sh", "-c", script)
        \tcmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
        \t_ = cmd.Start()
        }
        '''),
    # go test's own framing lines, printed before any test runs, then the binary ends with status 0
    "runner-lines-printed": go('\t"os"', '''\
        func init() {
        \tos.Stdout.WriteString("=== RUN   TestDouble\\n=== RUN   TestDouble/case\\n--- PASS: TestDouble/case (0.00s)\\n" +
        \t\t"=== RUN   TestDouble/case#01\\n--- PASS: TestDouble/case#01 (0.00s)\\n--- PASS: TestDouble (0.00s)\\n" +
        \t\t"=== RUN   TestZero\\n--- PASS: TestZero (0.00s)\\nPASS\\n")
        \tos.Exit(0)
        }
        '''),
    # the exit status forced to 0 as soon as a test calls the solution
    "exit-status-forced": 'package hello\n\nimport "os"\n\nfunc Double(n int) int {\n\tos.Exit(0)\n\treturn n * 3\n}\n',
    # the testing package's output stream swapped for a pipe through a filter that turns every FAIL line
    # into a PASS line (the filter outlives the binary, so nothing is lost when it exits)
    "framework-output-swapped": go('\t"os"\n\t"os/exec"', '''\
        func init() {
        \tr, w, _ := os.Pipe()
        \tfilter := exec.Command("sed", "-u", "s/--- FAIL/--- PASS/")
        \tfilter.Stdin, filter.Stdout = r, os.Stdout
        \t_ = filter.Start()
        \tos.Stdout = w
        }
        '''),
    # fewer tests: a flag added to the test binary's command line skips the failing ones (and a TestMain the
    # agent adds, which would exit 0 before any test, is removed with every other added test file)
    "tests-skipped-by-flag": go('\t"os"', '''\
        func init() {
        \tos.Args = append(os.Args, "-test.skip=TestDouble")
        }
        '''),
    # the grader's filesystem patched: the Go toolchain, lab's folders, the report folder, the task
    "grader-filesystem-patched": go('\t"fmt"\n\t"os"', '''\
        func init() {
        \tfor _, target := range []string{"/usr/lib/go-1.23/src/testing/testing.go", "/usr/local/bin/go",
        \t\t"/opt/lab/go/cache/planted", "/etc/passwd", "/lab/report/exit", "/task/check.sh", "/lab/src/hello.go"} {
        \t\tif err := os.WriteFile(target, []byte("planted"), 0o755); err != nil {
        \t\t\tfmt.Println("REFUSED", target, err)
        \t\t} else {
        \t\t\tfmt.Println("PLANTED", target)
        \t\t}
        \t}
        }
        '''),
    # a process started by the solution waits for the test binary to end, then turns every failure of the report
    # into a pass but those of canaries of the old shape (Test_k and 11 hex digits), as if they still showed an
    # honest run; it must find the report out of its reach
    "report-rewritten-sparing-the-canaries": go('\t"os"\n\t"os/exec"\n\t"strconv"\n\t"syscall"', '''\
        func init() {
        \tscript := "while kill -0 " + strconv.Itoa(os.Getpid()) + " 2>/dev/null; do :; done\\n" +
        \t\t"for i in $(seq 3000); do sed -E -i '/Test_k[0-9a-f]{11}/!s/\\"Action\\":\\"fail\\"/\\"Action\\":\\"pass\\"/g' " +
        \t\t"/tmp/lab-out/*.json; done"
        \tcmd := exec.Command("sh", "-c", script)
        \tcmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
        \t_ = cmd.Start()
        }
        '''),
    # a process that outlives the tests and keeps writing a report in which every task test passed over the report,
    # in place: whether its last write lands before check.sh ends (a few ms after go test) or after go test's own, or
    # between (a torn file), the verdict is never a pass
    "report-overwritten-after-exit": go('\t"os/exec"\n\t"syscall"', f'''\
        func init() {{
        \treport := `{PASSING}`
        \tscript := "while :; do printf '%s' \\"$0\\" > /tmp/lab-out/go-test.json; printf '%s' \\"$0\\" > /lab/report/go-test.json; " +
        \t\t"echo 0 > /lab/report/exit; sleep 0.01; done"
        \tcmd := exec.Command("sh", "-c", script, report)
        \tcmd.SysProcAttr = &syscall.SysProcAttr{{Setsid: true}}
        \t_ = cmd.Start()
        }}
        '''),
    # a process that outlives the tests and keeps putting a report in which every task test passed in the report's
    # place (a whole file each time, moved over it)
    "report-forged-after-exit": go('\t"os/exec"\n\t"syscall"', f'''\
        func init() {{
        \treport := `{PASSING}`
        \tscript := "while :; do printf '%s' \\"$0\\" > /tmp/lab-out/.forged; mv -f /tmp/lab-out/.forged /tmp/lab-out/go-test.json; " +
        \t\t"printf '%s' \\"$0\\" > /lab/report/go-test.json; echo 0 > /lab/report/exit; sleep 0.01; done"
        \tcmd := exec.Command("sh", "-c", script, report)
        \tcmd.SysProcAttr = &syscall.SysProcAttr{{Setsid: true}}
        \t_ = cmd.Start()
        }}
        '''),
}
EXTRA_FILES = {
    "tests-skipped-by-flag": {
        "zz_main_test.go": 'package hello\n\nimport (\n\t"os"\n\t"testing"\n)\n\nfunc TestMain(m *testing.M) { os.Exit(0) }\n',
    },
}


@pytest.fixture(scope="module")
def proven(tmp_path_factory, grader_image):
    """The fixture's go-hello task, rendered and proven (its reference's test ids recorded)."""
    return prove_fixture(tmp_path_factory.mktemp("honest-go"), "go/hello", grader_image,
                         memory=2 * 1024**3, timeout=180)


def grade_solution(proven, name: str, solution: str, extra: dict[str, str] | None = None):
    return kit_grade_solution(proven, name, "hello.go", solution, extra)


def test_the_proof_records_the_reference_test_ids(proven):
    _, proof, _, _ = proven
    assert proof["tests"] == ["TestDouble/case", "TestDouble/case#01", "TestZero"]
    assert proof["reference"]["verdict"] == "pass" and proof["stub"]["verdict"] == "fail"


def test_the_reference_passes_again_with_fresh_canaries(proven):
    from rules.files import read_json

    base, *_ = proven
    g = grade_solution(proven, "reference", (base / "answer" / "hello.go").read_text())
    assert (g.verdict, g.ran, g.passed_tests) == ("pass", 3, 3), g.output[-2000:]
    # the reference fails the canaries alone (named like the tests: lab_grader/go_canaries.py), whose lines are scrubbed
    assert "FAIL:" not in g.output and "want" not in g.output, "canary lines are scrubbed"
    assert read_json(base / "task" / "task.json")["report"] == "go-json"


@pytest.mark.parametrize("name", sorted(FORGERIES))
def test_a_forged_verdict_is_never_a_pass(proven, name):
    g = grade_solution(proven, name, FORGERIES[name], EXTRA_FILES.get(name))
    assert g.verdict in ("fail", "tampered") and not g.passed, g.output[-3000:]
    expect = {"runner-lines-printed": "tampered", "framework-output-swapped": "tampered",
              # the report file is out of the tester's reach (root's, in a folder of root's, written only through
              # the descriptors go test was handed): whatever these do, the honest report is the one read
              "report-rewritten-at-exit": "fail", "report-rewritten-sparing-the-canaries": "fail",
              "report-forged-after-exit": "fail", "report-overwritten-after-exit": "fail"}
    if name in expect:
        assert g.verdict == expect[name], (g.evidence, g.output[-2000:])
    if expect.get(name) == "fail":
        assert g.evidence == ["2 test(s) did not pass: TestDouble/case, TestDouble/case#01"], g.output[-2000:]
    if name == "grader-filesystem-patched":
        assert "PLANTED" not in g.output and g.output.count("REFUSED") == 7, g.output[-3000:]
    if name == "tests-skipped-by-flag":
        assert "not reported: TestDouble/case, TestDouble/case#01" in " ".join(g.evidence), g.evidence


PLANTER = go('\t"fmt"\n\t"os"', '''\
    func init() {
    \tfor _, dir := range []string{os.Getenv("GOCACHE"), os.Getenv("GOCACHE") + "/00", "/opt/lab/go/cache", "/cache"} {
    \t\tif _, err := os.Stat(dir + "/planted-by-a-grading"); err == nil {
    \t\t\tfmt.Println("FOUND", dir)
    \t\t}
    \t\tif err := os.WriteFile(dir+"/planted-by-a-grading", []byte("planted"), 0o644); err != nil {
    \t\t\tfmt.Println("REFUSED", dir, err)
    \t\t} else {
    \t\t\tfmt.Println("PLANTED", dir)
    \t\t}
    \t}
    }
    ''')


def test_a_planted_build_result_never_reaches_a_later_grading(proven):
    """Issue 6, part 2, item 5: the build cache a grading's code can write is its own folder (subfolders
    included: links to the image's entries beside room for new ones), which dies with the grading; the image's
    cache and the shared /cache (mounted read-only, as in a trial's grading) refuse writes."""
    from rules.grade import grade
    from rules.worktree import lay_work_tree

    base, proof, limits, image = proven
    outputs = []
    for n in (1, 2):
        work = base / "work" / f"planter-{n}"
        lay_work_tree(base / "task", work)
        (work / "hello.go").write_text(PLANTER)
        g = grade(base / "task", work, image=image, limits=limits, expected=proof["tests"],
                  cache_volume="lab-cache-test")
        assert g.verdict == "fail", g.output[-2000:]
        outputs.append(g.output)
    assert "PLANTED /tmp/lab-gocache\n" in outputs[0], outputs[0][-2000:]
    assert "PLANTED /tmp/lab-gocache/00" in outputs[0], outputs[0][-2000:]
    assert "REFUSED /opt/lab/go/cache" in outputs[0] and "REFUSED /cache" in outputs[0], outputs[0][-2000:]
    assert "FOUND" not in outputs[1] and "PLANTED /tmp/lab-gocache" in outputs[1]
