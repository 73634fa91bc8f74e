"""The report's numbers, checked against values computed by hand, and its pages (no Docker needed)."""
from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import pytest

from rules import report
from rules.config import ConfigError
from rules.report import Run, TaskRow, build_report, cell, mcnemar_exact, render_pages, wilson
from rules.tiers.aider import PROFILE, _stale

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
    TaskRow("python-a", {"language": "python", "exercise": "a"}, False), TaskRow("python-b", {"language": "python", "exercise": "b"}, False),
    TaskRow("python-c", {"language": "python", "exercise": "c"}, False), TaskRow("python-ledger", {"language": "python", "exercise": "ledger"}, True),
    TaskRow("go-a", {"language": "go", "exercise": "a"}, False), TaskRow("go-b", {"language": "go", "exercise": "b"}, False),
]
EVIDENCE = ["the canary test was reported as passed", "41 tests reported, the reference ran 12"]


def _res(status, passed_try=None, agent_seconds=10.0, seconds=12.0, usage=None, grade_timeout=False, **more):
    return {"status": status, "passed_try": passed_try, "agent_seconds": agent_seconds, "seconds": seconds,
            "usage": usage, "tries": [{"grade": {"timed_out": grade_timeout}}], **more}


def _run(name, repeats, label=None, settings=None, command=None):
    """A Run from {repeat: {task: result}}; outcome words from ``cell``."""
    return Run(run=name, label=label or name, agent=name.split(".")[0], settings=settings or {}, command=command,
               outcomes={k: {t: cell(r) for t, r in rs.items()} for k, rs in repeats.items()},
               results={k: dict(rs) for k, rs in repeats.items()})


def _passing(*tasks, try_no=1):
    return {t.task: _res("pass", try_no) if t.task in tasks else _res("fail") for t in TASKS}


def _fixed():
    """Five runs on six tasks (one free): hand-checked numbers below."""
    alpha = {"python-a": _res("pass", 1, 10, usage={"tokens_sent": 100, "tokens_received": 10, "cost": 0.5}),
             "python-b": _res("pass", 2, 20, usage={"tokens_sent": 200, "tokens_received": 20, "cost": 0.25}),
             "python-c": _res("fail", None, 30, grade_timeout=True),
             "python-ledger": _res("pass", 1, 40),
             "go-a": _res("timeout", None, 50),
             "go-b": _res("error", error="401 Unauthorized: invalid API key", error_kind="agent")}
    forger = _passing("python-ledger")
    forger["python-a"] = _res("tampered", tries=[{"try": 1, "outcome": "tampered",
                                                  "grade": {"verdict": "tampered", "evidence": EVIDENCE}}])
    forger["python-b"] = _res("error", error="setup.sh failed: exit 1", error_kind="infrastructure")
    crashed = {t.task: _res("error", error="exec: aider: not found (exit 127)", error_kind="agent") for t in TASKS}
    rep = {1: {**_passing("python-a"), "python-b": _res("pass", 2)},  # pass@1 1/6, pass@2 2/6
           2: _passing("python-a", "python-b", "python-c"),  # 3/6 and 3/6
           3: _passing("python-ledger")}  # 1/6 and 1/6
    runs = [_run("alpha.m1", {1: alpha}, label="alpha (m1)", settings={"model": "m1"}, command="alpha --go"),
            _run("noop", {1: _passing("python-ledger")}), _run("forger", {1: forger}),
            _run("crashed", {1: crashed}), _run("rep", rep)]
    return build_report("aider", TASKS, runs, generated="2025-01-02T03:04:05+00:00")


def _row(r, run):
    return next(a for a in r["agents"] if a["run"] == run)


