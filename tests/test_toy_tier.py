"""A tier defined entirely under tests/ (tests/toy_tier/: its module, templates and suite.toml, declared with
``plugin = "toy:ToyTier"``) goes through lab as a user would drive it: ``doit gen:toy`` renders, proves and
publishes its tasks, ``doit run suite=toy agent=noop`` runs the baseline, ``doit report suite=toy`` reports it;
a stored trial is current, re-graded when only check.sh changed and run again when the prompt did. Nothing under
rules/ names the toy tier: what it needs from lab is the seam of rules/tier.py.
"""
from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
from conftest import AGENTS, run_doit  # noqa: E402
from fixture_toy import FREE, KEPT, REJECTED, make_toy_home  # noqa: E402

docker = pytest.mark.docker
PUBLISHED = KEPT + FREE


def _json(path: Path) -> dict:
    return json.loads(path.read_text())


def _said(res) -> str:
    return res.stdout[-3000:] + res.stderr[-3000:]


@pytest.fixture(scope="module")
def toy_home(tmp_path_factory, grader_image) -> Path:
    """A lab home with only the toy tier and the project's agents, generated and run once by noop."""
    home = tmp_path_factory.mktemp("toy") / "home"
    make_toy_home(home, AGENTS)
    res = run_doit(home, "gen:toy")
    assert res.code == 0, _said(res)
    res = run_doit(home, "run", "suite=toy", "agent=noop")
    assert res.code == 0, _said(res)
    return home


@docker
def test_gen_keeps_frees_and_rejects_with_the_topic_labels(toy_home):
    manifest = _json(toy_home / "evals" / "toy" / "manifest.json")
    status = {e["task"]: e for e in manifest["tasks"]}
    assert {t: e["status"] for t, e in status.items()} == {
        **{t: "kept" for t in KEPT}, **{t: "free" for t in FREE}, **{t: "rejected" for t in REJECTED}}
    assert status["toy-broken"]["reason"] == "malformed topic: missing test_broken.py"
    assert {t: e["topic"] for t, e in status.items()} == {t: t[len("toy-"):] for t in status}
    assert manifest["published"] == len(PUBLISHED)
    assert status["toy-double"]["test_ids"] == ["test_double::test_1", "test_double::test_2"]
    for task in PUBLISHED:
        assert (toy_home / "evals" / "toy" / "tasks" / task / "tests.json").is_file()
        assert (toy_home / "evals" / "toy" / "answers" / task).is_dir()
    assert not (toy_home / "evals" / "toy" / "tasks" / "toy-broken").exists()
    listed = run_doit(toy_home, "scenarios", "suite=toy")
    assert listed.code == 0 and "toy-identity" in listed.stdout and "identity" in listed.stdout.split("toy-identity")[1]


@docker
def test_noop_passes_only_the_free_task_and_the_report_says_so(toy_home):
    runs = toy_home / "evals" / "toy" / "runs" / "noop"
    results = {t: _json(runs / t / "result.json") for t in PUBLISHED}
    assert {t: r["status"] for t, r in results.items()} == {**{t: "fail" for t in KEPT}, **{t: "pass" for t in FREE}}
    assert {r["tier"] for r in results.values()} == {"toy"}
    res = run_doit(toy_home, "report", "suite=toy")
    assert res.code == 0, _said(res)
    report = _json(toy_home / "evals" / "toy" / "report.json")
    assert report["tasks"]["topics"] == {"double": 1, "identity": 1, "square": 1}
    assert report["tasks"]["free_tasks"] == list(FREE)
    noop = next(a for a in report["agents"] if a["run"] == "noop")
    assert (noop["pass_1"]["count"], noop["pass_1"]["of"]) == (1, 3)
    assert (noop["without_free"]["pass_1"]["count"], noop["without_free"]["pass_1"]["of"]) == (0, 2)
    assert {k: v["pass_1"]["count"] for k, v in noop["topics"].items()} == {"double": 0, "identity": 1, "square": 0}
    assert noop["finished"] == 3 and noop["errors"] == 0 and noop["stale"] == 0
    md = (toy_home / "evals" / "toy" / "report.md").read_text()
    assert "| run | pass@1 | pass@1 over repeats | pass@1 w/o free |" in md and "## pass@1 per topic" in md


@docker
def test_a_stored_trial_is_current_regraded_for_check_sh_and_run_again_for_its_prompt(toy_home):
    trials = {f"eval:noop/{t}" for t in PUBLISHED}
    again = run_doit(toy_home, "run", "-r", "console", "suite=toy", "agent=noop")  # console: up-to-date lines too
    assert again.code == 0 and trials <= again.skipped and not again.executed("eval:noop/"), _said(again)
    tier = toy_home / "evals" / "toy"
    with open(tier / "templates" / "check.sh.j2", "a") as f:
        f.write("# a grading change only\n")
    with open(tier / "source" / "double" / "about.md", "a") as f:
        f.write("\nA change the agent sees.\n")
    gen = run_doit(toy_home, "gen:toy")
    assert gen.code == 0 and {f"prove:toy/{t}" for t in PUBLISHED} <= gen.ran, _said(gen)
    res = run_doit(toy_home, "run", "suite=toy", "agent=noop")
    assert res.code == 0 and res.executed("eval:noop/") == trials, _said(res)
    results = {t: _json(tier / "runs" / "noop" / t / "result.json") for t in PUBLISHED}
    assert {t: r["graded"]["regraded"] for t, r in results.items()} == {
        "toy-double": False, "toy-square": True, "toy-identity": True}
    assert "toy-square: fail" in res.stdout and "(re-graded, the agent did not run)" in res.stdout
    assert {t: r["status"] for t, r in results.items()}["toy-identity"] == "pass"
