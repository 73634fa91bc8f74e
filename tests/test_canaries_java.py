"""The Java track's canaries (templates/images/grader/lab_grader/java_canaries.py): named like the exercise's own
tests (camelCase words of its test names), a class of their own for the plain ones, copies of its tests with an
expected value changed placed in the test's own class, only where the changed assertion surely runs, and the
plain canaries alone for a source this cannot read. No Java runs here: tests/test_forgeries.py grades them."""
from __future__ import annotations

import json
import os
import re
import sys
import textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "templates" / "images" / "grader"))
from lab_grader import java_canaries as jc  # noqa: E402

from rules.grade import Canaries, decide  # noqa: E402

TESTS = textwrap.dedent('''\
    import org.junit.jupiter.api.BeforeEach;
    import org.junit.jupiter.api.Disabled;
    import org.junit.jupiter.api.Test;

    import static org.assertj.core.api.Assertions.assertThat;

    public class ChangeCalculatorTest {

        private ChangeCalculator calculator;

        @BeforeEach
        public void setUp() {
            calculator = new ChangeCalculator();
        }

        @Test
        public void testChangeForOneCent() {
            assertThat(calculator.count(1)).isEqualTo(1);
        }

        @Disabled("Remove to run test")
        @Test
        public void testChangeNamedWithLocal() {
            String expected = "quarter " + "dime";
            assertThat(calculator.name(35)).isEqualTo(expected);
        }

        @Disabled("Remove to run test")
        @Test
        public void testChangeWithEscapes() {
            assertThat(calculator.describe(25)).isEqualTo("\\tone\\n");
        }

        @Test
        public void testLiteralAgainstLiteralIsNeverCopied() {
            assertThat(1).isEqualTo(1);
        }

        @Test
        public void testBranchIsNeverCopied() {
            if (calculator.count(2) > 0) {
                assertThat(calculator.count(2)).isEqualTo(2);
            }
        }

        @Test
        public void testEarlyReturnIsNeverCopied() {
            for (int i = 0; i < 3; i++) {
                if (i == 1) return;
            }
            assertThat(calculator.count(3)).isEqualTo(3);
        }

        @Test
        public void testLoopIsNeverCopied() {
            for (int i = 0; i < 3; i++) assertThat(calculator.count(i)).isEqualTo(7);
        }

        @Test
        public void testChainIsNeverCopied() {
            assertThat(calculator.count(4)).as("four").isEqualTo(4);
        }

        @Test
        public void testLocalUsedTwiceIsNeverCopied() {
            int expected = 5;
            expected++;
            assertThat(calculator.count(6)).isEqualTo(expected);
        }

        @Test
        public void testNegativeAfterABlock() {
            {
                calculator.count(0);
            }
            assertThat(calculator.balance()).isEqualTo(-1);
        }
    }
    ''')
COPYABLE = {"testChangeForOneCent", "testChangeNamedWithLocal", "testChangeWithEscapes",
            "testNegativeAfterABlock"}


def parse(source: str):
    toks = jc.tokens(source)
    return toks, jc.classes(toks)


def test_only_assertions_that_surely_run_with_a_computed_value_are_copied():
    toks, found = parse(TESTS)
    (cls,) = found
    assert cls.name == "ChangeCalculatorTest"
    copyable = {m.name: [" ".join(t.text for t in c) for c in jc.candidates(toks, m, True)] for m in cls.tests()}
    assert {n for n, c in copyable.items() if c} == COPYABLE
    assert copyable["testChangeNamedWithLocal"] == ['"quarter " + "dime"']
    assert copyable["testNegativeAfterABlock"] == ["- 1"]
    # without AssertJ's assertThat imported, no assertThat is known to be AssertJ's
    assert not any(jc.candidates(toks, m, False) for m in cls.tests())
    assert jc._imports_assert_that(toks, [m.name for m in cls.methods])
    assert not jc._imports_assert_that(jc.tokens(TESTS.replace("static org.assertj", "static my")), [])


def test_changed_literals_keep_their_type_and_differ():
    rnd = jc.random.Random(1)
    for text in ('"xbt"', '"\\tone\\n"', '" "', '""', '"a\\"b"'):
        for _ in range(20):
            new = jc._changed_string(rnd, text, ["word"])
            assert new != text and eval(new) != eval(text), (text, new)  # Python reads these escapes alike
            assert re.fullmatch(r'"(?:[^"\\\n]|\\.)*"', new)
    for text, changed in (("0", "1"), ("7", "6"), ("2147483648", "2147483647"), ("9L", "8L")):
        assert jc._changed(rnd, [jc.Tok("number", text, 0, 0)], [])[1] == changed
    assert jc._changed(rnd, [jc.Tok("ident", "true", 0, 0)], [])[1] == "false"
    assert jc._changed(rnd, [jc.Tok("char", "'a'", 0, 0)], [])[1] not in ("'a'", "'A'")