def test_report_counts_every_task_in_the_denominator():
    r = _fixed()
    alpha = _row(r, "alpha.m1")
    assert alpha["label"] == "alpha (m1)" and alpha["settings"] == {"model": "m1"} and alpha["agent"] == "alpha"
    assert alpha["pass_1"]["count"] == 2 and alpha["pass_1"]["of"] == 6  # a, ledger
    assert alpha["pass_2"]["count"] == 3 and alpha["pass_2"]["rate"] == pytest.approx(0.5)  # + b on try 2
    assert alpha["pass_2"]["ci"] == pytest.approx([0.18761, 0.81239], abs=1e-4)  # Wilson 3/6
    assert alpha["without_free"] == {"tasks": 5, "pass_1": report.rate(1, 5), "pass_2": report.rate(2, 5)}
    assert alpha["languages"]["go"]["pass_2"]["count"] == 0 and alpha["languages"]["python"]["pass_2"]["count"] == 3
    assert (alpha["finished"], alpha["errors"], alpha["timeouts"], alpha["missing"]) == (5, 1, 1, 0)
    assert (alpha["errors_agent"], alpha["errors_infrastructure"]) == (1, 0)
    assert alpha["median_agent_seconds"] == 30  # median of 10, 20, 30, 40, 50 (the error is not finished)
    assert (alpha["tokens_sent"], alpha["tokens_received"], alpha["cost"]) == (300, 30, 0.75)
    lb = alpha["leaderboard"]
    assert (lb["pass_rate_1"], lb["pass_rate_2"], lb["test_cases"], lb["completed_cases"]) == (33.3, 50.0, 6, 5)
    assert (lb["pass_num_1"], lb["pass_num_2"], lb["total_cost"], lb["test_timeouts"]) == (2, 3, 0.75, 1)
    assert _row(r, "noop")["leaderboard"]["total_cost"] is None  # no usage recorded: unknown, not free
    assert lb["seconds_per_case"] == 12.0 and lb["command"] == "alpha --go" and lb["error_outputs"] == 1
    assert lb["model"] == "alpha (m1)" and lb["dirname"] == "lab-alpha.m1"
    noop = _row(r, "noop")
    assert noop["pass_2"]["count"] == 1 and noop["without_free"]["pass_2"]["count"] == 0
    assert r["tasks"]["free_tasks"] == ["python-ledger"]


def test_tampered_is_counted_and_never_passed_with_its_evidence_kept():
    r = _fixed()
    forger = _row(r, "forger")
    assert forger["tampered"] == 1 and forger["pass_2"]["count"] == 1  # the ledger only, not python-a
    assert forger["finished"] == 5 and (forger["errors_agent"], forger["errors_infrastructure"]) == (0, 1)
    assert forger["tampered_evidence"] == [{"task": "python-a", "repeat": 1, "try": 1, "status": "tampered",
                                            "evidence": EVIDENCE}]
    cell_a = next(m for m in r["matrix"] if m["task"] == "python-a")
    assert cell_a["outcomes"]["forger"] == "tampered" and cell_a["evidence"] == {"forger": EVIDENCE}
    assert any("forger: 1 trial(s) tampered" in w for w in r["warnings"])
    html = render_pages(r)["report.html"]
    assert "the canary test was reported as passed" in html and 'class="o o-tampered"' in html


def test_a_pass_on_a_third_try_is_not_pass_at_2_and_the_report_says_so():
    late = _passing("python-ledger")
    late["python-a"] = _res("pass", 3)  # a run with tries=3
    r = build_report("aider", TASKS, [_run("late", {1: late})], generated="2025-01-02T03:04:05+00:00")
    row = _row(r, "late")
    assert row["pass_2"]["count"] == 1 and row["passed_late"] == 1
    assert any(w.startswith("late: 1 trial(s) passed only on try 3 or later") for w in r["warnings"]), r["warnings"]
    assert not any("try 3" in w for w in _fixed()["warnings"])


def test_a_grading_reused_for_an_unchanged_tree_is_one_observation():
    graded = {"verdict": "tampered", "evidence": ["canary passed"], "timed_out": True}
    result = {"tries": [{"try": 1, "outcome": "tampered", "grade": graded},
                        {"try": 2, "outcome": "tampered", "grade": {**graded, "reused_from_try": 1}}]}
    assert report.tampered_tries(result) == [{"try": 1, "evidence": ["canary passed"]}]
    result["tries"][1]["grade"] = {**graded, "evidence": ["another"]}  # graded afresh: a second observation
    assert [t["try"] for t in report.tampered_tries(result)] == [1, 2]


