"""The JavaScript track's canaries (templates/images/grader/lab_grader/javascript_canaries.py) and how the host
decides with their manifest and scrubs jest's output of them (rules/grade.py: Canaries, canaries_of, decide;
rules/reports.py: scrub): named and placed like the exercise's own jest tests, copies of its tests with an
expected value changed that an honest solution fails, a verdict of ``tampered`` when a result passed both a test
and its changed copy. The rewritten test files are run with this machine's node under a small stand-in for
jest's describe/test/expect (skipped without node)."""
from __future__ import annotations

import json
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "templates" / "images" / "grader"))
from lab_grader import javascript_canaries as jc  # noqa: E402

from rules.grade import Canaries, canaries_of, decide  # noqa: E402
from rules.reports import scrub  # noqa: E402

FILE = "change.spec.js"
TESTS = textwrap.dedent('''\
    const { makeChange } = require('./change');

    describe('Change', () => {
      test('single coin change', () => {
        expect(makeChange(25, [1, 5, 10, 25])).toEqual([25]);
      });

      test('multiple coin change', () => {
        const expected = [5, 10];
        expect(makeChange(15, [1, 5, 10, 25])).toEqual(expected);
      });

      describe('small coins', () => {
        test('change with lilliputian coins', () => {
          expect(makeChange(23, [1, 4, 15, 20, 50])).toEqual([4, 4, 15]);
        });

        test('no coins make zero change', () => {
          expect(makeChange(0, [1, 5])).toStrictEqual([]);
        });
      });

      test('error message for negative change', () => {
        expect(() => makeChange(-5, [1, 2, 5])).toThrow(new Error("target can't be negative"));
      });

      test('literal against literal is never copied', () => {
        expect(1).toEqual(1);
      });

      test('a branch is never copied', () => {
        if (makeChange(1, [1])) {
          expect(makeChange(1, [1])).toEqual([1]);
        }
      });

      test('a negated matcher is never copied', () => {
        expect(makeChange(1, [1])).not.toEqual([2]);
      });

      test('nothing after a return is copied', () => {
        return;
        expect(makeChange(1, [1])).toEqual([1]);
      });

      test('a name used twice is never copied', () => {
        const coins = [1];
        expect(makeChange(1, coins)).toEqual(coins);
      });
    });
    ''')
COPYABLE = {"single coin change", "multiple coin change", "change with lilliputian coins",
            "no coins make zero change"}
RIGHT = textwrap.dedent('''\
    exports.makeChange = (target, coins) => {
      if (target < 0) throw new Error("target can't be negative");
      const best = [[]];
      for (let t = 1; t <= target; t++) {
        best[t] = null;
        for (const c of coins) {
          const rest = best[t - c];
          if (c <= t && rest && (!best[t] || rest.length + 1 < best[t].length)) best[t] = [c, ...rest];
        }
      }
      return best[target].slice().sort((a, b) => a - b);
    };
    ''')
# a result equal to anything, on jest's own terms: an asymmetric matcher that says yes to every value
ALWAYS_EQUAL = "exports.makeChange = () => ({ asymmetricMatch: () => true });\n"
# enough of jest for these files: describe/test/it, beforeEach, expect's toEqual/toStrictEqual/toBe/not/toThrow
# (deep equality with asymmetric matchers, as jest's); prints {fullName: "passed" | "failed"} as JSON
JEST = textwrap.dedent('''\
    const results = {}, path = [], hooks = [[]];
    const eq = (a, b) => {
      if (a && typeof a.asymmetricMatch === 'function') return a.asymmetricMatch(b);
      if (b && typeof b.asymmetricMatch === 'function') return b.asymmetricMatch(a);
      if (Object.is(a, b)) return true;
      if (!a || !b || typeof a !== 'object' || typeof b !== 'object') return false;
      const ka = Object.keys(a), kb = Object.keys(b);
      return ka.length === kb.length && ka.every((k) => eq(a[k], b[k]));
    };
    const matchers = (got, not) => {
      const check = (ok, what) => { if (ok === not) throw new Error(what); };
      return {
        toEqual: (want) => check(eq(got, want), 'toEqual'),
        toStrictEqual: (want) => check(eq(got, want), 'toStrictEqual'),
        toBe: (want) => check(Object.is(got, want), 'toBe'),
        toThrow: () => { let threw = false; try { got(); } catch (e) { threw = true; } check(threw, 'toThrow'); },
      };
    };
    global.expect = (got) => Object.assign(matchers(got, false), { not: matchers(got, true) });
    global.beforeEach = (fn) => hooks[hooks.length - 1].push(fn);
    global.describe = (title, fn) => { path.push(title); hooks.push([]); fn(); hooks.pop(); path.pop(); };
    global.test = global.it = (title, fn) => {
      const name = [...path, title].join(' ');
      try { hooks.flat().forEach((h) => h()); fn(); results[name] = 'passed'; } catch (e) { results[name] = 'failed'; }
    };
    process.on('exit', () => console.log(JSON.stringify(results)));
    ''')


