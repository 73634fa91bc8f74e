"""The report's numbers, checked against values computed by hand, and its pages (no Docker needed)."""
from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import pytest

from rules import report
from rules.report import TaskRow, build_report, cell, mcnemar_exact, render_pages, wilson

sys.path.insert(0, str(Path(__file__).resolve().parent))
from conftest import run_doit  # noqa: E402


def test_wilson_interval_matches_hand_computed_values():
    # 5 of 10: p = .5, z = 1.96: centre .5, half-width 1.96 * sqrt(.025 + 3.8415/400) / 1.38415 = .26341
    lo, hi = wilson(5, 10)
    assert lo == pytest.approx(0.23659, abs=1e-4) and hi == pytest.approx(0.76341, abs=1e-4)
    # 0 of 10: [0, z²/n / (1 + z²/n)] = [0, .38415 / 1.38415]
    lo, hi = wilson(0, 10)
    assert lo == 0.0 and hi == pytest.approx(0.27753, abs=1e-4)
    lo, hi = wilson(10, 10)
    assert lo == pytest.approx(0.72247, abs=1e-4) and hi == pytest.approx(1.0)
    # 1 of 4: centre (.25 + .48021) / 1.96035 = .37249, half 1.96 * sqrt(.046875 + .060025) / 1.96035 = .32685
    lo, hi = wilson(1, 4)
    assert lo == pytest.approx(0.04564, abs=1e-4) and hi == pytest.approx(0.69936, abs=1e-4)
    assert wilson(0, 0) is None


def test_mcnemar_exact_p_matches_the_binomial_by_hand():
    assert mcnemar_exact(0, 5) == pytest.approx(2 / 32)  # 2 * (1/2)^5
    assert mcnemar_exact(1, 9) == pytest.approx(2 * 11 / 1024)  # 2 * (C(10,0) + C(10,1)) / 2^10
    assert mcnemar_exact(2, 8) == pytest.approx(2 * 56 / 1024)  # 2 * (1 + 10 + 45) / 2^10
    assert mcnemar_exact(8, 2) == mcnemar_exact(2, 8)
    assert mcnemar_exact(3, 3) == 1.0  # capped at 1
    assert mcnemar_exact(0, 0) == 1.0


TASKS = [
    TaskRow("python-a", "python", "a", False), TaskRow("python-b", "python", "b", False),
    TaskRow("python-c", "python", "c", False), TaskRow("python-ledger", "python", "ledger", True),
    TaskRow("go-a", "go", "a", False), TaskRow("go-b", "go", "b", False),
]


def _res(status, passed_try=None, agent_seconds=10.0, seconds=12.0, usage=None, grade_timeout=False):
    return {"status": status, "passed_try": passed_try, "agent_seconds": agent_seconds, "seconds": seconds,
            "usage": usage, "tries": [{"grade": {"timed_out": grade_timeout}}]}


def _fixed():
    """Two agents on six tasks (one free): hand-checked numbers below."""
    results = {
        "alpha": {"python-a": _res("pass", 1, 10, usage={"tokens_sent": 100, "tokens_received": 10, "cost": 0.5}),
                  "python-b": _res("pass", 2, 20, usage={"tokens_sent": 200, "tokens_received": 20, "cost": 0.25}),
                  "python-c": _res("fail", None, 30, grade_timeout=True),
                  "python-ledger": _res("pass", 1, 40),
                  "go-a": _res("timeout", None, 50),
                  "go-b": _res("error")},
        "noop": {t.task: _res("pass" if t.free else "fail", 1 if t.free else None, 1, 2) for t in TASKS},
    }
    outcomes = {a: {t: cell(r) for t, r in rs.items()} for a, rs in results.items()}
    return build_report("aider", TASKS, outcomes, results, {"alpha": "alpha --go"}, generated="2025-01-02T03:04:05+00:00")


def test_report_counts_every_task_in_the_denominator():
    r = _fixed()
    alpha = next(a for a in r["agents"] if a["agent"] == "alpha")
    assert alpha["pass_1"]["count"] == 2 and alpha["pass_1"]["of"] == 6  # a, ledger
    assert alpha["pass_2"]["count"] == 3 and alpha["pass_2"]["rate"] == pytest.approx(0.5)  # + b on try 2
    assert alpha["pass_2"]["ci"] == pytest.approx([0.18761, 0.81239], abs=1e-4)  # Wilson 3/6
    assert alpha["without_free"] == {"tasks": 5, "pass_1": report.rate(1, 5), "pass_2": report.rate(2, 5)}
    assert alpha["languages"]["go"]["pass_2"]["count"] == 0 and alpha["languages"]["python"]["pass_2"]["count"] == 3
    assert (alpha["finished"], alpha["errors"], alpha["timeouts"], alpha["missing"]) == (5, 1, 1, 0)
    assert alpha["median_agent_seconds"] == 30  # median of 10, 20, 30, 40, 50 (the error is not finished)
    assert (alpha["tokens_sent"], alpha["tokens_received"], alpha["cost"]) == (300, 30, 0.75)
    lb = alpha["leaderboard"]
    assert (lb["pass_rate_1"], lb["pass_rate_2"], lb["test_cases"], lb["completed_cases"]) == (33.3, 50.0, 6, 5)
    assert (lb["pass_num_1"], lb["pass_num_2"], lb["total_cost"], lb["test_timeouts"]) == (2, 3, 0.75, 1)
    assert lb["seconds_per_case"] == 12.0 and lb["command"] == "alpha --go" and lb["error_outputs"] == 1
    noop = next(a for a in r["agents"] if a["agent"] == "noop")
    assert noop["pass_2"]["count"] == 1 and noop["without_free"]["pass_2"]["count"] == 0
    assert r["tasks"]["free_tasks"] == ["python-ledger"]


