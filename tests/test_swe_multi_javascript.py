"""The swe-multi tier's JavaScript runner: the dataset's test names mapped to report ids (each SWE-bench log
parser's naming), the framework of a repository, the report as lab's mocha reporter writes it read by
``rules.reports.parse_jest_json``; and, through doit and the real Docker engine, the mocha fixture made at test
time (tests/fixture_swe_multi_javascript.py): environment image (Node and mocha fetched at build time), the proof
by test identity with the canaries, SWE-bench predictions graded (gold resolves, empty does not, a patch that
neuters node's assert or ends the run early, or edits the held-out test, does not)."""
from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
from conftest import run_doit  # noqa: E402
from fixture_swe_multi_javascript import ADD_TEST, F2P, P2P, TESTS, make_calcjs, write_js_suite  # noqa: E402
from fixture_swe_multi import evaluate  # noqa: E402

from rules import reports  # noqa: E402
from rules.tier import Rejected  # noqa: E402
from rules.tiers.swe_multi import javascript  # noqa: E402

JEST_FILE = """import { Range } from 'immutable';

describe('Range', () => {
  it('fixed range', () => {
    expect(Range(0, 3).size).toBe(3);
  });
  check.it('includes first, excludes last', [gen.int], (from) => {
    expect(from).toBe(from);
  });
  describe('slice', () => {
    it("works even on filtered sequence", () => {});
  });
});
"""


def test_titles_and_the_three_namings_of_swe_bench_log_parsers():
    titles = javascript.titles_of(JEST_FILE)
    assert titles == [["Range", "fixed range"], ["Range", "includes first, excludes last"],
                      ["Range", "slice", "works even on filtered sequence"]]
    path = titles[2]
    assert javascript.dataset_name(path, "space") == "Range slice works even on filtered sequence"  # mocha TAP
    assert javascript.dataset_name(path, "arrow") == "Range > slice > works even on filtered sequence"  # jest jq
    assert javascript.dataset_name(path, "title") == "works even on filtered sequence"  # jest --verbose


def test_locate_maps_each_dataset_name_to_its_report_id_and_rejects_what_no_title_gives():
    files = {"__tests__/Range.ts": JEST_FILE}
    found = javascript.locate("immutable-js/immutable-js", "2006", ["works even on filtered sequence", "fixed range"],
                              ["works even on filtered sequence"], files, ["__tests__/Range.ts"])
    assert found.ids == {"works even on filtered sequence": "__tests__/Range.ts › Range slice works even on "
                                                            "filtered sequence",
                         "fixed range": "__tests__/Range.ts › Range fixed range"}
    assert found.framework.name == "jest" and found.canary_file == "__tests__/Range.ts"
    with pytest.raises(Rejected, match="no plain test title of __tests__/Range.ts gives: Range fixed range"):
        javascript.locate("immutable-js/immutable-js", "2006", ["Range fixed range"], ["Range fixed range"], files,
                          ["__tests__/Range.ts"])
    twice = JEST_FILE.replace("describe('slice'", "describe('fixed'").replace('"works even on filtered sequence"',
                                                                            "'range'")
    with pytest.raises(Rejected, match="more than one test gives: Range fixed range"):  # mocha's naming: spaces
        javascript.locate("x/y", "1", ["Range fixed range"], ["Range fixed range"], {"a.test.ts": twice}, ["a.test.ts"],
                          javascript.Framework("jest", r"\.test\.ts$", "expect"))
    # mocha's full titles over one run file: a title built at run time (a loop's template) is that file's
    loop = "const assert = require('assert');\nfor (const t of ['gzip']) {\n  describe(`${t} decompression`, () => {\n" \
           "    it('works', () => {});\n  });\n}\n"
    found = javascript.locate("axios/axios", "5892", ["gzip decompression works"], ["gzip decompression works"],
                              {"test/unit/http.js": loop}, ["test/unit/http.js"])
    assert found.ids == {"gzip decompression works": "test/unit/http.js › gzip decompression works"}
    with pytest.raises(Rejected, match="no plain test title of test/unit/a.js, test/unit/b.js gives: x y"):
        javascript.locate("axios/axios", "5892", ["x y"], ["x y"], {"test/unit/a.js": loop, "test/unit/b.js": loop},
                          ["test/unit/a.js", "test/unit/b.js"])
    with pytest.raises(Rejected, match="binds no `assert`"):
        javascript.locate("axios/axios", "5085", ["Range fixed range"], ["Range fixed range"],
                          {"test/unit/a.js": JEST_FILE}, ["test/unit/a.js"])


def test_framework_of_a_repository_outside_the_table_is_the_one_its_package_json_lists():
    assert javascript.framework_of("axios/axios", None).name == "mocha"
    assert javascript.framework_of("x/y", b'{"devDependencies": {"mocha": "10"}}').name == "mocha"
    assert javascript.framework_of("x/y", b'{"devDependencies": {"mocha": "10", "jest": "29"}}').name == "jest"
    assert javascript.framework_of("x/y", b"not json").name == "jest"


