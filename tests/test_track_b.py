"""Rendering facts of the Go, JavaScript and Python tracks (pure: no Docker).

Each test writes a tiny exercise of its own, renders it, and checks one thing its check.sh must keep doing:
which files it removes and lays back, how it enables skipped tests and where the runner's report goes; and how
the host reads those reports (rules/reports.py) into test ids that rules/grade.py's decide weighs.
"""
from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path


from rules import reports
from rules.tiers.aider import exercises as aider
from rules.grade import decide


def _exercise(root: Path, track: str, slug: str, files: dict[str, str], config: dict) -> aider.Exercise:
    base = root / track / "exercises" / "practice" / slug
    for rel, text in {**files, ".meta/config.json": json.dumps({"files": config}),
                      ".docs/instructions.md": "# Instructions\n\nDo it.\n"}.items():
        (base / rel).parent.mkdir(parents=True, exist_ok=True)
        (base / rel).write_text(text)
    return aider.Exercise(track, slug, base)


def _go(root: Path) -> aider.Rendered:
    return aider.render(_exercise(root, "go", "leap", {
        "go.mod": "module leap\n\ngo 1.18\n",
        "leap.go": "package leap\n",
        "leap_test.go": "package leap\n",
        "cases_test.go": "package leap\n",
        ".meta/example.go": "package leap\n\nfunc IsLeap(y int) bool { return y%4 == 0 }\n",
    }, {"solution": ["leap.go"], "test": ["leap_test.go"], "example": [".meta/example.go"],
        "editor": ["cases_test.go"], "invalidator": ["go.mod"]}))


def _js(root: Path) -> aider.Rendered:
    return aider.render(_exercise(root, "javascript", "leap", {
        "package.json": "{}\n",
        "babel.config.js": "module.exports = { presets: ['@exercism/babel-preset-javascript'] };\n",
        "leap.js": "export const isLeap = () => {};\n",
        "leap.spec.js": "describe('leap', () => {\n  test('a', () => {});\n  xtest('b', () => {});\n"
                        "  xit('c', () => {});\n  xdescribe('d', () => {});\n  test.skip('slow', () => {});\n"
                        "  maxtest(1);\n});\n",
        ".meta/proof.ci.js": "export const isLeap = (y) => y % 4 === 0;\n",
    }, {"solution": ["leap.js"], "test": ["leap.spec.js"], "example": [".meta/proof.ci.js"]}))


def _python(root: Path) -> aider.Rendered:
    return aider.render(_exercise(root, "python", "paasio", {
        "paasio.py": "class MeteredFile:\n    pass\n",
        "paasio_test.py": "import unittest\n",
        "test_utils.py": "ZEN = b''\n",
        ".meta/example.py": "class MeteredFile:\n    size = 1\n",
    }, {"solution": ["paasio.py"], "test": ["paasio_test.py", "test_utils.py"], "example": [".meta/example.py"]}))


def _check(rendered: aider.Rendered) -> str:
    return rendered.task_files["check.sh"][0].decode()


# ---- Go ----

def test_go_reference_maps_onto_the_solution_not_the_editor_test_file(tmp_path):
    assert set(_go(tmp_path).answer_files) == {"leap.go"}


def test_go_check_removes_added_test_files_before_laying_back_the_tasks_own(tmp_path):
    check = _check(_go(tmp_path))
    removal = check.index("rm -rf -- *_test.go")
    assert removal < check.index('"$task/workspace/"leap_test.go') and removal < check.index("cases_test.go")
    assert "rm -rf vendor go.work" in check
    # the block removes every name ending in _test.go at the top (hidden ones, odd names and folders too: the canary
    # writer met a folder cases_test.go in place of a test file, red team 3), and nothing else
    block = check[check.index("# 1. Lay back"):check.index("rm -rf vendor go.work")]
    tree = tmp_path / "tree"
    (tree / "sub").mkdir(parents=True)
    for name in ("leap_test.go", ".hidden_test.go", "-n_test.go", "x y_test.go", "leap.go", "sub/deep_test.go"):
        (tree / name).write_text("package leap\n")
    (tree / "dir_test.go").mkdir()
    subprocess.run(["bash", "-c", block], cwd=tree, check=False)
    left = sorted(str(p.relative_to(tree)) for p in tree.rglob("*"))
    assert left == ["leap.go", "sub", "sub/deep_test.go"]