def test_mcnemar_pairs_only_tasks_both_agents_finished():
    r = _fixed()
    pass2 = next(c for c in r["comparisons"] if c["metric"] == "pass@2")
    # go-b is an error for alpha: 5 paired tasks; alpha alone passes a and b; both pass ledger
    assert (pass2["paired"], pass2["a_only"], pass2["b_only"], pass2["both"], pass2["neither"]) == (5, 2, 0, 1, 2)
    assert pass2["p_value"] == pytest.approx(0.5) and not pass2["significant"]
    pass1 = next(c for c in r["comparisons"] if c["metric"] == "pass@1")
    assert (pass1["a_only"], pass1["b_only"]) == (1, 0) and pass1["p_value"] == 1.0


def test_pages_are_self_contained_and_mark_free_tasks():
    pages = render_pages(_fixed())
    html = pages["report.html"]
    assert "<svg" in html and html.count("<rect") >= 4
    assert not re.search(r'(src|href)="(https?:)?//', html), "no external assets"
    assert "python-ledger (free)" in html and "o-pass@2" in html
    md = pages["report.md"]
    assert "| alpha | 33.3% (2/6) [9.7, 70.0] | 50.0% (3/6) [18.8, 81.2] | 40.0% (2/5)" in md
    assert "Free tasks" in md and "python-ledger" in md
    assert "pass_rate_2: 50.0" in pages["report.leaderboard.yml"]


def _task(home: Path, name: str, free: bool = False) -> None:
    d = home / "evals" / "aider" / "tasks" / name
    d.mkdir(parents=True)
    (d / "task.json").write_text(json.dumps({"task": name, "language": "python", "exercise": name}))
    (d / "prompt.txt").write_text(f"prompt of {name}\n")


def test_doit_report_reads_results_and_flags_stale_ones(tmp_path):
    from rules import images
    from rules.agents import parse_agent
    from rules.config import Limits
    from rules.trial import Trial, current_grader_id

    home = tmp_path / "home"
    (home / "evals" / "aider").mkdir(parents=True)
    (home / "evals" / "aider" / "suite.toml").write_text('upstream = "x"\nref = "main"\nlanguages = ["python"]\n')
    (home / "evals" / "agents.toml").write_text('[mine]\nimage = "noop"\ncommand = ["true"]\n')
    names = ["python-a", "python-b", "python-c"]
    for n in names:
        _task(home, n)
    (home / "evals" / "aider" / "manifest.json").write_text(json.dumps({"version": 1, "tier": "aider", "tasks": [
        {"task": n, "language": "python", "exercise": n, "status": "kept"} for n in names] + [
        {"task": "python-bad", "language": "python", "exercise": "bad", "status": "rejected"}]}))
    runs = home / "evals" / "aider" / "runs" / "mine"
    for n, status in (("python-a", "pass"), ("python-b", "fail")):
        t = Trial(agent=parse_agent("mine", {"image": "noop", "command": ["true"]}),
                  task_dir=home / "evals" / "aider" / "tasks" / n, run_dir=runs / n, scratch=runs / n, agent_image="",
                  grader_image=images.GRADER, grade_limits=Limits(), tries=2)
        key = t.key(current_grader_id(images.GRADER))
        (runs / n).mkdir(parents=True)
        (runs / n / "result.json").write_text(json.dumps(
            {"status": status, "passed_try": 1 if status == "pass" else None, "key": key, "agent_seconds": 1.0,
             "seconds": 2.0, "usage": None, "tries": []}))
    (home / "evals" / "aider" / "tasks" / "python-a" / "prompt.txt").write_text("changed since the trial\n")
    res = run_doit(home, "report", timeout=120)
    assert res.code == 0, res.stderr
    data = json.loads((home / "evals" / "aider" / "report.json").read_text())
    mine = data["agents"][0]
    assert mine["agent"] == "mine" and mine["tasks"] == 3 and mine["stale"] == 1 and mine["missing"] == 1
    assert mine["pass_2"]["count"] == 0 and mine["finished"] == 1  # the pass is stale: the task changed
    assert [row["outcomes"]["mine"] for row in data["matrix"]] == ["stale", "fail", "missing"]
    for page in ("report.md", "report.html", "report.leaderboard.yml"):
        assert (home / "evals" / "aider" / page).is_file()