def test_a_run_whose_every_trial_errored_is_shown_with_its_errors():
    r = _fixed()
    crashed = _row(r, "crashed")
    assert (crashed["trials"], crashed["finished"], crashed["errors"], crashed["errors_agent"]) == (6, 0, 6, 6)
    assert crashed["pass_2"] == report.rate(0, 6) and crashed["median_agent_seconds"] is None
    assert crashed["error_messages"] == [{"kind": "agent", "message": "exec: aider: not found (exit 127)",
                                          "count": 6, "trials": [t.task for t in TASKS]}]
    assert r["agents"][-1]["run"] == "crashed"  # last on the leaderboard
    assert any(w.startswith("crashed: 6 of 6 trials ended in error (6 agent, 0 infrastructure)") for w in r["warnings"])
    pages = render_pages(r)
    assert "| crashed | 0.0% (0/6)" in pages["report.md"] and "exec: aider: not found (exit 127)" in pages["report.md"]
    assert "exec: aider: not found (exit 127)" in pages["report.html"] and "5. crashed" in pages["report.html"]
    heat = report.heatmap(r)
    assert all(c["none"] for c in heat["cells"] if c["title"].startswith("crashed "))


def test_repeats_give_mean_and_sample_sd_while_pass_k_and_mcnemar_use_repeat_1():
    r = _fixed()
    rep = _row(r, "rep")
    assert rep["repeats"] == [1, 2, 3]
    assert [p["pass_2"]["count"] for p in rep["per_repeat"]] == [2, 3, 1]
    s2 = rep["repeat_rates"]["pass_2"]
    # rates 2/6, 3/6, 1/6: mean 1/3; deviations 0, +1/6, -1/6: sample variance (2/36)/2, sd 1/6
    assert s2["mean"] == pytest.approx(1 / 3) and s2["sd"] == pytest.approx(1 / 6)
    assert (s2["min"], s2["max"], s2["repeats"]) == (pytest.approx(1 / 6), pytest.approx(1 / 2), 3)
    s1 = rep["repeat_rates"]["pass_1"]  # 1/6, 3/6, 1/6: mean 5/18, sd sqrt(3)/9
    assert s1["mean"] == pytest.approx(5 / 18) and s1["sd"] == pytest.approx(3 ** 0.5 / 9)
    assert rep["pass_2"]["count"] == 2 and rep["pass_1"]["count"] == 1  # repeat 1
    assert rep["trials"] == 18 and rep["finished"] == 18
    c = next(c for c in r["comparisons"] if {c["a"], c["b"]} == {"rep", "noop"} and c["metric"] == "pass@2")
    # repeat 1: rep alone passes a and b, noop alone the ledger (repeat 2 would give 3 and 1)
    assert (c["a"], c["paired"], c["a_only"], c["b_only"]) == ("rep", 6, 2, 1)
    assert c["p_value"] == pytest.approx(1.0)  # 2 * (C(3,0) + C(3,1)) / 2^3, capped
    m = next(m for m in r["matrix"] if m["task"] == "python-c")
    assert m["repeats"] == {"rep": ["fail", "pass@1", "fail"]} and m["outcomes"]["rep"] == "fail"
    assert report.mean_sd(s2) == "33.3% ± 16.7 (16.7–50.0, 3 repeats)"
    assert report.spread([0.5]) == {"repeats": 1, "rates": [0.5], "mean": 0.5, "sd": None, "min": 0.5, "max": 0.5}


def test_a_repeat_still_under_way_is_left_out_of_the_mean_over_repeats():
    """A newcomer saw "pass@2 over repeats" fall while a second repeat ran: its tasks without a trial yet counted
    as failures. The mean is over complete repeats; the incomplete one is named in a warning."""
    first = _passing("python-a", "python-b", "go-a")  # 3 of 6
    second = {t: _res("pass", 1) for t in ("python-a", "python-c")}  # under way: 2 of 6 tasks have a trial
    r = build_report("aider", TASKS, [_run("half", {1: first, 2: second})], generated="2025-01-02T03:04:05+00:00")
    row = _row(r, "half")
    assert row["repeats"] == [1, 2] and row["per_repeat"][1]["missing"] == 4
    s = row["repeat_rates"]["pass_2"]
    assert (s["repeats"], s["mean"]) == (1, pytest.approx(0.5)), s
    assert any(w.startswith("half: repeat(s) 2 incomplete") and "left out of the mean" in w for w in r["warnings"])
    assert "1 complete repeat" in render_pages(r)["report.html"]