def test_go_check_runs_offline_as_the_tester_with_a_private_build_cache(tmp_path):
    check = _check(_go(tmp_path))
    assert "GOPROXY=off" in check and "GOTOOLCHAIN=local" in check and "GOWORK=off" in check
    assert "GOCACHE=/tmp/lab-gocache" in check and 'as_tester cp -Rs /opt/lab/go/cache "$GOCACHE"' in check
    # the report: opened by root in $out made root's, so only go test writes it (through the descriptor it gets)
    assert re.search(r'chown 0:0 "\$out" && chmod 755 "\$out" \|\| finish 3\nas_tester timeout --signal=KILL \d+ '
                     r'go test -count=1 -json \. > "\$out/go-test.json" 2> /tmp/lab-go-test.err\n', check)


def test_go_canaries_are_written_into_the_tasks_test_files_and_named_in_the_manifest(tmp_path):
    check = _check(_go(tmp_path))
    block = check[check.index("# 3. The canaries"):check.index("\nchown -R")]
    call = 'python3 -I -m lab_grader.go_canaries cases_test.go leap_test.go "$canary_fail" "$canary_pass" "$manifest"'
    assert call in block
    (tmp_path / "cases_test.go").write_text("// a comment\npackage leap_test\n\nvar cases = []int{1}\n")
    tests = "func TestLeapYear(t *testing.T) {}\n\nfunc TestCenturyYear(t *testing.T) {}\n"
    (tmp_path / "leap_test.go").write_text('package leap_test\n\nimport "testing"\n\n' + tests)
    grader = Path(__file__).resolve().parents[1] / "templates" / "images" / "grader"
    # the image's python3 -I -m lab_grader...: here the module from the source tree, with the same arguments
    shim = ("python3() { shift 3; PYTHONDONTWRITEBYTECODE=1 command python3 -c 'import sys; sys.path.insert(0, "
            f'"{grader}"); from lab_grader import go_canaries as g; g.main(sys.argv[1:])\' "$@"; }}\n')
    env = {"canary_fail": "k0123456789a", "canary_pass": "kba987654321", "manifest": str(tmp_path / "m.json")}
    script = shim + "".join(f"{k}={v}\n" for k, v in env.items()) + block
    subprocess.run(["bash", "-c", script], cwd=tmp_path, check=True)
    manifest = json.loads((tmp_path / "m.json").read_text())
    assert manifest["match"] == "id" and len(manifest["fail"]) == 1 and len(manifest["pass"]) == 1
    tests = (tmp_path / "leap_test.go").read_text()
    assert tests.startswith("package leap_test\n")
    for name in manifest["fail"] + manifest["pass"]:
        # the tests' words, and a few of the writer's own when they are this few (lab_grader/go_canaries.py)
        assert re.fullmatch(r"Test(Leap|Century|Year|Value|Case|Result|Input|Empty|Single|Several)+", name)
        assert f"func {name}(t *testing.T) {{" in tests
    assert "k0123456789a" not in tests and "kba987654321" not in tests
    assert sorted(p.name for p in tmp_path.glob("*_test.go")) == ["cases_test.go", "leap_test.go"]


def _go_events(*events: tuple) -> str:
    return "".join(json.dumps({"Action": a, "Package": "leap", **({"Test": t} if t else {})}) + "\n"
                   for a, t in events)


def _go_parse(tmp_path: Path, report: str) -> reports.Parsed:
    """Read ``report`` (go test -json lines) as the host does."""
    (tmp_path / "go-test.json").write_text(report)
    return reports.parse_go_json(tmp_path, {"test_files": ["leap_test.go"]})


def test_go_leaf_subtests_are_the_test_ids(tmp_path):
    report = _go_events(("start", None), ("run", "TestLeap"), ("run", "TestLeap/a"), ("pass", "TestLeap/a"),
                        ("run", "TestLeap/b"), ("pass", "TestLeap/b"), ("pass", "TestLeap"),
                        ("run", "ExampleLeap"), ("pass", "ExampleLeap"), ("pass", None))
    assert _go_parse(tmp_path, report).tests == {"TestLeap/a": "passed", "TestLeap/b": "passed",
                                                 "ExampleLeap": "passed"}


def test_go_a_skip_or_a_test_without_verdict_is_not_a_pass(tmp_path):
    report = _go_events(("run", "TestA"), ("skip", "TestA"), ("run", "TestB"), ("run", "TestC"),
                        ("pass", "TestC"), ("fail", None))
    assert _go_parse(tmp_path, report).tests == {"TestA": "skipped", "TestB": "failed", "TestC": "passed"}
    verdict, evidence, ran, passed = decide(_go_parse(tmp_path, report).tests, ["TestA", "TestB", "TestC"], None, 1)
    assert (verdict, ran, passed) == ("fail", 3, 1) and "TestA, TestB" in evidence[-1]


def test_go_a_test_the_solution_reports_does_not_stand_in_for_a_missing_one(tmp_path):
    fake = _go_events(("run", "TestFake"), ("pass", "TestFake"), ("pass", None))
    verdict, evidence, _, _ = decide(_go_parse(tmp_path, fake).tests, ["TestLeap"], None, 0)
    assert verdict == "fail" and evidence == ["1 expected test(s) not reported: TestLeap"]


