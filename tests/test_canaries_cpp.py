"""The C++ track's canaries (templates/images/grader/lab_grader/cpp_canaries.py) and how the host decides with
their manifest (rules/grade.py: Canaries, decide): test cases named from the words of the exercise's own and
placed among them, a failing one with a section per kind of assertion, and copies of its tests with an expected
value changed, made only where the changed assertion surely runs. No compiler here: the rewritten files are read
back with the writer's own tokenizer (tests/test_honest_cpp.py and tests/test_forgeries.py build them in Docker)."""
from __future__ import annotations

import json
import os
import re
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "templates" / "images" / "grader"))
from lab_grader import cpp_canaries as cc  # noqa: E402

from rules.grade import Canaries, decide  # noqa: E402

FAIL, OK = "k1a2b3c4d5e6", "k9f8e7d6c5b4"
TESTS = textwrap.dedent('''\
    #include "change.h"
    #ifdef EXERCISM_TEST_SUITE
    #include <catch2/catch.hpp>
    #else
    #include "test/catch.hpp"
    #endif

    // TEST_CASE("a comment is no test case") { REQUIRE(1 == change::count(1)); }
    TEST_CASE("single coin makes change", "[17fc7296-2440-4ac4-ad7b-d07c321bc5a0]") {
        REQUIRE(1 == change::count(25));
    }

    #if defined(EXERCISM_RUN_ALL_TESTS)

    TEST_CASE("several coins make change", "[07ced27b-1da5-4c2e-8ae2-cb2791437546]") {
        const auto coins = change::make(15);
        CHECK(change::name(coins) == "dime and nickel");
        REQUIRE(coins.size() == 2u);
    }

    TEST_CASE("no coins make zero change", "[5035b954-b6fa-4b9b-a487-dae69d8c5f96]") {
        REQUIRE(change::make(0).empty() == true);
    }

    TEST_CASE("a branch is never copied", "[64a6a83a-5723-4b5b-a896-663307403310]") {
        if (change::count(1) > 0) {
            REQUIRE(change::count(1) == 1);
        }
    }

    TEST_CASE("a loop is never copied", "[90c8f484-456b-41c4-82ba-2d08d93231c6]") {
        for (int i = 0; i < 3; ++i) REQUIRE(change::count(i) == 1);
    }

    TEST_CASE("sections are never copied", "[d266a59a-fccc-413b-ac53-d57cb1f0db9d]") {
        SECTION("one") { REQUIRE(change::count(1) == 1); }
    }

    TEST_CASE("literal against literal is never copied", "[ea210a98-860d-46b2-a5bf-50d8995b3f2a]") {
        REQUIRE(1 == 1);
        REQUIRE_FALSE(change::count(2) == 3);
        REQUIRE(change::count(2) != 3);
        REQUIRE(change::count(2) == 3 && change::count(1) == 1);
        REQUIRE(change::count(2) < 3 == true);
        const int expected = 2;
        REQUIRE(change::count(2) == expected);
    }

    #if 0
    TEST_CASE("switched off for good") {
        REQUIRE(change::count(7) == 1);
    }
    #endif

    #endif
    ''')


def canary_cases(text: str) -> dict[str, str]:
    """The test cases of a rewritten file: name → its source."""
    parsed = cc.parse(text)
    return {t.name: text[t.start:t.end] for t in parsed.tests}


def test_canaries_are_named_from_the_tests_words_and_placed_among_them():
    out, manifest = cc.with_canaries(TESTS, FAIL, OK)
    assert FAIL not in out and OK not in out and "k1a2" not in json.dumps(manifest)
    assert manifest["match"] == "leaf"
    own = {t.name for t in cc.parse(TESTS).tests}
    words = {w for n in own for w in n.split()}
    cases = canary_cases(out)
    assert own < set(cases)  # every test case is still there
    bad = {n.split("/")[0] for n in manifest["fail"] if "/" in n}
    assert len(bad) == 1
    bad = bad.pop()
    # one section per kind of assertion, each reported as "<case>/<section>", each named from the words
    sections = re.findall(r'SECTION\("([^"]*)"\)', cases[bad])
    assert sorted(f"{bad}/{s}" for s in sections) == sorted(n for n in manifest["fail"] if "/" in n)
    for kind in ("REQUIRE(", "CHECK(", "REQUIRE_THAT(", "CHECK_THAT(", "REQUIRE_FALSE(", "REQUIRE_THROWS_AS(",
                 "REQUIRE_NOTHROW(", "FAIL("):
        assert cases[bad].count(kind) == 1, kind
    drawn = [bad, *manifest["pass"], *manifest["originals"], *sections]
    for name in drawn:
        assert set(name.split()) <= words and "::" not in name and "/" not in name, name
    for name in drawn[:len(drawn) - len(sections)]:  # a section's id is its case's name and its own
        assert not any(name.lower() in n.lower() for n in own), name
    for name in [bad, *manifest["pass"], *manifest["originals"]]:
        assert name in cases and name not in own
        assert re.search(r'TEST_CASE\("' + re.escape(name) + r'", "\[[0-9a-f-]{36}\]"\)', out), name
    # never before the includes, nor in the #if 0 block, nor in the #else of the include switch
    head = out.index('TEST_CASE("single coin makes change"')
    assert all(out.index(f'TEST_CASE("{n}"') >= head for n in drawn[:len(drawn) - len(sections)])
    off = out[out.index("#if 0"):out.index("#endif", out.index("#if 0"))]
    assert "TEST_CASE" in off and off.count("TEST_CASE") == 1