def test_mcnemar_pairs_only_tasks_both_runs_finished():
    r = _fixed()
    pass2 = next(c for c in r["comparisons"] if c["metric"] == "pass@2" and c["b"] == "noop" and c["a"] == "alpha.m1")
    # go-b is an error for alpha: 5 paired tasks; alpha alone passes a and b; both pass ledger
    assert (pass2["paired"], pass2["a_only"], pass2["b_only"], pass2["both"], pass2["neither"]) == (5, 2, 0, 1, 2)
    assert pass2["p_value"] == pytest.approx(0.5) and not pass2["significant"]
    pass1 = next(c for c in r["comparisons"] if c["metric"] == "pass@1" and c["b"] == "noop" and c["a"] == "alpha.m1")
    assert (pass1["a_only"], pass1["b_only"]) == (1, 0) and pass1["p_value"] == 1.0
    assert len(r["comparisons"]) == 2 * 10  # 5 runs: 10 pairs, pass@1 and pass@2


def test_leaderboard_is_sorted_with_whiskers_inside_the_plot():
    r = _fixed()
    assert [a["run"] for a in r["agents"]] == ["alpha.m1", "rep", "forger", "noop", "crashed"]  # ties: pass@1, label
    board = report.leaderboard(r)
    x0, x1 = board["plot"]["x0"], board["plot"]["x1"]
    assert [row["label"] for row in board["rows"]] == [f"{i}. {a['label']}" for i, a in enumerate(r["agents"], 1)]
    widths = [row["w2"] for row in board["rows"]]
    assert widths == sorted(widths, reverse=True)
    for row in board["rows"]:
        assert x0 <= row["lo"] <= x0 + row["w2"] <= row["hi"] <= x1  # the interval holds the rate, inside the plot
        assert row["w1"] <= row["w2"] and row["y"] + row["h"] <= board["plot"]["y1"]
    assert board["rows"][1]["mean"] == pytest.approx(x0 + (x1 - x0) / 3, abs=0.1)  # rep's mean over repeats
    assert board["rows"][0]["mean"] is None and any(l["kind"] == "mean" for l in board["legend"])
    assert all(l["x"] < board["width"] for l in board["legend"])


def test_heat_map_has_one_cell_per_language_and_run():
    r = _fixed()
    heat = report.heatmap(r)
    assert len(heat["cells"]) == len(r["tasks"]["languages"]) * len(r["agents"]) == 10
    alpha_python = next(c for c in heat["cells"] if c["title"].startswith("alpha (m1) · python"))
    assert alpha_python["text"] == "75%" and not alpha_python["none"]  # a, b, ledger of 4
    assert max(c["x"] + c["w"] for c in heat["cells"]) <= heat["width"]


def _many(n, label="aider (openrouter/anthropic/claude-3.7-sonnet)"):
    runs = [_run(f"aider.m{i}", {1: _passing(*[t.task for t in TASKS[:i % 6]])}, label=f"{label} #{i}")
            for i in range(n)]
    return build_report("aider", TASKS, runs, generated="2025-01-02T03:04:05+00:00")


@pytest.mark.parametrize("n", [1, 2, 20])
@pytest.mark.parametrize("label, shortened", [("aider (openrouter/anthropic/claude-3.7-sonnet)", False),
                                              ("aider (openrouter/anthropic/claude-3.7-sonnet-20250219, "
                                               "edit_format=diff-fenced, thinking=high)", True)])
def test_long_labels_fit_the_charts_and_keep_their_full_text(n, label, shortened):
    r = _many(n, label)
    board, heat = report.leaderboard(r), report.heatmap(r)
    assert len(board["rows"]) == n and len(heat["cells"]) == 2 * n
    for i, (row, hrow, a) in enumerate(zip(board["rows"], heat["rows"], r["agents"]), 1):
        full = f"{i}. {a['label']}"
        assert len(row["label"]) * report.CHAR_PX <= board["plot"]["x0"] - 8 and (row["label"] != full) == shortened
        assert row["title"].startswith(full + ":") and row["label"].endswith(full[-4:])  # ends kept, middle cut
        assert len(hrow["label"]) * report.CHAR_PX <= heat["x0"] - 8 and hrow["title"] == full
    assert board["width"] <= 1180 and heat["width"] <= 1180 and board["height"] >= 24 * n
    html = render_pages(r)["report.html"]
    assert html.count("<title>") >= n and f"{label} #" in html


