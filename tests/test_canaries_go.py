"""The Go track's canaries (templates/images/grader/lab_grader/go_canaries.py): named and placed like the
exercise's own tests, copies of its case table entries with the expected value changed that an honest solution
fails, only where the copy's comparison surely runs; any file it cannot read leaves the plain canaries. When this
machine has a ``go``, the rewritten files are run with ``go test -json`` against fixture solutions made here."""
from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "templates" / "images" / "grader"))
from lab_grader import go_canaries as gc  # noqa: E402

from rules.grade import Canaries, decide  # noqa: E402

FAIL, OK = "k0123456789a", "kfedcba98765"

CASES = textwrap.dedent('''\
    package change

    // generated
    var testCases = []struct {
    \tdescription string
    \ttarget      int
    \tcoins       []int
    \texpected    []int
    }{
    \t{
    \t\tdescription: "single coin change",
    \t\ttarget:      25,
    \t\tcoins:       []int{1, 5, 10, 25},
    \t\texpected:    []int{25},
    \t},
    \t{
    \t\tdescription: "multiple coin change",
    \t\ttarget:      15,
    \t\tcoins:       []int{1, 5, 10, 25},
    \t\texpected:    []int{5, 10},
    \t},
    \t{
    \t\tdescription: "change with lilliputian coins",
    \t\ttarget:      23,
    \t\tcoins:       []int{1, 4, 15, 20, 50},
    \t\texpected:    []int{4, 4, 15},
    \t},
    }

    var countCases = []struct {
    \tdescription string
    \ttarget      int
    \texpected    int
    }{
    \t{description: "count of zero change", target: 0, expected: 0},
    \t{description: "count of large change", target: 99, expected: 9},
    }
    ''')
TESTS = textwrap.dedent('''\
    package change

    import (
    \t"reflect"
    \t"testing"
    )

    func TestChange(t *testing.T) {
    \tfor _, tc := range testCases {
    \t\tt.Run(tc.description, func(t *testing.T) {
    \t\t\tactual := Change(tc.coins, tc.target)
    \t\t\tif !reflect.DeepEqual(actual, tc.expected) {
    \t\t\t\tt.Fatalf("Change(%v, %d) = %v, want %v", tc.coins, tc.target, actual, tc.expected)
    \t\t\t}
    \t\t})
    \t}
    }

    func TestCoinCount(t *testing.T) {
    \tfor _, tc := range countCases {
    \t\tt.Run(tc.description, func(t *testing.T) {
    \t\t\tif got := Count(tc.target); got != tc.expected {
    \t\t\t\tt.Errorf("Count(%d) = %d, want %d", tc.target, got, tc.expected)
    \t\t\t}
    \t\t})
    \t}
    }

    func BenchmarkChange(b *testing.B) {
    \tfor i := 0; i < b.N; i++ {
    \t\tfor _, tc := range testCases {
    \t\t\tChange(tc.coins, tc.target)
    \t\t}
    \t}
    }
    ''')
RIGHT = textwrap.dedent('''\
    package change

    func Change(coins []int, target int) []int {
    \tbest := map[int][]int{0: {}}
    \tfor v := 1; v <= target; v++ {
    \t\tfor _, c := range coins {
    \t\t\tif prev, ok := best[v-c]; ok && c <= v && (best[v] == nil || len(prev)+1 < len(best[v])) {
    \t\t\t\tbest[v] = append(append([]int{}, prev...), c)
    \t\t\t}
    \t\t}
    \t}
    \treturn sortInts(best[target])
    }

    func sortInts(a []int) []int {
    \tfor i := range a {
    \t\tfor j := i + 1; j < len(a); j++ {
    \t\t\tif a[j] < a[i] {
    \t\t\t\ta[i], a[j] = a[j], a[i]
    \t\t\t}
    \t\t}
    \t}
    \treturn a
    }

    func Count(target int) int {
    \tif target == 0 {
    \t\treturn 0
    \t}
    \treturn 9
    }
    ''')


