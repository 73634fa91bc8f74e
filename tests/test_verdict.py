"""The verdict, decided on the host from a parsed report (no Docker): identity, canaries, hostile reports."""
from __future__ import annotations

from rules import reports
from rules.grade import decide

EXPECTED = ["t::one", "t::two", "t::three"]
CANARIES = ("kfail0000001", "kpass0000001")
HONEST_CANARIES = {"t::test_kfail0000001": "failed", "t::test_kpass0000001": "passed"}


def verdict(tests, expected=EXPECTED, canaries=CANARIES, runner_exit=1):
    return decide(tests, expected, canaries, runner_exit)


def test_every_expected_test_passing_with_honest_canaries_is_a_pass():
    v, evidence, ran, ok = verdict({**{t: "passed" for t in EXPECTED}, **HONEST_CANARIES})
    assert (v, evidence, ran, ok) == ("pass", [], 3, 3)


def test_a_missing_expected_test_fails_and_is_named():
    v, evidence, ran, ok = verdict({"t::one": "passed", "t::two": "passed", "t::extra": "passed", **HONEST_CANARIES})
    assert (v, ran, ok) == ("fail", 3, 2) and "t::three" in evidence[0] and "not reported" in evidence[0]


def test_a_skipped_expected_test_is_not_a_pass():
    v, evidence, _, ok = verdict({"t::one": "passed", "t::two": "passed", "t::three": "skipped", **HONEST_CANARIES})
    assert v == "fail" and ok == 2 and "t::three" in evidence[0]


def test_failing_canary_reported_passed_is_tampered_even_when_tests_fail():
    tests = {"t::one": "failed", "t::two": "passed", "t::three": "passed",
             "t::test_kfail0000001": "passed", "t::test_kpass0000001": "passed"}
    v, evidence, _, _ = verdict(tests)
    assert v == "tampered" and "must fail" in evidence[0]


def test_passing_canary_reported_failed_is_tampered():
    tests = {**{t: "passed" for t in EXPECTED}, "t::test_kfail0000001": "failed", "t::test_kpass0000001": "failed"}
    assert verdict(tests)[0] == "tampered"


def test_a_perfect_report_without_the_canaries_is_tampered():
    v, evidence, _, _ = verdict({t: "passed" for t in EXPECTED})
    assert v == "tampered" and "missing" in evidence[0]


def test_canaries_missing_from_a_run_that_died_is_a_plain_fail():
    v, evidence, _, _ = verdict({"t::one": "passed"})
    assert v == "fail" and any("did not complete" in e for e in evidence)


def test_canary_ids_do_not_count_as_tests_and_matching_ignores_case():
    tests = {**{t: "passed" for t in EXPECTED}, "T::Test_KFAIL0000001": "failed", "T::KPASS0000001": "passed"}
    assert verdict(tests)[:4] == ("pass", [], 3, 3)


def test_proving_a_reference_counts_every_reported_test_but_skips():
    tests = {"a::x": "passed", "a::y": "passed", "a::deliberate": "skipped", **HONEST_CANARIES}
    assert verdict(tests, expected=None)[:4] == ("pass", [], 2, 2)
    assert verdict({**HONEST_CANARIES}, expected=None)[0] == "fail"  # no tests ran


def test_without_canaries_the_runner_must_exit_zero():
    tests = {t: "passed" for t in EXPECTED}
    assert decide(tests, EXPECTED, None, 0)[0] == "pass"
    v, evidence, _, _ = decide(tests, EXPECTED, None, 3)
    assert v == "fail" and "status 3" in evidence[0]


JUNIT = """<?xml version="1.0" encoding="utf-8"?>
<testsuites><testsuite name="pytest" errors="0" failures="1" skipped="1" tests="4">
<testcase classname="hello_test.HelloTest" name="test_one" time="0.001"/>
<testcase classname="hello_test.HelloTest" name="test_two" time="0.001"><failure message="boom">trace</failure></testcase>
<testcase classname="hello_test.HelloTest" name="test_three" time="0.001"><skipped message="later"/></testcase>
<testcase classname="hello_test.HelloTest" name="test_four" time="0.001"><error message="setup"/></testcase>
</testsuite></testsuites>
"""