def test_go_build_failure_reports_no_tests(tmp_path):
    parsed = _go_parse(tmp_path, _go_events(("start", None), ("output", None), ("fail", None)))
    assert parsed.tests == {} and "before any test ran" in parsed.notes[0]
    assert decide(parsed.tests, None, None, 1)[0] == "fail"


def test_go_empty_test_file_reports_no_tests(tmp_path):
    assert _go_parse(tmp_path, _go_events(("start", None), ("pass", None))).tests == {}
    assert decide({}, None, None, 0)[:2] == ("fail", ["no tests ran"])


# ---- JavaScript ----

def _enable(check: str, tmp_path: Path) -> str:
    """Run check.sh's enabling lines (the sed) on the fixture's spec; returns the spec as they leave it."""
    spec = tmp_path / "work" / "leap.spec.js"
    spec.parent.mkdir()
    spec.write_text(_js(tmp_path / "again").task_files["workspace/leap.spec.js"][0].decode())
    block = check[check.index("# 2. Enable"):check.index("# 3. The canaries")]
    subprocess.run(["bash", "-c", block], cwd=spec.parent, capture_output=True, text=True, check=True)
    return spec.read_text()


def test_js_enables_xtest_xit_xdescribe_and_keeps_deliberate_skips(tmp_path):
    text = _enable(_check(_js(tmp_path)), tmp_path)
    assert not re.search(r"(^|\s)x(test|it|describe)\(", text, re.M)
    assert "  test('b'" in text and "  it('c'" in text and "  describe('d'" in text
    assert "test.skip('slow'" in text and "maxtest(1)" in text


def test_js_check_ignores_the_work_trees_jest_and_transform_settings(tmp_path):
    check = _check(_js(tmp_path))
    assert "rm -rf node_modules __mocks__ __tests__" in check
    assert "-name '.babelrc'" in check and "-name '.swcrc'" in check and "-name 'jest.config.*'" in check
    assert '"/opt/lab/js/node_modules/@swc/jest", {"swcrc": false,' in check and "babel-jest" not in check
    assert "--runTestsByPath leap.spec.js" in check
    assert '--outputFile="$out/jest.json"' in check and "as_tester timeout" in check


def _jest(*results: tuple[str, str], load_error: str = "") -> str:
    return json.dumps({"numPassedTests": 99, "numFailedTests": 0, "success": True, "testResults": [
        {"name": "/work/leap.spec.js", "status": "failed" if load_error else "passed", "message": load_error,
         "assertionResults": [{"fullName": f"leap {t}", "title": t, "status": s} for t, s in results]}]})


def _jest_parse(tmp_path: Path, report: str) -> reports.Parsed:
    (tmp_path / "jest.json").write_text(report)
    return reports.parse_jest_json(tmp_path, {"test_files": ["leap.spec.js"]})


def test_js_deliberate_skip_is_not_expected_but_a_further_skip_fails(tmp_path):
    reference = _jest_parse(tmp_path, _jest(("a", "passed"), ("b", "passed"), ("slow", "pending"))).tests
    expected = sorted(i for i, s in reference.items() if s == "passed")
    assert expected == ["leap.spec.js › leap a", "leap.spec.js › leap b"]
    assert decide(reference, expected, None, 0)[0] == "pass"
    skipped_more = _jest_parse(tmp_path, _jest(("a", "passed"), ("b", "pending"), ("slow", "pending"))).tests
    assert decide(skipped_more, expected, None, 0)[:2] == ("fail", ["1 test(s) did not pass: leap.spec.js › leap b"])


def test_js_suite_that_fails_to_load_reports_no_tests(tmp_path):
    parsed = _jest_parse(tmp_path, _jest(load_error="  ● Test suite failed to run\n\n    SyntaxError: nope\n"))
    assert parsed.tests == {} and parsed.notes == ["leap.spec.js: test suite failed to run (Test suite failed to run)"]
    parsed = _jest_parse(tmp_path, "not json")
    assert parsed.tests == {} and parsed.notes == ["jest.json is not valid JSON"]


# ---- Python ----

def test_python_runs_every_listed_test_file_isolated_from_work_tree_settings(tmp_path):
    check = _check(_python(tmp_path))
    assert "paasio_test.py test_utils.py" in check
    assert "python3 -I -B -m pytest -c /dev/null" in check
    removal = check.index("-name 'conftest.py'")
    assert removal < check.index('"$task/workspace/"test_utils.py')
    assert "__pycache__" in check


def test_python_reference_maps_onto_the_solution(tmp_path):
    assert set(_python(tmp_path).answer_files) == {"paasio.py"}