def written(sources=(CASES, TESTS), fail=FAIL, ok=OK):
    return gc.with_canaries(list(sources), fail, ok)


def test_canaries_are_named_from_the_tests_words_and_placed_among_them():
    (cases, tests), manifest, own = written()
    assert own is None and manifest["match"] == "id"
    assert len(manifest["fail"]) == 3 and len(manifest["pass"]) == 1 and len(manifest["originals"]) == 2
    words = {w.lower() for w in re.findall(r"[A-Za-z][a-z0-9]*", CASES + TESTS)} | set(gc.FALLBACK_WORDS)
    for name in manifest["fail"][:1] + manifest["pass"]:  # the plain canaries: test functions of the test file
        assert re.fullmatch(r"Test[A-Z]\w+", name) and name not in CASES + TESTS
        assert all(w.lower() in words for w in re.findall(r"[A-Z][a-z0-9]*", name[4:]))
        assert f"func {name}(t *testing.T) {{" in tests
    for mutant, original in manifest["originals"].items():  # copies in the table the original is in
        test, sub = mutant.split("/")
        assert original.split("/")[0] == test and test in ("TestChange", "TestCoinCount")
        description = sub.replace("_", " ")
        assert f'"{description}"' in cases and f'"{description}"' not in CASES
        assert f'"{original.split("/")[1].replace("_", " ")}"' in CASES
        assert all(w in words for w in description.lower().split())
    for text in (cases, tests):
        assert FAIL not in text and OK not in text
        assert gc.tokens(text)  # still Go tokens


def test_the_draw_follows_its_seed():
    assert written() == written()
    assert written()[1] != written(fail="k00000000000")[1]


def test_only_comparisons_that_surely_run_are_copied():
    odd_tests = textwrap.dedent('''\
        package change

        import "testing"

        func TestChange(t *testing.T) {
        \tfor _, tc := range testCases {
        \t\tt.Run(tc.description, func(t *testing.T) {
        \t\t\tif tc.target > 50 {
        \t\t\t\treturn
        \t\t\t}
        \t\t\tif got := Change(tc.coins, tc.target); len(got) != len(tc.expected) {
        \t\t\t\tt.Fatal("wrong")
        \t\t\t}
        \t\t})
        \t}
        }

        func TestCoinCount(t *testing.T) {
        \tfor _, tc := range countCases {
        \t\tif got := Count(tc.target); got != tc.expected {
        \t\t\tt.Errorf("Count(%d) = %d, want %d", tc.target, got, tc.expected)
        \t\t}
        \t}
        }
        ''')
    # an early return, a comparison of a length, a loop without subtests: nothing copied
    assert written((CASES, odd_tests))[1]["originals"] == {}
    branch = TESTS.replace("\t\t\tif got := Count(tc.target); got != tc.expected {",
                           "\t\t\tif tc.target > 0 {\n\t\t\tif got := Count(tc.target); got != tc.expected {") \
        .replace("\t\t\t\tt.Errorf(\"Count(%d) = %d, want %d\", tc.target, got, tc.expected)\n\t\t\t}",
                 "\t\t\t\tt.Errorf(\"Count(%d) = %d, want %d\", tc.target, got, tc.expected)\n\t\t\t}\n\t\t\t}")
    assert "if tc.target > 0" in branch
    only_change = {o.split("/")[0] for o in written((CASES, branch))[1]["originals"].values()}
    assert only_change <= {"TestChange"}
    # the table read by a second test: never copied (the copy would fail that test too)
    shared = TESTS + "\nfunc TestCountAgain(t *testing.T) {\n\t_ = countCases\n}\n"
    assert all(o.startswith("TestChange/") for o in written((CASES, shared))[1]["originals"].values())
    # a description that is not plain ASCII, or twice in the table: not a test this can name
    assert gc.subtest_loop is not None
    dup = CASES.replace('"count of large change"', '"count of zero change"').replace(
        '"single coin change"', '"single coin\\tchange"')
    originals = written((dup, TESTS))[1]["originals"].values()
    assert not any("count_of_zero" in o or "single" in o for o in originals)


