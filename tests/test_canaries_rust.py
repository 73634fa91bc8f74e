"""The Rust track's canaries (templates/images/grader/lab_grader/rust_canaries.py) and how the host decides with
their manifest (rules/grade.py: Canaries, decide): named and placed like the exercise's own ``#[test]`` fns,
copies of its tests with an expected value changed, only where the changed assertion surely runs, and a
fallback to the plain canaries on a file the writer cannot follow. No compiler here: the rewritten files are
read back with the writer's own tokenizer (the docker test in tests/test_forgeries.py compiles and runs them)."""
from __future__ import annotations

import json
import re
import sys
import textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "templates" / "images" / "grader"))
from lab_grader import rust_canaries as rc  # noqa: E402

from rules.grade import MANIFEST, Canaries, canaries_of, decide  # noqa: E402
from rules.reports import scrub  # noqa: E402

FAIL, OK = "k0123456789a", "kba987654321"
TESTS = textwrap.dedent('''\
    use say::*;

    #[test]
    fn zero_is_said() {
        let input = 0;
        let output = encode(input);
        let expected = "zero";
        assert_eq!(output, expected);
    }

    #[test]
    #[ignore]
    fn fourteen_is_said() {
        assert_eq!(encode(14), "fourteen");
    }

    #[test]
    #[ignore]
    fn count_of_words() {
        assert_eq!(3, words(encode(123)));
    }

    #[test]
    #[should_panic]
    fn too_big_panics() {
        assert_eq!(encode(u64::MAX), "never");
    }

    #[test]
    fn a_branch_is_never_copied() {
        if encode(1) == "one" {
            assert_eq!(encode(1), "one");
        }
    }

    #[test]
    fn literal_against_literal_is_never_copied() {
        assert_eq!(1, 1);
    }

    #[test]
    fn an_early_return_is_never_copied() -> Result<(), String> {
        assert_eq!(encode(2), "two");
        Ok(())
    }

    mod large {
        use super::*;

        #[test]
        fn one_million_is_said() {
            assert_eq!(encode(1_000_000), "one million");
        }
    }
    ''')


def scopes(source: str) -> list[rc.Scope]:
    toks = rc.tokenize(source)
    return rc.scopes_of(toks, rc.matching(toks))


def ids(source: str, target: str = "say") -> set[str]:
    return {"::".join((target,) + t.path + (t.name,)) for s in scopes(source) for t in s.tests}


def test_the_tests_and_their_ids_are_read_as_libtest_names_them():
    assert ids(TESTS) == {f"say::{n}" for n in ("zero_is_said", "fourteen_is_said", "count_of_words",
                                                "too_big_panics", "a_branch_is_never_copied",
                                                "literal_against_literal_is_never_copied",
                                                "an_early_return_is_never_copied")} | {
        "say::large::one_million_is_said"}


def test_only_plain_assert_eq_statements_against_a_literal_are_candidates():
    toks = rc.tokenize(TESTS)
    pairs = rc.matching(toks)
    found = {t.name: [toks[a].text for a, _ in rc.candidates(toks, pairs, t)] for s in rc.scopes_of(toks, pairs)
             for t in s.tests}
    assert found == {"zero_is_said": ['"zero"'], "fourteen_is_said": ['"fourteen"'], "count_of_words": ["3"],
                     "too_big_panics": [], "a_branch_is_never_copied": [],
                     "literal_against_literal_is_never_copied": [], "an_early_return_is_never_copied": [],
                     "one_million_is_said": ['"one million"']}


def test_canaries_are_fresh_test_fns_named_from_the_tests_words_and_the_manifest_names_them_by_id():
    for seed in range(20):
        out, manifest = rc.with_canaries(TESTS, "say", f"k{seed:011x}", OK)
        assert manifest["match"] == "id"
        added = ids(out) - ids(TESTS)
        assert added == set(manifest["fail"]) | set(manifest["pass"])
        assert len(manifest["fail"]) == 1 + len(manifest["originals"]) and len(manifest["pass"]) == 1
        assert 1 <= len(manifest["originals"]) <= rc.MUTANTS
        assert f"k{seed:011x}" not in out and OK not in out
        words = set(rc.words_of([t.name for s in scopes(TESTS) for t in s.tests]))
        for test_id in added:
            name = test_id.rsplit("::", 1)[-1]
            assert not re.fullmatch(r"k[0-9a-f]{11}", name)
            assert set(name.split("_")) <= words | set(rc.FALLBACK_WORDS), name
            assert not any(name in t for t in re.findall(r"\w+", TESTS)), "a fresh name is part of no name"
        for copy, original in manifest["originals"].items():
            assert original in ids(TESTS)
            assert copy.rsplit("::", 1)[0] == original.rsplit("::", 1)[0], "a copy stays in its test's mod"