def test_canaries_are_named_from_the_tests_words_and_placed_among_them():
    out, home, cls, canary_source, manifest = jc.with_canaries([TESTS], "k0123456789a", "k0123456789b")
    (test,) = out
    names = manifest["fail"] + manifest["pass"]
    assert manifest["match"] == "leaf" and len(manifest["fail"]) == 4 and len(manifest["pass"]) == 1
    words = {w.lower() for n in re.findall(r"void (\w+)\(", TESTS) for w in jc.words_of(n)}
    for name in names:
        assert re.fullmatch(r"[a-z][A-Za-z0-9]*\(\)", name), name
        assert not re.search(r"k[0-9a-f]{11}", name)
        assert {w.lower() for w in jc.words_of(name[:-2]) if not w.isdigit()} <= words, name
        assert name[:-2] not in TESTS  # fresh, and no part of any name of the file
    assert len(set(names)) == len(names)
    assert re.fullmatch(r"[A-Z][A-Za-z0-9]*Test", cls) and cls not in TESTS and home == 0
    # the plain canaries: their own class, in AssertJ's style, naming themselves on every line they throw
    for name in manifest["fail"][:2] + manifest["pass"]:
        assert f"public void {name} {{" in canary_source
    assert f"public class {cls} {{" in canary_source and "assertThat(" in canary_source
    assert not re.search(r"k[0-9a-f]{11}", canary_source + test)
    # the copies: in the test's class, each an original with one expected value changed
    toks, found = parse(test)
    methods = {m.name: m for c in found for m in c.methods}
    assert len(found) == 1 and set(methods) >= {n[:-2] for n in manifest["fail"][2:]}
    for copy, original in manifest["originals"].items():
        assert original[:-2] in COPYABLE and copy in manifest["fail"]
        body = test[toks[methods[copy[:-2]].open].end:toks[methods[copy[:-2]].close].start]
        assert "catch (Throwable error)" in body and f'"{copy} "' in body
        orig = TESTS[TESTS.index(f"void {original[:-2]}"):]
        assert orig.split("isEqualTo(")[1].split(");")[0] not in body.split("isEqualTo(")[1].split(");")[0] \
            or "expected" in orig
    # the rest of the file as it was, the copies aside
    kept = test
    for copy in manifest["originals"]:
        m = methods[copy[:-2]]
        kept = kept.replace(test[toks[m.first].start:toks[m.close].end], "")
    assert re.sub(r"\s+", "", kept) == re.sub(r"\s+", "", TESTS)


def test_the_draw_follows_its_seed():
    a = jc.with_canaries([TESTS], "k0123456789a", "k0123456789b")
    assert jc.with_canaries([TESTS], "k0123456789a", "k0123456789b") == a
    assert jc.with_canaries([TESTS], "k0123456789c", "k0123456789b") != a


def test_a_source_that_cannot_be_read_gives_the_plain_canaries_named_from_its_words():
    for odd in ("public class OddTest { @Test public void oddWordsHere() { assertThat(x.y()).isEqualTo(1); }",
                "\\u0070ublic class X {}", "", "class A { void b( }"):
        out, home, cls, canary_source, manifest = jc.with_canaries([odd], "k0123456789a", "k0123456789b")
        assert out == [odd] and not manifest["originals"]
        assert len(manifest["fail"]) == 2 and len(manifest["pass"]) == 1
        assert f"public class {cls} {{" in canary_source
        for name in manifest["fail"] + manifest["pass"]:
            assert name[:-2] not in odd and f"void {name}" in canary_source


def test_main_writes_the_copies_the_canaries_class_and_a_private_manifest(tmp_path):
    tests = tmp_path / "src" / "test" / "java"
    tests.mkdir(parents=True)
    (tests / "Extension.java").write_text("public class Extension {}\n")
    (tests / "ChangeCalculatorTest.java").write_text("package money;\n" + TESTS)
    manifest_path = tmp_path / "manifest"
    jc.main([str(tests / "Extension.java"), str(tests / "ChangeCalculatorTest.java"), "k0123456789a",
             "k0123456789b", str(manifest_path)])
    manifest = json.loads(manifest_path.read_text())
    assert os.stat(manifest_path).st_mode & 0o777 == 0o600
    (extra,) = set(os.listdir(tests)) - {"Extension.java", "ChangeCalculatorTest.java"}
    source = (tests / extra).read_text()
    assert source.startswith("package money;\n") and f"public class {extra[:-5]} {{" in source
    assert all(f"void {n[:-2]}()" in (tests / "ChangeCalculatorTest.java").read_text()
               for n in manifest["originals"])
    assert (tests / "Extension.java").read_text() == "public class Extension {}\n"
    names = tmp_path / "manifest.names"  # what check.sh drops the launcher's lines by
    assert os.stat(names).st_mode & 0o777 == 0o600
    assert names.read_text().split() == [n[:-2] for n in manifest["fail"] + manifest["pass"]] + [extra[:-5]]


def test_the_host_matches_the_leaf_names_to_junit_ids():
    manifest = jc.with_canaries([TESTS], "k0123456789a", "k0123456789b")[4]
    canaries = Canaries(tuple(manifest["fail"]), tuple(manifest["pass"]), manifest["originals"], "leaf")
    cls = jc.with_canaries([TESTS], "k0123456789a", "k0123456789b")[2]
    copy, original = next(iter(manifest["originals"].items()))
    tests = {f"ChangeCalculatorTest::{original}": "passed", f"ChangeCalculatorTest::{copy}": "passed",
             f"{cls}::{manifest['fail'][0]}": "failed", f"{cls}::{manifest['fail'][1]}": "failed",
             f"{cls}::{manifest['pass'][0]}": "passed"}
    for other in manifest["fail"][2:]:
        tests.setdefault(f"ChangeCalculatorTest::{other}", "failed")
    verdict, evidence, _, _ = decide(tests, [f"ChangeCalculatorTest::{original}"], canaries, 1)
    assert verdict == "tampered" and any("with its expected value changed" in e for e in evidence)
    tests[f"ChangeCalculatorTest::{copy}"] = "failed"
    assert decide(tests, [f"ChangeCalculatorTest::{original}"], canaries, 1)[0] == "pass"