def test_the_mocha_reporters_report_reads_by_the_ids_locate_gives(tmp_path):
    source = TESTS % ADD_TEST
    found = javascript.locate("lab/calcjs", "0.1", [F2P] + P2P, [F2P], {"test/calc.test.js": source},
                              ["test/calc.test.js"], javascript.MOCHA)
    # as templates/swe_multi/javascript/mocha-report.js writes it: the file absolute, fullTitle, a test's last state
    report = {"testResults": [{"name": "/work/test/calc.test.js", "assertionResults": [
        {"fullName": "calc sub subtracts small numbers", "title": "subtracts small numbers", "status": "passed"},
        {"fullName": "calc sub subtracts into negatives", "title": "subtracts into negatives", "status": "pending"},
        {"fullName": "calc add adds two numbers", "title": "adds two numbers", "status": "failed"}]}]}
    (tmp_path / "jest.json").write_text(json.dumps(report))
    parsed = reports.parse("jest-json", tmp_path, {"test_files": ["test/calc.test.js"]})
    assert {found.ids[n]: parsed.tests[found.ids[n]] for n in [F2P] + P2P} == {
        "test/calc.test.js › calc add adds two numbers": reports.FAILED,
        "test/calc.test.js › calc sub subtracts small numbers": reports.PASSED,
        "test/calc.test.js › calc sub subtracts into negatives": reports.SKIPPED}


@pytest.fixture(scope="module")
def js_home(tmp_path_factory):
    """A lab home with the JavaScript fixture, generated once (environment image, renders, proofs)."""
    root = tmp_path_factory.mktemp("multijs")
    make_calcjs(root / "src")
    home = root / "home"
    write_js_suite(home, root / "src")
    return home, run_doit(home, "gen:swe-multi")


@pytest.mark.docker
def test_js_proof_keeps_the_sound_instance_by_report_id_and_rejects_the_other(js_home):
    home, res = js_home
    assert res.code == 0, res.stdout[-3000:] + res.stderr[-3000:]
    manifest = json.loads((home / "evals" / "swe-multi" / "manifest.json").read_text())
    status = {t["task"]: t for t in manifest["tasks"]}
    assert status["lab__calcjs-1"]["status"] == "kept", status["lab__calcjs-1"]
    assert status["lab__calcjs-2"]["status"] == "rejected"
    # a mocha full title over one file is taken as that file's test: the proof finds it never reported
    assert "calc add adds three numbers" in status["lab__calcjs-2"]["reason"], status["lab__calcjs-2"]
    proof = json.loads((home / ".lab" / "build" / "swe-multi" / "lab__calcjs-1" / "proof.json").read_text())
    assert sorted(proof["tests"]) == sorted(f"test/calc.test.js › {n}" for n in [F2P] + P2P)
    assert [r["verdict"] for r in proof["gold_runs"]] == ["pass"] * 3
    assert proof["stub"]["evidence"] == [f"1 test(s) did not pass: test/calc.test.js › {F2P}"]
    stamp = json.loads((home / ".lab" / "images" / "swe-multi-env-calcjs-0.1.json").read_text())
    assert stamp["node"] == "v" + javascript.NODE["20"]


def _calc_patch(body: str) -> str:
    lines = body.rstrip("\n").split("\n")
    old = ["'use strict';", "", "exports.add = (a, b) => a - b;", "", "exports.sub = (a, b) => a - b;"]
    return ("diff --git a/lib/calc.js b/lib/calc.js\n--- a/lib/calc.js\n+++ b/lib/calc.js\n"
            f"@@ -1,{len(old)} +1,{len(lines)} @@\n" + "".join(f"-{x}\n" for x in old)
            + "".join(f"+{x}\n" for x in lines))


@pytest.mark.docker
def test_js_predictions_gold_resolves_empty_and_forgeries_do_not(js_home, tmp_path):
    home, res = js_home
    assert res.code == 0
    gold = evaluate(home, "gold")
    assert gold["resolved"] == ["lab__calcjs-1"] and gold["total_instances"] == 1
    rep = gold["instances"]["lab__calcjs-1"]
    assert rep["tests_status"]["FAIL_TO_PASS"] == {"success": [F2P], "failure": []}, rep
    assert rep["tests_status"]["PASS_TO_PASS"] == {"success": P2P, "failure": []}, rep
    empty = evaluate(home, "empty")
    assert empty["resolved"] == [] and empty["empty_patch"] == ["lab__calcjs-1"]
    forgeries = {
        # node's assert made to pass anything: the failing canary passes too
        "neuter": _calc_patch("'use strict';\nrequire('assert').strictEqual = () => {};\n"
                              "exports.add = (a, b) => a - b;\nexports.sub = (a, b) => a - b;\n"),
        # the run ended with success as soon as the tests load: no report, no canary
        "exit0": _calc_patch("'use strict';\nsetImmediate(() => process.exit(0));\n"
                             "exports.add = (a, b) => a + b;\nexports.sub = (a, b) => a - b;\n"),
        # the held-out test rewritten to pass anything: laid back from the base and the test patch
        "edit": ("diff --git a/test/calc.test.js b/test/calc.test.js\n--- a/test/calc.test.js\n"
                 "+++ b/test/calc.test.js\n@@ -1,2 +1,3 @@\n 'use strict';\n+it('calc add adds two numbers', () => {});\n"
                 " const assert = require('assert');\n"),
    }
    for name, patch in forgeries.items():
        (tmp_path / f"{name}.jsonl").write_text(json.dumps(
            {"instance_id": "lab__calcjs-1", "model_name_or_path": name, "model_patch": patch}) + "\n")
        out = evaluate(home, str(tmp_path / f"{name}.jsonl"))
        assert out["unresolved"] == ["lab__calcjs-1"], (name, out["instances"])


def test_a_langs_selection_that_keeps_no_instance_says_so(tmp_path):
    make_calcjs(tmp_path / "src")
    home = tmp_path / "home"
    write_js_suite(home, tmp_path / "src")
    res = run_doit(home, "gen:swe-multi", "langs=go", timeout=120)
    said = res.stdout + res.stderr
    assert res.code != 0 and "langs=go: none of the 2 instances chosen is in Go; nothing to do" in said, said[-2000:]
    assert not (home / "evals" / "swe-multi" / "manifest.json").exists()