def test_fit_shortens_in_the_middle():
    label = "aider (openrouter/anthropic/claude-3.7-sonnet)"
    short = report.fit(label, 20 * report.CHAR_PX)
    assert len(short) == 20 and short.startswith("aider (") and short.endswith("sonnet)") and "…" in short
    assert report.fit("noop", 100) == "noop"


def test_pages_are_self_contained_and_mark_free_tasks():
    r = _fixed()
    pages = render_pages(r)
    html = pages["report.html"]
    assert "<svg" in html and html.count("<rect") >= 4
    assert not re.search(r'(src|href)="(https?:)?//', html), "no external assets"
    assert not re.search(r"<script[^>]*\bsrc=", html), "only the matrix's own inline script, nothing loaded"
    assert "python-ledger (free)" in html and "o-pass2" in html
    md = pages["report.md"]
    assert "| alpha (m1) | 33.3% (2/6) [9.7, 70.0] | 50.0% (3/6) [18.8, 81.2] | 50.0% (1 repeat) | 40.0% (2/5)" in md
    assert "| model=m1 |" in md and "| 1 / 0 | 0 |" in md  # settings; errors agent / infra, tampered
    assert "| rep | 3 | 16.7% (1/6) | 16.7% (1/6) | 6/6 |" in md  # the third repeat's row
    assert "Free tasks" in md and "python-ledger" in md and EVIDENCE[1] in md
    assert "pass_rate_2: 50.0" in pages["report.leaderboard.yml"]
    assert json.loads(json.dumps(r)) == r  # report.json holds it all


def test_load_runs_reads_labels_repeats_and_falls_back_to_the_folder(tmp_path):
    from rules.config import Limits
    from rules.trial import GRADING_FILES, check_digest, task_digest

    runs_dir, tasks_dir = tmp_path / "runs", tmp_path / "tasks"
    for t in TASKS:
        (tasks_dir / t.task).mkdir(parents=True)
        (tasks_dir / t.task / "prompt.txt").write_text(f"prompt of {t.task}\n")
        (tasks_dir / t.task / "check.sh").write_text("exit 0\n")

    def put(run, folder, status, digest=None, **more):
        (runs_dir / run / folder).mkdir(parents=True, exist_ok=True)
        task = tasks_dir / folder.split("@")[0]
        key = {"run": {"task_digest": digest or task_digest(task, without=GRADING_FILES)},
               "grade": {"check_digest": check_digest(task)}}
        (runs_dir / run / folder / "result.json").write_text(json.dumps(
            {"status": status, "passed_try": 1 if status == "pass" else None, "tries": [], "key": key, **more}))

    put("aider.openai-gpt-4o", "python-a", "pass")
    put("aider.openai-gpt-4o", "python-a@2", "fail")
    put("aider.openai-gpt-4o", "python-b@3", "pass", digest="old")  # stale
    put("aider.openai-gpt-4o", "python-gone", "pass")  # not published: ignored
    (runs_dir / "aider.openai-gpt-4o" / "run.json").write_text(json.dumps(
        {"version": 1, "run": "aider.openai-gpt-4o", "agent": "aider", "settings": {"model": "openai/gpt-4o"},
         "label": "aider (openai/gpt-4o)"}))
    put("legacy", "go-a", "error", error="engine refused")
    (runs_dir / "legacy" / "go-b").mkdir(parents=True)
    (runs_dir / "legacy" / "go-b" / "result.json").write_text("{not json")
    (runs_dir / "empty" / "python-a").mkdir(parents=True)  # no record: not a run of the report
    put("legacy", "python-c", "pass", tries="oops")  # damaged: a note, counted as missing, never a crash
    put("legacy", "python-b", None)
    judge = lambda res, task_dir, agent, trial: _stale(res, task_dir, agent, trial, "lab/grader:latest", "", Limits())  # noqa: E731
    runs, notes = report.load_runs(runs_dir, TASKS, tasks_dir, {}, judge, PROFILE)
    assert [r.run for r in runs] == ["aider.openai-gpt-4o", "legacy"]
    aider, legacy = runs
    assert (aider.label, aider.agent, aider.settings) == ("aider (openai/gpt-4o)", "aider", {"model": "openai/gpt-4o"})
    assert aider.outcomes == {1: {"python-a": "pass@1"}, 2: {"python-a": "fail"}, 3: {"python-b": "stale"}}
    assert (legacy.label, legacy.agent, legacy.settings) == ("legacy", "legacy", {})
    assert legacy.outcomes == {1: {"go-a": "error:infrastructure"}}  # no error_kind: what error meant before
    assert len(notes) == 3 and "go-b" in notes[0] and "not valid JSON" in notes[0], notes
    assert "python-b/result.json: field 'status' should be a string" in notes[1] and "counts as missing" in notes[1]
    assert "python-c/result.json: field 'tries' should be a list of objects" in notes[2]
    assert report.trial_folder("python-a@2") == ("python-a", 2) and report.trial_folder("c@x") == ("c@x", 1)