def test_junit_ids_and_statuses(tmp_path):
    (tmp_path / "report.xml").write_text(JUNIT)
    parsed = reports.parse("junit", tmp_path)
    assert parsed.tests == {"hello_test.HelloTest::test_one": "passed", "hello_test.HelloTest::test_two": "failed",
                            "hello_test.HelloTest::test_three": "skipped", "hello_test.HelloTest::test_four": "failed"}
    assert parsed.notes == []


def test_a_test_reported_twice_keeps_its_worst_outcome(tmp_path):
    (tmp_path / "a.xml").write_text('<testsuite><testcase classname="c" name="n"/></testsuite>')
    (tmp_path / "b.xml").write_text('<testsuite><testcase classname="c" name="n"><failure/></testcase></testsuite>')
    assert reports.parse("junit", tmp_path).tests == {"c::n": "failed"}


def test_hostile_xml_is_refused_without_expanding_entities(tmp_path):
    bomb = ('<?xml version="1.0"?><!DOCTYPE lolz [<!ENTITY lol "lol"><!ENTITY lol2 "&lol;&lol;&lol;&lol;">]>'
            '<testsuite><testcase classname="c" name="&lol2;"/></testsuite>')
    (tmp_path / "report.xml").write_text(bomb)
    parsed = reports.parse("junit", tmp_path)
    assert parsed.tests == {} and "not a readable XML report" in parsed.notes[0]
    (tmp_path / "report.xml").write_text('<!DOCTYPE x [<!ENTITY e SYSTEM "file:///etc/passwd">]><testsuite>'
                                         '<testcase classname="c" name="&e;"/></testsuite>')
    assert reports.parse("junit", tmp_path).tests == {}


def test_missing_malformed_or_huge_reports_give_notes_not_exceptions(tmp_path, monkeypatch):
    assert reports.parse("junit", tmp_path / "absent").notes == ["no JUnit XML report was written"]
    (tmp_path / "report.xml").write_text("<testsuite><testcase")
    assert "not a readable XML report" in reports.parse("junit", tmp_path).notes[0]
    monkeypatch.setattr(reports, "MAX_REPORT_BYTES", 10)
    assert "over the 10-byte limit" in reports.parse("junit", tmp_path).notes[0]
    assert "unknown report format" in reports.parse("nope", tmp_path).notes[0]


def test_symlinked_reports_are_never_followed(tmp_path):
    secret = tmp_path / "secret.xml"
    secret.write_text('<testsuite><testcase classname="c" name="n"/></testsuite>')
    (tmp_path / "report").mkdir()
    (tmp_path / "report" / "report.xml").symlink_to(secret)
    assert reports.parse("junit", tmp_path / "report").tests == {}


def test_scrub_removes_every_line_naming_a_canary():
    text = "ok line\nFAILED t::test_KFAIL0000001 - boom\nE  'kpass0000001' != 'x'\nlast\n"
    assert reports.scrub(text, list(CANARIES)) == "ok line\nlast\n"



def test_an_expected_test_reported_twice_is_failed_whichever_copy_passed():
    """jest numbers a second test of the same name `` #2`` and lists a root-level twin that the solution
    registers at import first: the twin's pass must not stand for the real test (red team 3)."""
    tests = {**{t: "passed" for t in EXPECTED}, "t::two #2": "failed", **HONEST_CANARIES}
    v, evidence, ran, ok = verdict(tests)
    assert (v, ran, ok) == ("fail", 3, 2), evidence
    assert "reported more than once" in evidence[0] and "t::two" in evidence[0]


def test_a_name_the_reference_s_run_also_reported_twice_is_not_a_twin():
    expected = EXPECTED + ["t::two #2"]
    tests = {**{t: "passed" for t in expected}, **HONEST_CANARIES}
    assert verdict(tests, expected=expected)[0] == "pass"