def rewritten(source: str = TESTS, fail: str = "k0123456789a", ok: str = "kba987654321") -> tuple[str, dict]:
    return jc.with_canaries(source, fail, ok, FILE)


def run(tmp_path: Path, spec: str, solution: str) -> dict[str, str]:
    """The ``FILE › fullName`` → status of ``spec`` run under the stand-in with ``solution`` as ./change."""
    if shutil.which("node") is None:
        pytest.skip("no node on this machine")
    (tmp_path / "jest.js").write_text(JEST)
    (tmp_path / "change.js").write_text(solution)
    (tmp_path / FILE).write_text(spec)
    out = subprocess.run(["node", "-r", str(tmp_path / "jest.js"), str(tmp_path / FILE)], capture_output=True,
                         text=True, timeout=60, check=True).stdout
    return {f"{FILE} › {k}": v for k, v in json.loads(out.strip().splitlines()[-1]).items()}


def test_canaries_are_named_from_the_tests_words_and_placed_among_them(tmp_path):
    text, manifest = rewritten()
    assert manifest["match"] == "id" and len(manifest["fail"]) == 3 and len(manifest["pass"]) == 1
    assert set(manifest["originals"]) <= set(manifest["fail"]) and len(manifest["originals"]) == 2
    words = set(" ".join(jc.words_of([ln.split("'")[1] for ln in TESTS.splitlines() if "test('" in ln])).split())
    assert len(manifest["shown"]) == 4
    for title in manifest["shown"]:
        assert title.lower() not in TESTS.lower(), "a canary's title is found nowhere in the file"
        assert "k0123456789a" not in title and "kba987654321" not in title
        assert set(title.split()) <= words | set(jc.FALLBACK_WORDS)
        assert f"test('{title}', () => {{" in text, "written as the file's own tests are"
    ids = run(tmp_path, text, RIGHT)
    for name in manifest["fail"] + manifest["pass"]:
        assert name in ids, (name, sorted(ids))
        assert name.split(" › ", 1)[1].startswith("Change "), "inside the exercise's own describe"
    for original in manifest["originals"].values():
        title = original.split(" › ", 1)[1].replace("small coins ", "")[len("Change "):]
        assert original in ids and title in COPYABLE
    lines = iter(text.splitlines())
    assert all(line in lines for line in TESTS.splitlines()), "the file's own lines all kept, in their order"


def test_the_draw_follows_its_seed():
    assert rewritten() == rewritten()
    assert rewritten()[1] != rewritten(fail="kfffffffffff")[1]


def test_only_assertions_that_surely_run_with_a_computed_value_are_copied():
    toks = jc.tokens_of(TESTS)
    top = jc.Block([])
    jc.read_block(TESTS, toks, TESTS.split("\n"), 0, len(toks), top)
    copyable = {t.title for b in jc._all_blocks(top) for t in b.tests if t.body and jc.candidates(toks, t.body)}
    assert copyable == COPYABLE
    seen = set()
    for seed in range(30):
        seen |= {v.split(" › ", 1)[1] for v in rewritten(fail=f"k{seed:011x}")[1]["originals"].values()}
    assert {s.replace("Change small coins ", "").replace("Change ", "") for s in seen} == COPYABLE


@pytest.mark.parametrize("seed", range(4))
def test_a_right_solution_fails_every_copy_and_a_result_equal_to_anything_passes_them(tmp_path, seed):
    text, manifest = rewritten(fail=f"k{seed:011x}")
    canaries = canaries_of({"canaries": "manifest"}, _manifest_dir(tmp_path, manifest), ("x", "y"))
    right = run(tmp_path, text, RIGHT)
    assert all(right[m] == "failed" for m in manifest["fail"]) and all(right[p] == "passed" for p in manifest["pass"])
    real = sorted(i for i in right if not canaries.owns(i) and right[i] == "passed")
    verdict, evidence, _, _ = decide(right, real, canaries, 1)
    assert verdict == "pass", evidence
    forged = run(tmp_path, text, ALWAYS_EQUAL)
    assert all(forged[m] == "passed" for m in manifest["originals"])
    verdict, evidence, _, _ = decide(forged, real, canaries, 1)
    assert verdict == "tampered" and any("with its expected value changed" in e for e in evidence), evidence
    assert not any(t in e for e in evidence for t in manifest["shown"]), "evidence never names a canary"


