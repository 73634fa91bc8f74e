"""The swe-multi tier's Go runner through doit and the real Docker engine, on the Go fixture made at test time
(tests/fixture_swe_multi.py): the environment image (Go fetched through the Go module proxy at build time), the
proof by test identity (``go test -json`` read on the host, no network in the grading container, the canaries),
and SWE-bench predictions graded: gold resolves, empty resolves none, a patch that edits the held-out test or adds
a test file of its own to the package does not count."""
from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
from conftest import run_doit  # noqa: E402
from fixture_swe_multi import evaluate, make_calcgo, write_multi_suite  # noqa: E402


@pytest.fixture(scope="module")
def multi_home(tmp_path_factory):
    """A lab home with the Go fixture, generated once (environment image, renders, proofs) for the module."""
    root = tmp_path_factory.mktemp("multi")
    make_calcgo(root / "src")
    home = root / "home"
    write_multi_suite(home, root / "src")
    return home, run_doit(home, "gen:swe-multi")


@pytest.mark.docker
def test_go_proof_keeps_the_sound_instance_by_its_leaves_and_rejects_the_other(multi_home):
    home, res = multi_home
    assert res.code == 0, res.stdout[-3000:] + res.stderr[-3000:]
    manifest = json.loads((home / "evals" / "swe-multi" / "manifest.json").read_text())
    status = {t["task"]: t for t in manifest["tasks"]}
    assert status["lab__calcgo-1"]["status"] == "kept", status["lab__calcgo-1"]
    assert status["lab__calcgo-2"]["status"] == "rejected"
    assert "every FAIL_TO_PASS test passes already (TestSub)" in status["lab__calcgo-2"]["reason"]
    proof = json.loads((home / ".lab" / "build" / "swe-multi" / "lab__calcgo-1" / "proof.json").read_text())
    # TestSub stands for its two subtests; TestSub/small is itself
    assert proof["tests"] == ["TestAdd", "TestSub/negative", "TestSub/small"]
    assert [r["verdict"] for r in proof["gold_runs"]] == ["pass"] * 3
    assert proof["stub"]["evidence"] == ["1 test(s) did not pass: TestAdd"]
    assert proof["language"] == "go" and proof["repo"] == "lab/calcgo"
    stamp = json.loads((home / ".lab" / "images" / "swe-multi-env-calcgo-0.1.json").read_text())
    assert stamp["go"].startswith("go version go1.23.8 ")


@pytest.mark.docker
def test_go_predictions_gold_resolves_empty_and_forgeries_do_not(multi_home, tmp_path):
    home, res = multi_home
    assert res.code == 0
    gold = evaluate(home, "gold")
    assert gold["resolved"] == ["lab__calcgo-1"] and gold["total_instances"] == 1
    rep = gold["instances"]["lab__calcgo-1"]
    assert rep["tests_status"]["PASS_TO_PASS"] == {"success": ["TestSub", "TestSub/small"], "failure": []}
    # the gold patch carries no suspicion flag (the scan ran: [], not None)
    assert rep["suspicions"] == [] and gold["flagged"] == [] and gold["resolved_flagged"] == [], rep
    empty = evaluate(home, "empty")
    assert empty["resolved"] == [] and empty["empty_patch"] == ["lab__calcgo-1"]
    # the held-out test rewritten to pass anything, and a test file of the agent's own whose init ends the
    # test binary with success: both laid back or removed before the tests run, so neither resolves
    edit = ("diff --git a/calc/add_test.go b/calc/add_test.go\nnew file mode 100644\n--- /dev/null\n"
            "+++ b/calc/add_test.go\n@@ -0,0 +1,5 @@\n+package calc\n+\n+import \"testing\"\n+\n"
            "+func TestAdd(t *testing.T) {}\n")
    exit0 = ("diff --git a/calc/zz_test.go b/calc/zz_test.go\nnew file mode 100644\n--- /dev/null\n"
             "+++ b/calc/zz_test.go\n@@ -0,0 +1,5 @@\n+package calc\n+\n+import \"os\"\n+\n"
             "+func init() { os.Exit(0) }\n")
    for name, patch in (("edit", edit), ("exit0", exit0)):
        (tmp_path / f"{name}.jsonl").write_text(json.dumps(
            {"instance_id": "lab__calcgo-1", "model_name_or_path": name, "model_patch": patch}) + "\n")
        out = evaluate(home, str(tmp_path / f"{name}.jsonl"))
        assert out["unresolved"] == ["lab__calcgo-1"], (name, out["instances"])
        assert out["instances"]["lab__calcgo-1"]["tests_status"]["FAIL_TO_PASS"]["failure"] == ["TestAdd"]
