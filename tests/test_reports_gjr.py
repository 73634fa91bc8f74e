"""The Go, JavaScript and Rust report parsers (pure: no Docker).

The samples are cut down from reports the runners wrote in the grader image (go 1.23 ``go test -json``, jest 29
``--json``, rustc 1.96 libtest ``--format json`` and ``cargo test --doc``); only timing fields were dropped.
"""
from __future__ import annotations

import json
from pathlib import Path

from rules import reports

GO_META = {"language": "go", "test_files": ["hello_test.go"], "solution_files": ["hello.go"]}

GO_SAMPLE = """\
{"Action":"start","Package":"hello"}
{"Action":"run","Package":"hello","Test":"TestDouble"}
{"Action":"output","Package":"hello","Test":"TestDouble","Output":"=== RUN   TestDouble\\n"}
{"Action":"run","Package":"hello","Test":"TestDouble/one"}
{"Action":"pass","Package":"hello","Test":"TestDouble/one"}
{"Action":"run","Package":"hello","Test":"TestDouble/twenty_x"}
{"Action":"output","Package":"hello","Test":"TestDouble/twenty_x","Output":"    hello_test.go:9: Double(20) = 40, want 41\\n"}
{"Action":"fail","Package":"hello","Test":"TestDouble/twenty_x"}
{"Action":"fail","Package":"hello","Test":"TestDouble"}
{"Action":"run","Package":"hello","Test":"TestZero"}
{"Action":"pass","Package":"hello","Test":"TestZero"}
{"Action":"run","Package":"hello","Test":"TestParentFails"}
{"Action":"run","Package":"hello","Test":"TestParentFails/ok"}
{"Action":"pass","Package":"hello","Test":"TestParentFails/ok"}
{"Action":"fail","Package":"hello","Test":"TestParentFails"}
{"Action":"run","Package":"hello","Test":"TestSkip"}
{"Action":"skip","Package":"hello","Test":"TestSkip"}
{"Action":"run","Package":"hello","Test":"ExampleDouble"}
{"Action":"pass","Package":"hello","Test":"ExampleDouble"}
{"Action":"output","Package":"hello","Output":"FAIL\\thello\\t0.005s\\n"}
{"Action":"fail","Package":"hello"}
"""