def test_a_mutant_is_its_test_with_one_expected_value_changed_and_follows_it():
    out, manifest = cc.with_canaries(TESTS, FAIL, OK)
    cases = canary_cases(out)
    assert 1 <= len(manifest["originals"]) <= cc.MUTANTS
    for mutant, original in manifest["originals"].items():
        assert mutant in manifest["fail"]
        assert out.index(f'TEST_CASE("{mutant}"') > out.index(f'TEST_CASE("{original}"')
        test = cc.parse(cases[original]).tests[0]
        a = [t.text for t in test.body]
        b = [t.text for t in cc.parse(cases[mutant]).tests[0].body]
        changed = []  # one candidate literal of the original changed for another of its kind, the rest as it was
        for lit in cc.candidates(test):
            i = next(k for k, t in enumerate(test.body) if t is lit[0])
            j, rest = i + len(lit), len(a) - i - len(lit)
            now = "".join(b[i:len(b) - rest])
            if a[:i] == b[:i] and a[j:] == b[len(b) - rest:] and now != "".join(a[i:j]):
                changed.append(("".join(a[i:j]), now))
        assert len(changed) == 1, (a, b)
        was, now = changed[0]
        kind = r'-?\d+u?|"[^"]*"|true|false'
        assert re.fullmatch(kind, was) and re.fullmatch(kind, now)
        assert (was[0] == '"') == (now[0] == '"') and was.endswith("u") == now.endswith("u")


def test_the_draw_follows_its_seed():
    assert cc.with_canaries(TESTS, FAIL, OK) == cc.with_canaries(TESTS, FAIL, OK)
    draws = {json.dumps(cc.with_canaries(TESTS, f"k{i:011x}", OK)[1], sort_keys=True) for i in range(8)}
    assert len(draws) > 4


def test_only_assertions_that_surely_run_with_a_computed_value_are_copied():
    tests = {t.name: t for t in cc.parse(TESTS).tests}
    texts = {n: ["".join(x.text for x in lit) for lit in cc.candidates(t)] for n, t in tests.items()}
    assert texts == {"single coin makes change": ["1"], "several coins make change": ['"dime and nickel"', "2u"],
                     "no coins make zero change": ["true"], "a branch is never copied": [],
                     "a loop is never copied": [], "sections are never copied": [],
                     "literal against literal is never copied": [], "switched off for good": ["1"]}
    assert not tests["switched off for good"].active  # ... and a test case in an #if 0 is never copied
    for seed in range(30):
        _, manifest = cc.with_canaries(TESTS, f"k{seed:011x}", OK)
        assert set(manifest["originals"].values()) <= {"single coin makes change", "several coins make change",
                                                       "no coins make zero change"}


@pytest.mark.parametrize("literal", ['"Hello, World"', "'a'", "0", "1", "-3", "7u", "255", "true", '""', '" "'])
def test_a_changed_literal_is_of_its_kind_and_unequal_even_ignoring_case(literal):
    import random
    for seed in range(20):
        new = cc.mutate(random.Random(seed), literal, ["coin"])
        assert new != literal and new.lower() != literal.lower()
        if literal[0] in "-0123456789":  # toward zero, never past it: in the range and sign of the other side
            was, now = int(literal.rstrip("u")), int(new.rstrip("u"))
            assert (0 <= now < was or was < now <= 0) if was else now == 1
            assert new.endswith("u") == literal.endswith("u")
        else:
            assert new[0] == literal[0] or {literal, new} == {"true", "false"}
    for odd in ("0x1f", "017", "1'000", "5_km", "2.5", "1e3", "12345678901"):
        with pytest.raises(ValueError):
            cc.mutate(random.Random(0), odd, [])