def _task(home: Path, name: str, free: bool = False) -> None:
    d = home / "evals" / "aider" / "tasks" / name
    d.mkdir(parents=True)
    (d / "task.json").write_text(json.dumps({"task": name, "language": "python", "exercise": name}))
    (d / "prompt.txt").write_text(f"prompt of {name}\n")


def test_doit_report_reads_results_and_flags_stale_ones(tmp_path):
    from rules import images
    from rules.agents import parse_agent
    from rules.config import Limits
    from rules.trial import Trial, current_grader_id, task_digest

    agent = parse_agent("mine", {"image": "noop", "command": ["true"]})
    grader_id = current_grader_id(images.GRADER)
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
        key = Trial(agent=agent, task_dir=home / "evals" / "aider" / "tasks" / n, run_dir=runs / n, scratch=runs / n,
                    agent_image="", grader_image=images.GRADER, grade_limits=Limits()).key(grader_id)
        (runs / n).mkdir(parents=True)
        (runs / n / "result.json").write_text(json.dumps(
            {"status": status, "passed_try": 1 if status == "pass" else None, "key": key, "agent_seconds": 1.0,
             "seconds": 2.0, "usage": None, "tries": [], "tries_allowed": 2}))
    # a run of another model whose every trial crashed, with a second repeat of one task
    other = home / "evals" / "aider" / "runs" / "mine.model-x"
    for folder in ("python-a", "python-b", "python-c", "python-c@2"):
        (other / folder).mkdir(parents=True)
        (other / folder / "result.json").write_text(json.dumps(
            {"status": "error", "error": "provider said 401", "error_kind": "agent", "passed_try": None,
             "key": {"task_digest": task_digest(home / "evals" / "aider" / "tasks" / folder.split("@")[0])},
             "agent_seconds": 0.1, "seconds": 0.5, "usage": None, "tries": []}))
    (other / "run.json").write_text(json.dumps({"version": 1, "run": "mine.model-x", "agent": "mine",
                                                "settings": {"model": "model-x"}, "label": "mine (model-x)"}))
    (home / "evals" / "aider" / "tasks" / "python-a" / "prompt.txt").write_text("changed since the trial\n")
    res = run_doit(home, "report", timeout=120)
    assert res.code == 0, res.stderr
    data = json.loads((home / "evals" / "aider" / "report.json").read_text())
    mine, crashed = data["agents"]
    assert mine["agent"] == "mine" and mine["tasks"] == 3 and mine["stale"] == 1 and mine["missing"] == 1
    assert mine["pass_2"]["count"] == 0 and mine["finished"] == 1  # the pass is stale: the task changed
    assert [row["outcomes"]["mine"] for row in data["matrix"]] == ["stale", "fail", "missing"]
    assert (crashed["label"], crashed["settings"], crashed["repeats"]) == ("mine (model-x)", {"model": "model-x"}, [1, 2])
    # python-a's task changed since, but an error shows as the error it is, never as stale; repeat 2 has one of 3
    assert crashed["stale"] == 0 and crashed["errors_agent"] == 4 and crashed["missing"] == 2
    assert "mine (model-x)" in res.stdout and "provider said 401" in res.stdout
    for page in ("report.md", "report.html", "report.leaderboard.yml"):
        assert (home / "evals" / "aider" / page).is_file()
    # a broken agents.toml (not TOML) loses nothing already written: no page loses its run's command
    tier = home / "evals" / "aider"
    written = {p: p.read_bytes() for p in sorted(tier.rglob("*")) if p.is_file() and "runs" not in p.parts}
    assert any("trials" in p.parts for p in written)
    (home / "evals" / "agents.toml").write_text('[mine\nimage = "noop"\n')
    res = run_doit(home, "report", timeout=120)
    out = (res.stdout + res.stderr).strip()
    assert res.code != 0 and "not valid TOML" in out and "the report was not written" in out, out
    assert len([ln for ln in out.splitlines() if not ln.startswith(".  ")]) == 1, out
    assert {p: p.read_bytes() for p in sorted(tier.rglob("*")) if p.is_file() and "runs" not in p.parts} == written