def report(tmp_path: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        (tmp_path / name).write_text(text)
    return tmp_path


# ---- Go ----

def test_go_ids_are_leaf_cases_and_a_parent_failing_on_its_own(tmp_path):
    parsed = reports.parse_go_json(report(tmp_path, {"go-test.json": GO_SAMPLE}), GO_META)
    assert parsed.tests == {
        "TestDouble/one": "passed", "TestDouble/twenty_x": "failed", "TestZero": "passed",
        "TestParentFails/ok": "passed", "TestParentFails": "failed", "TestSkip": "skipped",
        "ExampleDouble": "passed",
    }


def test_go_test_reported_twice_is_failed(tmp_path):
    # what a solution printing "=== RUN"/"--- PASS" framing lines before the real test looks like
    forged = ('{"Action":"run","Test":"TestZero"}\n{"Action":"pass","Test":"TestZero"}\n'
              '{"Action":"run","Test":"TestZero"}\n{"Action":"fail","Test":"TestZero"}\n')
    parsed = reports.parse_go_json(report(tmp_path, {"go-test.json": forged}), GO_META)
    assert parsed.tests == {"TestZero": "failed"}
    assert any("more than once" in n for n in parsed.notes)


def test_go_test_without_verdict_is_failed(tmp_path):
    died = '{"Action":"run","Test":"TestA"}\n{"Action":"run","Test":"TestA/x"}\n{"Action":"pass","Test":"TestA/x"}\n' \
           '{"Action":"run","Test":"TestA/y"}\n{"Action":"output","Test":"TestA/y","Output":"panic\\n"}\n' \
           '{"Action":"fail","Package":"hello"}\n'
    parsed = reports.parse_go_json(report(tmp_path, {"go-test.json": died}), GO_META)
    assert parsed.tests == {"TestA/x": "passed", "TestA/y": "failed"}


def test_go_missing_or_garbage_report_gives_no_tests_and_a_note(tmp_path):
    parsed = reports.parse_go_json(tmp_path, GO_META)
    assert parsed.tests == {} and parsed.notes
    parsed = reports.parse_go_json(report(tmp_path, {"go-test.json": "\x00\xff not json\n[1]\n" + "[" * 100000}), GO_META)
    assert parsed.tests == {} and "not go test events" in parsed.notes[0]


def test_go_build_failure_is_noted(tmp_path):
    parsed = reports.parse_go_json(report(tmp_path, {"go-test.json": '{"Action":"start","Package":"hello"}\n'
                                                                     '{"Action":"fail","Package":"hello"}\n'}), GO_META)
    assert parsed.tests == {} and "before any test ran" in parsed.notes[0]


# ---- JavaScript ----

JS_META = {"language": "javascript", "test_files": ["hello.spec.js"], "solution_files": ["hello.js"]}


def _assertion(ancestors: list[str], title: str, status: str) -> dict:
    return {"ancestorTitles": ancestors, "fullName": " ".join(ancestors + [title]), "title": title,
            "status": status, "failureMessages": [], "numPassingAsserts": 1}


def jest_report(*suites: dict) -> str:
    return json.dumps({"numFailedTests": 0, "numPassedTests": 99, "success": True, "testResults": list(suites)})


JS_SAMPLE = jest_report(
    {"name": "/work/hello.spec.js", "status": "failed", "message": "", "assertionResults": [
        _assertion(["double"], "one", "passed"), _assertion(["double"], "twenty", "failed"),
        _assertion(["double"], "skipped", "pending"), _assertion(["double"], "todo one", "todo"),
        _assertion(["double", "nested"], "zero", "passed"), _assertion(["double", "nested"], "zero", "passed"),
        _assertion([], "top level", "passed")]},
    {"name": "/work/broken.spec.js", "status": "failed", "assertionResults": [],
     "message": "  ● Test suite failed to run\n\n    Cannot find module './missing' from 'broken.spec.js'\n"},
)


def test_js_ids_are_file_and_full_name_with_repeats_numbered(tmp_path):
    parsed = reports.parse_jest_json(report(tmp_path, {"jest.json": JS_SAMPLE}), JS_META)
    assert parsed.tests == {
        "hello.spec.js › double one": "passed", "hello.spec.js › double twenty": "failed",
        "hello.spec.js › double skipped": "skipped", "hello.spec.js › double todo one": "skipped",
        "hello.spec.js › double nested zero": "passed", "hello.spec.js › double nested zero #2": "passed",
        "hello.spec.js › top level": "passed",
    }
    assert parsed.notes == ["broken.spec.js: test suite failed to run (Test suite failed to run)"]


def test_js_counts_in_the_report_are_not_trusted(tmp_path):
    # numPassedTests says 99: only the listed results count
    parsed = reports.parse_jest_json(report(tmp_path, {"jest.json": jest_report(
        {"name": "/work/hello.spec.js", "assertionResults": [_assertion([], "a", "weird")]})}), JS_META)
    assert parsed.tests == {"hello.spec.js › a": "failed"}


def test_js_malformed_report_gives_no_tests_and_a_note(tmp_path):
    for text in ("not json", "[]", '{"testResults": 3}', "[" * 100000):
        parsed = reports.parse_jest_json(report(tmp_path, {"jest.json": text}), JS_META)
        assert parsed.tests == {} and len(parsed.notes) == 1, text[:20]


# ---- Rust ----

RUST_META = {"language": "rust", "test_files": ["tests/hello.rs"], "solution_files": ["src/lib.rs", "Cargo.toml"]}

LIBTEST_SAMPLE = """\
{ "type": "suite", "event": "started", "test_count": 4 }
{ "type": "test", "event": "started", "name": "inner::panics" }
{ "type": "test", "event": "started", "name": "one" }
{ "type": "test", "name": "inner::panics", "event": "ok" }
{ "type": "test", "event": "started", "name": "twenty" }
{ "type": "test", "name": "one", "event": "ok" }
{ "type": "test", "event": "started", "name": "zero" }
{ "type": "test", "name": "twenty", "event": "failed", "stdout": "thread 'twenty' panicked at tests/hello.rs:8:15" }
{ "type": "test", "name": "zero", "event": "ignored" }
{ "type": "suite", "event": "failed", "passed": 2, "failed": 1, "ignored": 1, "measured": 0, "filtered_out": 0 }
"""

DOCTEST_SAMPLE = """\
running 5 tests
test src/lib.rs - double (line 2) ... ok
test src/pre.rs - pre::Thing (line 10) ... FAILED
test src/pre.rs - pre::helper (line 2) - compile fail ... ok
test src/pre.rs - pre::helper (line 6) ... ok
test src/pre.rs - pre::helper (line 9) ... ok

failures:

---- src/pre.rs - pre::Thing (line 10) stdout ----
test src/pre.rs - pre::Thing (line 10) ... ok

test result: FAILED. 4 passed; 1 failed; 0 ignored; 0 measured; 0 filtered out; finished in 1.13s
"""


def test_rust_ids_are_target_and_test_name(tmp_path):
    parsed = reports.parse_libtest_json(report(tmp_path, {"libtest-hello.json": LIBTEST_SAMPLE}), RUST_META)
    assert parsed.tests == {"hello::inner::panics": "passed", "hello::one": "passed", "hello::twenty": "failed",
                            "hello::zero": "skipped"}
    assert parsed.notes == []


def test_rust_doc_tests_of_pristine_files_only_without_line_numbers(tmp_path):
    parsed = reports.parse_libtest_json(report(tmp_path, {"libtest-hello.json": "", "doctest.txt": DOCTEST_SAMPLE}),
                                        RUST_META)
    assert parsed.tests == {"doc::src/pre.rs - pre::Thing": "failed",
                            "doc::src/pre.rs - pre::helper - compile fail": "passed",
                            "doc::src/pre.rs - pre::helper": "passed", "doc::src/pre.rs - pre::helper #2": "passed"}


def test_rust_printed_events_and_a_missing_verdict_are_failures(tmp_path):
    forged = ('{ "type": "test", "name": "one", "event": "ok" }\n'  # printed by the solution before the real one
              'test one ... ok\n'
              '{ "type": "test", "event": "started", "name": "one" }\n'
              '{ "type": "test", "name": "one", "event": "ok" }\n'
              '{ "type": "test", "event": "started", "name": "two" }\n')
    parsed = reports.parse_libtest_json(report(tmp_path, {"libtest-a-b.json": forged}), RUST_META)
    assert parsed.tests == {"a-b::one": "failed", "a-b::two": "failed"}
    assert len(parsed.notes) == 3


def test_rust_no_report_gives_no_tests_and_a_note(tmp_path):
    parsed = reports.parse_libtest_json(tmp_path / "missing", RUST_META)
    assert parsed.tests == {} and parsed.notes


# ---- hostile sizes: a solution can print any test name into a report; parsing stays linear ----

def test_go_deep_and_long_names_parse_in_linear_time(tmp_path):
    import time

    chain = ["TestDeep" + "/x" * i for i in range(1500)]  # 1500 nested levels, each run and failed
    lines = [json.dumps({"Action": a, "Test": t}) for t in chain for a in ("run", "fail")]
    lines += [json.dumps({"Action": a, "Test": "TestWide" + "/" * 200000}) for a in ("run", "pass")]
    start = time.monotonic()
    parsed = reports.parse_go_json(report(tmp_path, {"go-test.json": "\n".join(lines) + "\n"}), GO_META)
    assert time.monotonic() - start < 10
    assert parsed.tests == {chain[-1]: "failed", "TestWide" + "/" * 200000: "passed"}


def test_repeated_names_are_numbered_in_linear_time(tmp_path):
    import time

    many = jest_report({"name": "/work/hello.spec.js", "assertionResults": [_assertion([], "same", "passed")] * 50000})
    doc = "".join("test src/pre.rs - pre::x (line 1) ... ok\n" for _ in range(50000))
    start = time.monotonic()
    js = reports.parse_jest_json(report(tmp_path, {"jest.json": many}), JS_META)
    rust = reports.parse_libtest_json(report(tmp_path, {"doctest.txt": doc}), RUST_META)
    assert time.monotonic() - start < 10
    assert len(js.tests) == 50000 and "hello.spec.js › same #50000" in js.tests
    assert len(rust.tests) == 50000 and "doc::src/pre.rs - pre::x #50000" in rust.tests