@pytest.mark.parametrize("odd", ["package change\n\nvar x = `unclosed\n", "\x00\x01 not go at all {{{",
                                 "package change\n\nfunc TestX(t *testing.T) {\n"])
def test_an_odd_file_falls_back_to_the_plain_canaries(odd):
    out, manifest, own = written((odd, TESTS.replace("countCases", "testCases")))
    assert manifest["originals"] == {} or all(o.startswith("Test") for o in manifest["originals"].values())
    assert len(manifest["pass"]) == 1 and manifest["fail"]
    assert out[0] == odd
    out, manifest, own = written((odd,))
    assert manifest["originals"] == {} and own is not None and f"func {manifest['fail'][0]}(t *testing.T)" in own
    assert own.startswith("package ")


def test_a_file_with_a_build_constraint_takes_no_canary():
    bonus = "//go:build bonus\n\n" + TESTS
    out, manifest, own = written((CASES, bonus))
    assert out[1] == bonus and own is not None and manifest["originals"] == {}


def test_main_writes_the_files_and_a_manifest_only_its_owner_reads(tmp_path):
    (tmp_path / "cases_test.go").write_text(CASES)
    (tmp_path / "change_test.go").write_text(TESTS)
    gc.main([str(tmp_path / "cases_test.go"), str(tmp_path / "change_test.go"), FAIL, OK, str(tmp_path / "m.json")])
    manifest = json.loads((tmp_path / "m.json").read_text())
    assert (tmp_path / "m.json").stat().st_mode & 0o777 == 0o600
    assert manifest == written()[1]
    assert (tmp_path / "change_test.go").read_text() == written()[0][1]


@pytest.mark.skipif(shutil.which("go") is None, reason="no go on this machine")
@pytest.mark.parametrize("seed", ["a", "b", "c"])
def test_a_right_solution_fails_every_copy_and_passes_its_originals(tmp_path, seed):
    (tmp_path / "go.mod").write_text("module change\n\ngo 1.18\n")
    (tmp_path / "change.go").write_text(RIGHT)
    (tmp_path / "cases_test.go").write_text(CASES)
    (tmp_path / "change_test.go").write_text(TESTS)
    gc.main([str(tmp_path / "cases_test.go"), str(tmp_path / "change_test.go"), FAIL + seed, OK,
             str(tmp_path / "m.json")])
    manifest = json.loads((tmp_path / "m.json").read_text())
    env = dict(os.environ, GOFLAGS="-buildvcs=false", GOPROXY="off", CGO_ENABLED="0", GOTOOLCHAIN="local")
    run = subprocess.run(["go", "test", "-count=1", "-json", "."], cwd=tmp_path, capture_output=True, text=True,
                         env=env, timeout=300)
    (tmp_path / "go-test.json").write_text(run.stdout)
    from rules.reports import parse_go_json

    tests = parse_go_json(tmp_path).tests
    canaries = Canaries(tuple(manifest["fail"]), tuple(manifest["pass"]), manifest["originals"], "id")
    for name in manifest["fail"]:
        assert tests.get(name) == "failed", (name, tests)
    for name in manifest["pass"] + list(manifest["originals"].values()):
        assert tests.get(name) == "passed", (name, tests)
    expected = [t for t in tests if not canaries.owns(t)]
    assert len(expected) == 5
    assert decide(tests, expected, canaries, 1)[0] == "pass"
    forged = {t: "passed" for t in tests}
    verdict, evidence, _, _ = decide(forged, expected, canaries, 0)
    assert verdict == "tampered" and any("with its expected value changed" in e for e in evidence)


def test_no_canary_takes_a_name_the_solution_uses():
    manifest = written()[1]
    used = "package change\n\nfunc " + manifest["fail"][0] + "() {}\nfunc " + manifest["pass"][0] + "() {}\n"
    again = gc.with_canaries([CASES, TESTS], FAIL, OK, others=(used,))[1]
    assert not {manifest["fail"][0], manifest["pass"][0]} & set(again["fail"] + again["pass"])