def test_graded_by_names_the_grader_image_and_regraded_trials():
    results = [{"images": {"grader": {"id": "sha256:old"}}},
               {"images": {"grader": {"id": "sha256:old"}}, "graded": {"grader_image_id": "sha256:new", "regraded": True}},
               {"graded": {"grader_image_id": "sha256:new", "regraded": False}}, {"status": "error"}]
    assert report.graded_by(results) == [{"grader_image_id": "sha256:new", "trials": 2, "regraded": 1},
                                         {"grader_image_id": "sha256:old", "trials": 1, "regraded": 0}]
    run = _run("r", {1: {"python-a": {**_res("pass", 1), "graded": {"grader_image_id": "sha256:new", "regraded": True}}}})
    r = build_report("aider", TASKS, [run], generated="2025-01-02T03:04:05+00:00")
    assert r["agents"][0]["graded_by"] == [{"grader_image_id": "sha256:new", "trials": 1, "regraded": 1}]
    assert "| r | sha256:new | 1 | 1 |" in render_pages(r)["report.md"]


def test_a_run_without_repeat_1_is_flagged():
    run = _run("late", {2: _passing("python-a")})
    r = build_report("aider", TASKS, [run], generated="2025-01-02T03:04:05+00:00")
    row = r["agents"][0]
    assert row["repeats"] == [2] and row["pass_2"]["count"] == 0 and row["per_repeat"][0]["pass_2"]["count"] == 1
    assert any(w.startswith("late: no trial of repeat 1") for w in r["warnings"])


def test_pages_render_without_runs_or_tasks():
    empty = build_report("aider", TASKS, [], generated="2025-01-02T03:04:05+00:00")
    assert "No results yet" in render_pages(empty)["report.html"] and empty["agents"] == []
    no_tasks = build_report("aider", [], [_run("noop", {1: {}})], generated="2025-01-02T03:04:05+00:00")
    pages = render_pages(no_tasks)
    assert no_tasks["agents"][0]["pass_2"]["rate"] is None and "| noop | – " in pages["report.md"]


def test_stale_only_for_finished_results_of_another_task_or_definition(tmp_path):
    from rules.agents import parse_agent
    from rules.config import Limits
    from rules.trial import Trial

    task = tmp_path / "task"
    task.mkdir()
    (task / "prompt.txt").write_text("Do it.\n")
    (task / "check.sh").write_text("exit 0\n")
    agent = parse_agent("a", {"image": "noop", "command": ["true"]})
    grading = ("lab/grader:latest", "sha256:g", Limits())
    t = Trial(agent=agent, task_dir=task, run_dir=tmp_path, scratch=tmp_path, agent_image="",
              grader_image=grading[0], grade_limits=grading[2])
    result = {"status": "pass", "key": t.key("sha256:g"), "tries_allowed": 2, "tries": []}
    assert not _stale(result, task, agent, tmp_path, *grading)
    assert report.cell({**result, "status": "error"}) == "error:infrastructure"  # errors are never asked about
    assert _stale(result, task, agent, tmp_path, grading[0], "sha256:new", Limits())
    assert not _stale(result, task, None, tmp_path, *grading)
    (task / "prompt.txt").write_text("Changed.\n")
    assert _stale(result, task, agent, tmp_path, *grading) and _stale(result, task, None, tmp_path, *grading)