def test_a_copy_is_its_test_with_one_expected_value_changed():
    for seed in range(20):
        out, manifest = rc.with_canaries(TESTS, "say", FAIL, f"k{seed:011x}")
        for copy, original in manifest["originals"].items():
            def body(source, name):
                m = re.search(r"fn " + name + r"\(\) \{\n(.*?)\n\s*\}\n", source, re.S)
                return m.group(1)
            a, b = body(TESTS, original.rsplit("::", 1)[-1]), body(out, copy.rsplit("::", 1)[-1])
            diff = [(x, y) for x, y in zip(a.split("\n"), b.split("\n")) if x != y]
            assert len(a.split("\n")) == len(b.split("\n")) and len(diff) == 1, (a, b)
            assert "assert_eq!" in diff[0][0] or "let expected" in diff[0][0]
        # the plain failing canary fails through assert_eq! on two numbers that differ, the passing one not
        bad = manifest["fail"][0].rsplit("::", 1)[-1]
        good = manifest["pass"][0].rsplit("::", 1)[-1]
        x, y = map(int, re.search(r"fn " + bad + r"\(\) \{\n\s*assert_eq!\((\d+), (\d+)\);", out).groups())
        assert x != y
        x, y = map(int, re.search(r"fn " + good + r"\(\) \{\n\s*assert_eq!\((\d+), (\d+)\);", out).groups())
        assert x == y


def test_the_draw_is_seeded_by_the_tokens():
    assert rc.with_canaries(TESTS, "say", FAIL, OK) == rc.with_canaries(TESTS, "say", FAIL, OK)
    draws = {json.dumps(rc.with_canaries(TESTS, "say", f"k{i:011x}", OK)[1]) for i in range(10)}
    assert len(draws) > 5


def test_changed_literals_differ_and_fit_the_original_type():
    import random
    rnd = random.Random(1)
    for src in ('255u8', '0', '-128', '"a\\nb"', '""', "'x'", "true", '"Hello, World!"'):
        toks = rc.tokenize(src)
        for _ in range(20):
            new = rc.changed(rnd, toks, (0, len(toks)), ["word"])
            assert new != src and new.lower() != src.lower()
            if src[-1].isdigit() or src.endswith("u8"):
                old, v = int(re.match(r"-?\d+", src).group()), int(re.match(r"-?\d+", new).group())
                assert abs(v) < abs(old) or (old == 0 and 0 < v <= 3)
                assert new.endswith("u8") == src.endswith("u8")


def test_a_file_that_touches_shared_state_gets_no_copies():
    source = TESTS.replace("use say::*;", "use say::*;\nuse std::fs;")
    for seed in range(10):
        assert rc.with_canaries(source, "say", FAIL, f"k{seed:011x}")[1]["originals"] == {}


def test_an_odd_file_falls_back_to_the_plain_canaries_named_from_its_tests():
    odd = ('#[test]\nfn empty_input_works() {\n    assert_eq!(f(""), 0);\n}\n'
           '/* never closed\n#[test]\nfn odd_case() {}\n')
    out, manifest = rc.with_canaries(odd, "odd", FAIL, OK)
    assert manifest["originals"] == {} and len(manifest["fail"]) == len(manifest["pass"]) == 1
    assert out.startswith(odd)
    for test_id in manifest["fail"] + manifest["pass"]:
        assert test_id.startswith("odd::")
        assert set(test_id[5:].split("_")) <= {"empty", "input", "works", "odd", "case"} | set(rc.FALLBACK_WORDS)
    for junk in ("", "fn (", "}}}", "'", "r#\"", "#[test] fn"):
        out, manifest = rc.with_canaries(junk, "junk", FAIL, OK)
        assert manifest["fail"] and manifest["pass"]


def test_main_writes_the_file_and_a_manifest_only_root_reads(tmp_path):
    tests = tmp_path / "tests"
    tests.mkdir()
    path, manifest = tests / "say.rs", tmp_path / MANIFEST
    path.write_text(TESTS)
    rc.main([str(path), FAIL, OK, str(manifest)])
    assert manifest.stat().st_mode & 0o777 == 0o600
    data = json.loads(manifest.read_text())
    assert ids(path.read_text()) - ids(TESTS) == set(data["fail"]) | set(data["pass"])
    c = canaries_of({"canaries": "manifest"}, tmp_path, (FAIL, OK))
    assert (c.match, list(c.fail), list(c.passing)) == ("id", data["fail"], data["pass"])
    assert c.originals == data["originals"]


def test_the_host_decides_with_ids_and_scrubs_the_names_libtest_prints():
    out, manifest = rc.with_canaries(TESTS, "say", FAIL, OK)
    c = Canaries(tuple(manifest["fail"]), tuple(manifest["pass"]), manifest["originals"], "id")
    honest = {i: "passed" for i in ids(TESTS)} | {i: "failed" for i in c.fail} | {i: "passed" for i in c.passing}
    assert decide(honest, sorted(ids(TESTS)), c, 101)[0] == "pass"
    anything = dict(honest) | {copy: "passed" for copy in c.originals}
    verdict, evidence, _, _ = decide(anything, sorted(ids(TESTS)), c, 101)
    assert verdict == "tampered" and any("with its expected value changed" in e for e in evidence)
    shown = "".join(f"test {i.split('::', 1)[1]} ... ok\n" for i in sorted(honest))
    left = scrub(shown, c.printed())
    assert left.count("\n") == len(ids(TESTS)) and not any(i.split("::", 1)[1] in left for i in c.names())
