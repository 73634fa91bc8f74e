"""The JUnit reports of the Java and C++ tracks, read by ``rules.reports.parse_junit`` (pure: no Docker).

The samples are cut down from reports the runners wrote in the grader image: JUnit Platform 1.10's console
launcher (``--reports-dir``: its legacy XML, one file per engine) and Catch2 v2.13's ``--reporter junit``; only
the ``<properties>`` block, timings and stack frames were dropped.
"""
from __future__ import annotations

from pathlib import Path

from rules import reports
from rules.grade import decide

JAVA_JUPITER = """\
<?xml version="1.0" encoding="UTF-8"?>
<testsuite name="JUnit Jupiter" tests="12" skipped="1" failures="1" errors="1" time="0.374">
<testcase name="greets()" classname="HelloTest" time="0.054">
<system-out><![CDATA[
unique-id: [engine:junit-jupiter]/[class:HelloTest]/[method:greets()]
display-name: greets()
]]></system-out>
</testcase>
<testcase name="param(String)[1]" classname="HelloTest" time="0.002">
<system-out><![CDATA[
display-name: [1] x
]]></system-out>
</testcase>
<testcase name="param(String)[2]" classname="HelloTest" time="0.005"/>
<testcase name="samename(int)[1]" classname="HelloTest" time="0"><system-out><![CDATA[display-name: same]]></system-out></testcase>
<testcase name="samename(int)[2]" classname="HelloTest" time="0"><system-out><![CDATA[display-name: same]]></system-out></testcase>
<testcase name="repeated()[1]" classname="HelloTest" time="0.004"/>
<testcase name="dyn()[1]" classname="HelloTest" time="0"><system-out><![CDATA[display-name: d1]]></system-out></testcase>
<testcase name="dyn()[2]" classname="HelloTest" time="0"><system-out><![CDATA[display-name: d1]]></system-out></testcase>
<testcase name="named()" classname="HelloTest" time="0">
<system-out><![CDATA[
display-name: with a display name & <xml> "chars"
]]></system-out>
</testcase>
<testcase name="deeper()" classname="HelloTest$Inner$Deeper" time="0"/>
<testcase name="errors()" classname="HelloTest" time="0.009">
<error message="boom" type="java.lang.IllegalStateException"><![CDATA[java.lang.IllegalStateException: boom
	at HelloTest.errors(HelloTest.java:14)
]]></error>
</testcase>
<testcase name="fails()" classname="HelloTest" time="0.016">
<failure message="
expected: &quot;Hello, b&quot;
 but was: &quot;Hello, a&quot;" type="org.opentest4j.AssertionFailedError"><![CDATA[org.opentest4j.AssertionFailedError:
expected: "Hello, b"
 but was: "Hello, a"
]]></failure>
</testcase>
<testcase name="aborted()" classname="HelloTest" time="0.008">
<skipped><![CDATA[org.opentest4j.TestAbortedException: Assumption failed: nope
]]></skipped>
</testcase>
<testcase name="kf00ba4c9e12()" classname="kf00ba4c9e12" time="0.001">
<failure message="kf00ba4c9e12" type="java.lang.AssertionError"><![CDATA[java.lang.AssertionError: kf00ba4c9e12
]]></failure>
</testcase>
<testcase name="k0a1b2c3d4e5()" classname="k0a1b2c3d4e5" time="0"/>
<system-out><![CDATA[
unique-id: [engine:junit-jupiter]
display-name: JUnit Jupiter
]]></system-out>
</testsuite>
"""
JAVA_VINTAGE = """\
<?xml version="1.0" encoding="UTF-8"?>
<testsuite name="JUnit Vintage" tests="0" skipped="0" failures="0" errors="0" time="0">
<system-out><![CDATA[
unique-id: [engine:junit-vintage]
display-name: JUnit Vintage
]]></system-out>
</testsuite>
"""
CATCH = """\
<?xml version="1.0" encoding="UTF-8"?>
<testsuites>
  <testsuite name="hello" errors="1" failures="3" tests="11" hostname="tbd" time="0.000213" timestamp="2026-11-30T09:40:55Z">
    <testcase classname="hello.global" name="greets" time="0.000027" status="run"/>
    <testcase classname="hello.global" name="fails" time="0.0" status="run">
      <failure message="hello::greet(&quot;a&quot;) == &quot;Hello, b&quot;" type="REQUIRE">
FAILED:
  REQUIRE( hello::greet("a") == "Hello, b" )
with expansion:
  "Hello, a" == "Hello, b"
at /tmp/lab-cpp/hello/hello_test.cpp:10
      </failure>
    </testcase>
    <testcase classname="hello.global" name="throws" time="0.0" status="run">
      <error type="TEST_CASE">
FAILED:
boom
at /tmp/lab-cpp/hello/hello_test.cpp:11
      </error>
    </testcase>
    <testcase classname="hello.global" name="checks &lt;xml> &amp; &quot;q&quot;" time="0.000011" status="run">
      <failure message="1 == 2" type="CHECK">
FAILED:
  CHECK( 1 == 2 )
at /tmp/lab-cpp/hello/hello_test.cpp:12
      </failure>
    </testcase>
    <testcase classname="hello.global" name="sections/one" time="0.000001" status="run"/>
    <testcase classname="hello.global" name="sections/two" time="0.000004" status="run">
      <failure message="1 == 2" type="REQUIRE">
FAILED:
  REQUIRE( 1 == 2 )
at /tmp/lab-cpp/hello/hello_test.cpp:15
      </failure>
    </testcase>
    <testcase classname="hello.global" name="sections/outer/inner a" time="0.000001" status="run"/>
    <testcase classname="hello.global" name="sections/outer/inner b" time="0.000001" status="run"/>
    <testcase classname="hello.global" name="kf00ba4c9e12/kf00ba4c9e12 REQUIRE" time="0.0" status="run">
      <failure message="std::string(&quot;kf00ba4c9e12&quot;) == &quot;not kf00ba4c9e12&quot;" type="REQUIRE">
FAILED:
  REQUIRE( std::string("kf00ba4c9e12") == "not kf00ba4c9e12" )
at /tmp/lab-cpp/hello/hello_test.cpp:21
      </failure>
    </testcase>
    <testcase classname="hello.global" name="kf00ba4c9e12/kf00ba4c9e12 FAIL" time="0.0" status="run">
      <failure type="FAIL">
FAILED:
kf00ba4c9e12
at /tmp/lab-cpp/hello/hello_test.cpp:26
      </failure>
    </testcase>
    <testcase classname="hello.global" name="k0a1b2c3d4e5" time="0.0" status="run"/>
    <system-out/>
    <system-err/>
  </testsuite>
</testsuites>
"""
CANARIES = ("kf00ba4c9e12", "k0a1b2c3d4e5")