@pytest.mark.parametrize("odd", [
    TESTS.replace("// TEST_CASE", "/* TEST_CASE"),  # an unterminated comment
    TESTS + 'TEST_CASE_METHOD(Fixture, "a fixture case") { REQUIRE(1 == f()); }\n',
    TESTS + "#if defined(X)\n",
    TESTS + 'TEST_CASE("unbalanced") {\n',
    TESTS.replace('"dime and nickel"', '"dime and nickel'),
])
def test_an_odd_file_gets_the_plain_canaries_at_its_end_still_named_from_its_words(odd):
    out, manifest = cc.with_canaries(odd, FAIL, OK)
    assert out.startswith(odd)
    assert manifest["originals"] == {} and len(manifest["fail"]) == 8 and len(manifest["pass"]) == 1
    words = {w for n in re.findall(r'TEST_CASE\s*\(\s*"([^"]*)"', odd) for w in n.split()}
    for name in [manifest["fail"][0].split("/")[0], manifest["pass"][0]]:
        assert set(name.split()) <= words and f'TEST_CASE("{name}"' in out[len(odd):]


def test_snake_case_names_give_snake_case_canaries_and_an_empty_file_still_gets_canaries():
    text = '#include "test/catch.hpp"\nTEST_CASE("can_sort_data") {\n\tREQUIRE(f(1) == 2);\n}\n' \
           'TEST_CASE("can_sort_single_number") {\n\tREQUIRE(f(2) == 4);\n}\n'
    out, manifest = cc.with_canaries(text, FAIL, OK)
    assert re.fullmatch(r"[a-z_0-9]+", manifest["pass"][0]) and "_" in manifest["pass"][0]
    assert "\tREQUIRE(std::string(" in out  # the file's own indent
    out, manifest = cc.with_canaries("", FAIL, OK)
    assert len(manifest["fail"]) == 8 and manifest["pass"] and "TEST_CASE" in out


def test_main_rewrites_the_first_file_and_writes_a_manifest_only_its_owner_reads(tmp_path):
    test, other, manifest = tmp_path / "change_test.cpp", tmp_path / "more_test.cpp", tmp_path / "m.canaries"
    test.write_text(TESTS)
    other.write_text('TEST_CASE("coins make change") { REQUIRE(1 == g()); }\n')
    cc.main([str(test), str(other), FAIL, OK, str(manifest)])
    data = json.loads(manifest.read_text())
    assert os.stat(manifest).st_mode & 0o777 == 0o600
    assert data == cc.with_canaries(TESTS, FAIL, OK, ["coins make change"])[1]
    assert test.read_text() == cc.with_canaries(TESTS, FAIL, OK, ["coins make change"])[0]
    assert other.read_text().count("TEST_CASE") == 1
    link = tmp_path / "link.canaries"
    link.symlink_to(tmp_path / "elsewhere")
    test.write_text(TESTS)
    with pytest.raises(OSError):
        cc.main([str(test), FAIL, OK, str(link)])
    assert not (tmp_path / "elsewhere").exists()


def test_the_host_matches_catchs_junit_ids_by_their_last_part():
    _, manifest = cc.with_canaries(TESTS, FAIL, OK)
    canaries = Canaries(tuple(manifest["fail"]), tuple(manifest["pass"]), manifest["originals"], "leaf")
    own = [t.name for t in cc.parse(TESTS).tests if t.active]
    ids = {f"change.global::{n}": "passed" for n in own}
    expected = list(ids)
    honest = dict(ids)
    honest.update({f"change.global::{n}": "failed" for n in manifest["fail"]})
    honest.update({f"change.global::{n}": "passed" for n in manifest["pass"]})
    assert decide(honest, expected, canaries, 10)[0] == "pass"
    forged = dict(honest)
    mutant = next(iter(manifest["originals"]))
    forged[f"change.global::{mutant}"] = "passed"
    verdict, evidence, _, _ = decide(forged, expected, canaries, 9)
    assert verdict == "tampered" and any("with its expected value changed" in e for e in evidence), evidence
    assert mutant not in "".join(evidence)
    disarmed = dict(honest)
    disarmed[f"change.global::{manifest['fail'][3]}"] = "passed"  # one kind of assertion let through
    assert decide(disarmed, expected, canaries, 9)[0] == "tampered"


def test_names_prints_the_manifests_names_one_a_line(tmp_path, capsys):
    test, manifest = tmp_path / "change_test.cpp", tmp_path / "m.canaries"
    test.write_text(TESTS)
    cc.main([str(test), FAIL, OK, str(manifest)])
    data = json.loads(manifest.read_text())
    cc.main(["--names", str(manifest)])
    assert capsys.readouterr().out.splitlines() == data["fail"] + data["pass"]