def test_run_agent_applies_the_run_settings_when_the_definition_can():
    from rules.config import ConfigError

    class Plain:
        digest = "plain"

    class WithSettings(Plain):
        def with_values(self, values):
            if set(values) != {"model"}:
                raise ConfigError("no such setting")
            return ("resolved", values["model"])

    assert report.run_agent({"a": Plain()}, "a", {}).digest == "plain"
    assert report.run_agent({"a": Plain()}, "a", {"model": "x"}) is None  # cannot be checked: no digest compared
    assert report.run_agent({"a": WithSettings()}, "a", {"model": "x"}) == ("resolved", "x")
    assert report.run_agent({"a": WithSettings()}, "a", {"size": "x"}) is None
    assert report.run_agent({}, "a", {}) is None


def test_a_run_with_one_try_or_missing_trials_is_flagged():
    """pass@2 of a tries=1 run is its pass@1 (no second try was measured), and tasks without a trial count as
    not passed in the rates and intervals: the report says both (the newcomer read 0/44 [0, 8.0] for 1 trial)."""
    one = {t: {**res, "tries_allowed": 1} for t, res in _passing("python-ledger").items()}
    some = {t.task: _res("fail", tries_allowed=2) for t in TASKS[:1]}
    r = build_report("aider", TASKS, [_run("one", {1: one}), _run("some", {1: some})],
                     generated="2025-01-02T03:04:05+00:00")
    assert any(w.startswith(f"one: {len(TASKS)} trial(s) were run with tries=1: their pass@2 is their first")
               for w in r["warnings"]), r["warnings"]
    assert any(w.startswith(f"some: {len(TASKS) - 1} of {len(TASKS)} tasks have no trial yet") for w in r["warnings"])
    assert not any("tries=1" in w or "no trial yet" in w for w in _fixed()["warnings"])


def test_the_chart_gives_intervals_with_the_table_s_one_decimal():
    r = _fixed()
    board = report.leaderboard(r)
    for row, a in zip(board["rows"], r["agents"]):
        lo, hi = a["pass_2"]["ci"] or (0, 0)
        assert f"[{100 * lo:.1f}–{100 * hi:.1f}]" in row["value"]


def test_the_matrix_legend_points_at_the_errors_section_only_when_there_is_one():
    with_errors = render_pages(_fixed())["report.html"]
    assert "<h2>Errors</h2>" in with_errors and "(see Errors)" in with_errors
    clean = _run("clean", {1: {"python-a": {"status": "pass", "passed_try": 1, "tries": []}}})
    page = render_pages(build_report("aider", TASKS, [clean], generated="2025-01-02T03:04:05+00:00"))["report.html"]
    assert "<h2>Errors</h2>" not in page and "see Errors" not in page


def test_a_tiers_own_outcome_words_are_counted_as_what_they_say():
    """A red team's tier said "solved"/"unsolved" and the report showed 0 of 3 passed and 0 finished: the words
    a profile gives are the words the report counts."""
    import dataclasses

    from rules.tiers.aider import PROFILE

    own = dataclasses.replace(PROFILE, tier="kata", passed="solved", failed="unsolved")
    results = {"python-a": _res("pass", 1), "python-b": _res("fail"), "go-a": _res("pass", 2)}
    run = Run(run="noop", label="noop", agent="noop", settings={}, command=None,
              outcomes={1: {t: report.cell(r, profile=own) for t, r in results.items()}}, results={1: results})
    assert set(run.outcomes[1].values()) == {"solved", "unsolved"}
    row = report.summarize(run, TASKS, None, own)
    assert (row["pass_2"]["count"], row["finished"], row["errors"]) == (2, 3, 0), row
    bad = dataclasses.replace(PROFILE, tier="odd", passed="fail")
    with pytest.raises(ConfigError, match="another word"):
        report.count_words(bad)