def report(tmp_path: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        (tmp_path / name).write_text(text)
    return tmp_path


def test_java_ids_are_class_and_method_with_one_per_parameterized_case(tmp_path):
    parsed = reports.parse_junit(report(tmp_path, {"TEST-junit-jupiter.xml": JAVA_JUPITER,
                                                   "TEST-junit-vintage.xml": JAVA_VINTAGE}), {})
    assert parsed.tests == {
        "HelloTest::greets()": "passed",
        # parameterized, repeated and dynamic tests: one id per invocation, by index (display names, which may
        # repeat, stay out of the id)
        "HelloTest::param(String)[1]": "passed", "HelloTest::param(String)[2]": "passed",
        "HelloTest::samename(int)[1]": "passed", "HelloTest::samename(int)[2]": "passed",
        "HelloTest::repeated()[1]": "passed", "HelloTest::dyn()[1]": "passed", "HelloTest::dyn()[2]": "passed",
        "HelloTest::named()": "passed",
        "HelloTest$Inner$Deeper::deeper()": "passed",  # nested classes by their binary name
        "HelloTest::errors()": "failed", "HelloTest::fails()": "failed",
        "HelloTest::aborted()": "skipped",  # a failed assumption
        "kf00ba4c9e12::kf00ba4c9e12()": "failed", "k0a1b2c3d4e5::k0a1b2c3d4e5()": "passed",
    }
    assert parsed.notes == []


def test_catch_ids_are_test_cases_and_leaf_sections(tmp_path):
    parsed = reports.parse_junit(report(tmp_path, {"catch.xml": CATCH}), {})
    assert parsed.tests == {
        "hello.global::greets": "passed", "hello.global::fails": "failed", "hello.global::throws": "failed",
        'hello.global::checks <xml> & "q"': "failed",
        "hello.global::sections/one": "passed", "hello.global::sections/two": "failed",
        "hello.global::sections/outer/inner a": "passed", "hello.global::sections/outer/inner b": "passed",
        "hello.global::kf00ba4c9e12/kf00ba4c9e12 REQUIRE": "failed",
        "hello.global::kf00ba4c9e12/kf00ba4c9e12 FAIL": "failed", "hello.global::k0a1b2c3d4e5": "passed",
    }


def test_java_report_with_its_canaries_as_they_must_be_passes(tmp_path):
    parsed = reports.parse_junit(report(tmp_path, {"TEST-junit-jupiter.xml": JAVA_JUPITER}), {})
    verdict, evidence, ran, ok = decide(parsed.tests, ["HelloTest::greets()", "HelloTest::param(String)[2]",
                                                       "HelloTest$Inner$Deeper::deeper()"], CANARIES, 1)
    assert (verdict, evidence, ran, ok) == ("pass", [], 3, 3)


def test_catch_report_cleared_of_its_failures_is_tampered(tmp_path):
    forged = CATCH
    while "<failure" in forged or "<error" in forged:  # what a forger stripping every failure leaves
        start = min(i for i in (forged.find("<failure"), forged.find("<error")) if i >= 0)
        end = forged.find("</", start)
        forged = forged[:start] + forged[forged.find(">", end) + 1:]
    parsed = reports.parse_junit(report(tmp_path, {"catch.xml": forged}), {})
    assert set(parsed.tests.values()) == {"passed"}
    verdict, evidence, _, _ = decide(parsed.tests, ["hello.global::fails", "hello.global::sections/two"],
                                     CANARIES, 0)
    assert verdict == "tampered"
    assert any("must fail" in e for e in evidence)


def test_catch_report_without_the_canaries_is_tampered_when_every_test_passed(tmp_path):
    # a report written by the solution itself, naming only the tests it knows of
    fake = ('<testsuites><testsuite name="hello"><testcase classname="hello.global" name="fails"/>'
            '</testsuite></testsuites>')
    parsed = reports.parse_junit(report(tmp_path, {"catch.xml": fake}), {})
    verdict, _, _, _ = decide(parsed.tests, ["hello.global::fails"], CANARIES, 0)
    assert verdict == "tampered"