def _manifest_dir(tmp_path: Path, manifest: dict) -> Path:
    folder = tmp_path / "report"
    folder.mkdir(exist_ok=True)
    (folder / "canaries.json").write_text(json.dumps(manifest))
    return folder


def test_the_passing_canary_never_goes_where_a_hook_runs(tmp_path):
    source = textwrap.dedent('''\
        describe('Forth', () => {
          let forth;
          beforeEach(() => {
            forth = require('./change').makeChange(-1, []);
          });

          test('numbers just get pushed onto the stack', () => {
            expect(forth).toEqual([1]);
          });

          test('pushes negative numbers onto the stack', () => {
            expect(forth).toEqual([-1]);
          });
        });
        ''')
    for seed in range(10):
        text, manifest = rewritten(source, fail=f"k{seed:011x}")
        assert [p.split(" › ", 1)[1] in manifest["shown"] for p in manifest["pass"]] == [True], "top level"
        ids = run(tmp_path, text, RIGHT)  # the hook throws (a stub's would): every test of the block fails
        assert all(ids[p] == "passed" for p in manifest["pass"]) and all(ids[f] == "failed" for f in manifest["fail"])


@pytest.mark.parametrize("source", [
    "describe('Odd', () => {\n  test(`template ${1} title`, () => {\n    expect(`unterminated\n",
    "describe(title, () => {\n  test('plain words here', () => {});\n});\n",
    "// only a comment, no newline at its end",
    "test.each([[1, 2]])('adds %i', (a, b) => {\n  expect(a + 1).toBe(b);\n});\n",
])
def test_an_odd_file_falls_back_to_plain_canaries_at_its_end(tmp_path, source):
    text, manifest = rewritten(source)
    assert text.startswith(source) and manifest["originals"] == {}
    assert [len(manifest["fail"]), len(manifest["pass"])] == [1, 1]
    for name, title in zip(manifest["fail"] + manifest["pass"], manifest["shown"]):
        assert name == f"{FILE} › {title}" and f"test('{title}', () => {{" in text[len(source):]
    if source.startswith("//"):  # a file the stand-in runs: the canaries follow the comment, not in it
        ids = run(tmp_path, text, RIGHT)
        assert ids[manifest["fail"][0]] == "failed" and ids[manifest["pass"][0]] == "passed"


def test_main_writes_the_file_and_a_manifest_only_root_reads(tmp_path):
    spec, manifest = tmp_path / FILE, tmp_path / "canaries.json"
    spec.write_text(TESTS)
    jc.main([str(spec), "k0123456789a", "kba987654321", str(manifest)])
    assert manifest.stat().st_mode & 0o777 == 0o600
    data = json.loads(manifest.read_text())
    assert data["fail"][0].startswith(f"{spec} › ") and spec.read_text() != TESTS


def test_a_manifest_with_shown_titles_is_read_and_a_malformed_one_falls_back(tmp_path):
    _, manifest = rewritten()
    c = canaries_of({"canaries": "manifest"}, _manifest_dir(tmp_path, manifest), ("x", "y"))
    assert c.match == "id" and list(c.shown) == manifest["shown"] and set(c.printed()) >= set(manifest["shown"])
    (tmp_path / "report" / "canaries.json").write_text(json.dumps({**manifest, "shown": [3]}))
    assert canaries_of({"canaries": "manifest"}, tmp_path / "report", ("x", "y")) == Canaries.of_tokens(("x", "y"))


JEST_OUTPUT = textwrap.dedent('''\
    FAIL ./change.spec.js
      Change
        ✓ single coin change (2 ms)
        ✕ coin change with coins (3 ms)
        small coins
          ✕ change with lilliputian coins (1 ms)

      ● Change › coin change with coins

        expect(received).toEqual(expected) // deep equality

        Expected: [26]
        Received: [25]

          3 |   test('coin change with coins', () => {
        > 4 |     expect(makeChange(25, [1, 5, 10, 25])).toEqual([26]);

      ● Change › small coins › change with lilliputian coins

        Expected: [4, 4, 15]
        Received: [4, 4, 4, 11]

    Test Suites: 1 failed, 1 total
    Tests:       2 failed, 1 passed, 3 total
    ''')


def test_scrub_drops_a_canarys_whole_jest_failure_section():
    kept = scrub(JEST_OUTPUT, [f"{FILE} › Change coin change with coins", "coin change with coins"])
    assert "coin change with coins" not in kept and "[26]" not in kept and "toEqual([26])" not in kept
    assert "● Change › small coins › change with lilliputian coins" in kept and "[4, 4, 4, 11]" in kept
    assert "✓ single coin change" in kept and "Tests:       2 failed" in kept
