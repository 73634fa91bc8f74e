"""The swe tier's report (resolved over every published task, per repository, the retry-until-plausible
statistics, McNemar on resolved), from synthetic result.json records checked by hand (no Docker needed)."""
from __future__ import annotations

import json
import re
import sys
import types
from pathlib import Path

import pytest

from rules import publish, report
from rules.report import Run, TaskRow, build_report, cell, render_pages
from rules.tiers.swe import PROFILE as SWE, SweTier

sys.path.insert(0, str(Path(__file__).resolve().parent))
from conftest import run_doit  # noqa: E402

GENERATED = "2026-11-30T12:00:00+00:00"
REPOS = {"pallets__flask-4992": "pallets/flask", "pallets__flask-5063": "pallets/flask",
         "pytest-dev__pytest-9359": "pytest-dev/pytest", "pytest-dev__pytest-11143": "pytest-dev/pytest",
         "pytest-dev__pytest-11148": "pytest-dev/pytest", "sympy__sympy-15345": "sympy/sympy",
         "sympy__sympy-16792": "sympy/sympy", "sympy__sympy-20154": "sympy/sympy", "psf__requests-3362": "psf/requests"}
TASKS = [TaskRow(t, {"repo": repo}, False) for t, repo in REPOS.items()]
FLASK_A, FLASK_B, PYTEST_A, PYTEST_B, PYTEST_C, SYMPY_A, SYMPY_B, SYMPY_C, REQUESTS = REPOS


def attempt(n, agent, plausible, status, problems=None, usage=None):
    """One attempt record as rules.tiers.swe.swerun writes it (``status``: its own held-out outcome)."""
    return {"attempt": n, "agent": agent, "run": agent, "label": agent, "plausible": plausible,
            "problems": 0 if plausible else (problems or 1), "edit": None, "lint": [], "broken": [],
            "diff_lines": 10 + n, "status": status, "agent_seconds": 3.0, "grading_seconds": 20.0,
            "usage": usage, "folder": f"attempt-{n}"}


def swe_result(task, status, attempts=(), chosen=None, agents=("a", "b"), seconds=60.0, usage=None, **more):
    """A swe result.json: ``attempts`` as (agent, plausible, held-out status) tuples; ``chosen`` 0-based
    (default: the first plausible attempt, else the last)."""
    atts = [attempt(i, agent, plausible, st) for i, (agent, plausible, st) in enumerate(attempts, 1)]
    if chosen is None and atts:
        chosen = next((i for i, a in enumerate(atts) if a["plausible"]), len(atts) - 1)
    return {"version": 1, "tier": "swe", "task": task, "repo": REPOS.get(task, "?"), "language": "python",
            "run": "+".join(agents), "label": "+".join(agents), "agent": "+".join(agents), "agents": list(agents),
            "settings": {}, "repeat": 1, "status": status, "resolved": status == "pass",
            "plausible": atts[chosen]["plausible"] if atts and chosen is not None else None, "chosen": chosen,
            "attempts_allowed": 6, "attempts": atts, "error": None, "error_kind": None,
            "tests": {"ran": 5, "passed": 5 if status == "pass" else 3, "failed": 0 if status == "pass" else 2},
            "usage": usage, "agent_seconds": 3.0 * len(atts), "grading_seconds": 20.0 * len(atts),
            "seconds": seconds, "started": "2026-11-30T10:00:00+00:00", "finished": "2026-11-30T10:01:00+00:00",
            "key": {}, "passed_try": 1 if status == "pass" else None, "tries": [], **more}


def error_result(task, kind="agent", message="401 Unauthorized"):
    return {**swe_result(task, "error", [("a", False, "error")]), "chosen": None, "plausible": None,
            "error": message, "error_kind": kind}


def swe_run(name, results, agents=("a", "b"), attempts=6, label=None, repeats=None):
    """A Run of the swe tier from {task: result} (repeat 1) or ``repeats`` {k: {task: result}}."""
    repeats = repeats or {1: results}
    return Run(run=name, label=label or name, agent="+".join(agents), agents=list(agents), attempts=attempts,
               outcomes={k: {t: cell(r, profile=SWE) for t, r in rs.items()} for k, rs in repeats.items()},
               results={k: dict(rs) for k, rs in repeats.items()})


def pair_runs():
    """Two runs on nine tasks, counted by hand in the tests below.

    ``a+b``: resolved flask-4992 (attempt 1), pytest-9359 (attempt 3: 1 and 2 implausible), sympy-15345 (attempt
    2), sympy-16792 (attempt 1); unresolved flask-5063 (plausible attempt 2 fails held-out, the implausible
    attempt 1 would have passed), pytest-11143 (none plausible, least bad attempt 2 of 6; attempt 4 passed);
    timeout sympy-20154; tampered pytest-11148; requests-3362 an agent error (not finished).
    ``a``: resolved flask-4992, flask-5063, pytest-11148; unresolved the other five finished; requests
    missing."""
    ab = {
        FLASK_A: swe_result(FLASK_A, "pass", [("a", True, "pass")],
                            usage={"tokens_sent": 1000, "tokens_received": 100, "cost": 0.5}),
        FLASK_B: swe_result(FLASK_B, "fail", [("a", False, "pass"), ("b", True, "fail")]),
        PYTEST_A: swe_result(PYTEST_A, "pass", [("a", False, "fail"), ("b", False, "fail"), ("a", True, "pass")],
                             usage={"tokens_sent": 3000, "tokens_received": 300, "cost": 1.25}),
        PYTEST_B: swe_result(PYTEST_B, "fail", [("a", False, "fail"), ("b", False, "fail"), ("a", False, "fail"),
                                                ("b", False, "pass"), ("a", False, "fail"), ("b", False, "fail")],
                             chosen=1),
        PYTEST_C: swe_result(PYTEST_C, "tampered", [("a", True, "tampered")]),
        SYMPY_A: swe_result(SYMPY_A, "pass", [("a", False, "fail"), ("b", True, "pass")]),
        SYMPY_B: swe_result(SYMPY_B, "pass", [("a", True, "pass")]),
        SYMPY_C: swe_result(SYMPY_C, "timeout", [("a", True, "timeout")]),
        REQUESTS: error_result(REQUESTS),
    }
    ab[PYTEST_C]["attempts"][0]["evidence"] = ["the canary test was reported as passed"]
    only_a = {t: swe_result(t, "pass" if t in (FLASK_A, FLASK_B, PYTEST_C) else "fail",
                            [("a", True, "pass" if t in (FLASK_A, FLASK_B, PYTEST_C) else "fail")], agents=("a",))
              for t in REPOS if t != REQUESTS}
    return [swe_run("a+b", ab), swe_run("a", only_a, agents=("a",))]


def pair_report():
    return build_report("swe", TASKS, pair_runs(), generated=GENERATED)


def _row(r, run):
    return next(a for a in r["agents"] if a["run"] == run)


def test_outcome_words_are_resolved_and_unresolved():
    assert cell(swe_result(FLASK_A, "pass", [("a", True, "pass")]), profile=SWE) == "resolved"
    assert cell(swe_result(FLASK_A, "fail", [("a", True, "fail")]), profile=SWE) == "unresolved"
    assert cell(error_result(FLASK_A, "infrastructure"), profile=SWE) == "error:infrastructure"
    assert cell(None, profile=SWE) == "missing" and cell(swe_result(FLASK_A, "pass"), True, SWE) == "stale"
    assert report.finished("resolved") and report.finished("unresolved") and not report.finished("error:agent")
    assert report.passed_within("resolved", 1) and not report.passed_within("unresolved", 1)


def test_resolved_is_over_every_published_task_with_a_wilson_interval():
    r = pair_report()
    ab, a = _row(r, "a+b"), _row(r, "a")
    # 4 resolved of 9: the error (requests) counts as not resolved and stays in the denominator
    assert ab["resolved"]["count"] == 4 and ab["resolved"]["of"] == 9
    # Wilson 4/9, z = 1.96: centre (.44444 + .21342) / 1.42683 = .46106, half 1.96 * sqrt(.027435 + .011858)
    # / 1.42683 = .27226
    assert ab["resolved"]["ci"] == pytest.approx([0.18880, 0.73332], abs=1e-4)
    assert "pass_1" not in ab and "without_free" not in ab and "leaderboard" not in ab
    assert (ab["finished"], ab["errors"], ab["errors_agent"], ab["tampered"], ab["timeouts"]) == (8, 1, 1, 1, 1)
    # run a has no record of requests: missing, not resolved, still in the denominator
    assert a["resolved"] == report.rate(3, 9) and a["missing"] == 1 and a["finished"] == 8
    assert [x["run"] for x in r["agents"]] == ["a+b", "a"]  # 4/9 before 3/9
    assert (r["metric"], r["group"]) == ("resolved", "repo")
    assert (ab["tokens_sent"], ab["tokens_received"], ab["cost"]) == (4000, 400, 1.75)


def test_per_repository_rates_count_every_task_of_the_repository():
    r = pair_report()
    assert r["tasks"]["repos"] == {"pallets/flask": 2, "psf/requests": 1, "pytest-dev/pytest": 3, "sympy/sympy": 3}
    repos = _row(r, "a+b")["repos"]
    assert repos["pallets/flask"]["resolved"] == report.rate(1, 2)
    assert repos["pytest-dev/pytest"]["resolved"] == report.rate(1, 3) and repos["pytest-dev/pytest"]["finished"] == 3
    assert repos["sympy/sympy"]["resolved"] == report.rate(2, 3)
    assert repos["psf/requests"] == {"tasks": 1, "finished": 0, "resolved": report.rate(0, 1)}
    heat = report.heatmap(r)
    assert [c["text"] for c in heat["columns"]] == ["flask (2)", "requests (1)", "pytest (3)", "sympy (3)"]
    assert [c["title"] for c in heat["columns"]][0] == "pallets/flask (2)"
    requests_ab = next(c for c in heat["cells"] if c["title"].startswith("a+b · psf/requests"))
    assert requests_ab["none"] and "no trial of this repo finished" in requests_ab["title"]
    assert len(heat["cells"]) == 4 * 2
    one = report.heatmap(build_report("swe", TASKS[:1], pair_runs(), generated=GENERATED))  # one repository
    assert all(l["x"] + 22 + len(l["text"]) * report.CHAR_PX <= one["width"] for l in one["legend"])


def test_plausible_rate_attempts_and_the_upper_bound_are_over_finished_trials():
    s = _row(pair_report(), "a+b")["attempts"]
    assert s["finished"] == 8 and s["allowed"] == 6
    # chosen plausible: flask-4992, flask-5063, pytest-9359, pytest-11148, sympy-15345, 16792, 20154; not 11143
    assert s["plausible"] == report.rate(7, 8)
    assert s["used_mean"] == pytest.approx((1 + 2 + 3 + 6 + 1 + 2 + 1 + 1) / 8) and s["used_max"] == 6
    # flask-5063 (2nd), pytest-9359 (3rd), pytest-11143 (2nd), sympy-15345 (2nd)
    assert s["chosen_not_first"] == report.rate(4, 8)
    # the 4 resolved, plus flask-5063 and pytest-11143 whose unchosen attempts passed: 6 of all 9 tasks
    assert s["any_resolved"] == report.rate(6, 9) and s["ungraded_attempts"] == 0
    assert s["by_agent"]["a"] == {"attempts": 11, "plausible": 5, "resolved": 4, "chosen": 5, "chosen_resolved": 3}
    assert s["by_agent"]["b"] == {"attempts": 6, "plausible": 2, "resolved": 2, "chosen": 3, "chosen_resolved": 1}
    assert list(s["by_agent"]) == ["a", "b"]  # in order of appearance
    # the error trial's attempt is not counted: 17 attempts of finished trials
    assert sum(g["attempts"] for g in s["by_agent"].values()) == 17


def test_attempts_of_two_models_of_one_agent_are_counted_apart():
    res = swe_result(FLASK_A, "pass", [("aider", False, "fail"), ("aider", True, "pass")])
    res["attempts"][0]["label"], res["attempts"][1]["label"] = "aider (m1)", "aider (m2)"
    row = build_report("swe", TASKS, [swe_run("x", {FLASK_A: res}, agents=("aider", "aider"))],
                       generated=GENERATED)["agents"][0]
    assert row["attempts"]["by_agent"] == {
        "aider (m1)": {"attempts": 1, "plausible": 0, "resolved": 0, "chosen": 0, "chosen_resolved": 0},
        "aider (m2)": {"attempts": 1, "plausible": 1, "resolved": 1, "chosen": 1, "chosen_resolved": 1}}
    assert "2. aider (m2): plausible; held-out pass" in render_pages(
        build_report("swe", TASKS, [swe_run("x", {FLASK_A: res})], generated=GENERATED))["report.html"]


def test_the_upper_bound_is_never_below_resolved_and_ungraded_attempts_are_flagged():
    res = swe_result(FLASK_A, "pass", [("a", True, None)])  # resolved, its attempt's own outcome not recorded
    r = build_report("swe", TASKS, [swe_run("x", {FLASK_A: res})], generated=GENERATED)
    s = r["agents"][0]["attempts"]
    assert s["any_resolved"]["count"] == 1 and s["ungraded_attempts"] == 1
    assert any("1 attempt(s) have no held-out outcome" in w for w in r["warnings"])


def test_mcnemar_on_resolved_pairs_only_tasks_both_runs_finished():
    r = pair_report()
    (c,) = r["comparisons"]  # one metric, one pair
    # paired: 8 (requests is an error for a+b and missing for a). a+b alone: pytest-9359, sympy-15345,
    # sympy-16792; a alone: flask-5063, pytest-11148 (tampered for a+b); both: flask-4992
    assert (c["metric"], c["a"], c["b"], c["paired"]) == ("resolved", "a+b", "a", 8)
    assert (c["a_only"], c["b_only"], c["both"], c["neither"]) == (3, 2, 1, 2)
    assert c["p_value"] == pytest.approx(1.0) and not c["significant"]  # 2 * (1 + 5 + 10) / 32, capped


def test_stale_results_count_as_not_resolved_through_swerun(tmp_path, monkeypatch):
    runs_dir, tasks_dir = tmp_path / "runs", tmp_path / "tasks"
    for t in (FLASK_A, FLASK_B, SYMPY_A):
        (tasks_dir / t).mkdir(parents=True)
    seen = []

    def stale(result, task_dir, agents, tier=None):
        assert tier == "swe"  # the judge names its tier (rules.tiers.swe.SweTrials)
        seen.append((result["task"], task_dir.name, agents))
        return result["task"] == FLASK_B

    monkeypatch.setitem(sys.modules, "rules.tiers.swe.swerun", types.SimpleNamespace(stale=stale))
    folder = runs_dir / "a+b"
    for t, res in ((FLASK_A, swe_result(FLASK_A, "pass", [("a", True, "pass")])),
                   (FLASK_B, swe_result(FLASK_B, "pass", [("a", True, "pass")])),
                   (SYMPY_A, error_result(SYMPY_A))):
        (folder / t).mkdir(parents=True)
        (folder / t / "result.json").write_text(json.dumps(res))
    (folder / "run.json").write_text(json.dumps({"version": 1, "run": "a+b", "agent": "a+b", "agents": ["a", "b"],
                                                 "settings": {}, "label": "a then b", "attempts": 4}))
    tasks = [t for t in TASKS if t.task in (FLASK_A, FLASK_B, SYMPY_A)]
    (run,), notes = report.load_runs(runs_dir, tasks, tasks_dir, {"a": "A"}, SweTier().stale_judge(None, {"a": "A"}), SWE)
    assert notes == [] and (run.label, run.agents, run.attempts) == ("a then b", ["a", "b"], 4)
    assert run.outcomes[1] == {FLASK_A: "resolved", FLASK_B: "stale", SYMPY_A: "error:agent"}
    assert sorted(seen) == [(FLASK_A, FLASK_A, {"a": "A"}), (FLASK_B, FLASK_B, {"a": "A"})]  # errors never stale
    row = build_report("swe", tasks, [run], generated=GENERATED)["agents"][0]
    assert row["resolved"] == report.rate(1, 3) and row["stale"] == 1 and row["attempts"]["allowed"] == 4
    monkeypatch.setitem(sys.modules, "rules.tiers.swe.swerun", None)  # no rules.tiers.swe.swerun: nothing is stale
    (run,), _ = report.load_runs(runs_dir, tasks, tasks_dir, {}, SweTier().stale_judge(None, {}), SWE)
    assert run.outcomes[1][FLASK_B] == "resolved"


def test_one_run_report_pages():
    run = pair_runs()[0]
    r = build_report("swe", TASKS, [run], generated=GENERATED)
    pages = render_pages(r)
    assert set(pages) == {"report.md", "report.html"}  # no aider leaderboard records for this tier
    md, html = pages["report.md"], pages["report.html"]
    assert "| a+b | 44.4% (4/9) [18.9, 73.3] | – | 8/9 | 1 / 0 | 1 | 1 / 0 | 0 | 0 | 4.5 | 60.0 | 4000 / 400 |" in md
    assert "| a+b | 87.5% (7/8) | 2.12 / 6 (6) | 50.0% (4/8) | 66.7% (6/9) [35.4, 87.9] |" in md
    assert "| a+b | b | 6 | 2 | 2 | 3 | 1 |" in md
    assert "## resolved per repo (repeat 1)" in md and "| a+b | 50.0% (1/2) | 0.0% (0/1) |" in md
    assert "upper bound" in md and "not the score" in md and "pass@" not in md
    assert "the canary test was reported as passed" in md and "| a+b | pytest-dev__pytest-11148 | 1 | 1 | tampered |" in md
    assert "401 Unauthorized" in md and "leaderboard.yml" not in md
    assert not re.search(r'(src|href)="(https?:)?//', html) and not re.search(r"<script[^>]*\bsrc=", html)
    assert "Retry until plausible" in html and "pass@" not in html
    # pytest-11143: unresolved, least bad attempt 2 of the 6 made; hover lists every attempt
    assert "unresolved · a2/6" in html and "chosen: attempt 2 of 6, none plausible: the least bad" in html
    assert "4. b: not plausible (1 problem(s)); held-out pass" in html  # the record names no reason
    lint = {**attempt(1, "a", False, "fail"), "edit": None, "lint": ["calc.py:1: invalid syntax", "calc.py:9: x"],
            "broken": ["tests/test_calc.py::test_mul"]}
    assert report.why_not(lint) == ("lint: calc.py:1: invalid syntax (and 1 more); broke 1 pre-existing test(s): "
                                    "tests/test_calc.py::test_mul")
    assert report.why_not({"edit": "the attempt changed nothing"}) == "the attempt changed nothing"
    assert 'class="o o-pass1"' in html and 'class="o o-fail"' in html
    board = report.leaderboard(r)
    (row,) = board["rows"]
    assert row["w1"] is None and row["bound"] > row["w2"] > 0  # the upper bound's outline beyond the bar
    assert [l["kind"] for l in board["legend"]] == ["bar", "whisker", "bound"]


def many_runs(n):
    """``n`` runs with long labels: run i resolves the first i % 10 tasks (attempt 1), fails the others, and
    every fifth run has an infrastructure error on the last task."""
    runs = []
    for i in range(n):
        results = {t.task: swe_result(t.task, "pass" if j < i % 10 else "fail",
                                      [("aider-a", False, "fail"), ("aider-b", j < i % 10, "pass" if j < i % 10 else "fail")])
                   for j, t in enumerate(TASKS)}
        if i % 5 == 0:
            results[REQUESTS] = error_result(REQUESTS, "infrastructure", "engine refused: no such image")
        runs.append(swe_run(f"r{i}", results, agents=("aider-a", "aider-b"),
                            label=f"aider (openrouter/anthropic/claude-3.7-sonnet) + aider (openai/gpt-4o) #{i}"))
    return build_report("swe", TASKS, runs, generated=GENERATED)


def test_many_run_report_orders_runs_and_draws_the_p_value_triangle():
    r = many_runs(12)
    counts = [a["resolved"]["count"] for a in r["agents"]]
    assert counts == sorted(counts, reverse=True) and counts[0] == 9 and len(r["comparisons"]) == 66
    pages = render_pages(r)
    html = pages["report.html"]
    assert "B \\ A" in html and "only A resolves" in html  # the triangle, with its hover counts
    assert html.count('class="o o-') == 12 * 9 and "✓ · a2/2" in html
    grid = report.comparison_grid(r, "resolved")
    assert len(grid) == 12 and sum(c is not None for row in grid for c in row["cells"]) == 66
    board, heat = report.leaderboard(r), report.heatmap(r)
    assert len(board["rows"]) == 12 and board["width"] <= 1180 and heat["width"] <= 1180
    assert all(len(row["label"]) * report.CHAR_PX <= board["plot"]["x0"] - 8 for row in board["rows"])
    assert any("engine refused: no such image" in line for line in pages["report.md"].splitlines())


def test_pages_render_without_runs():
    r = build_report("swe", TASKS, [], generated=GENERATED)
    pages = render_pages(r)
    assert "doit run suite=swe agent=noop" in pages["report.html"] and "doit run suite=swe agent=noop" in pages["report.md"]
    assert r["agents"] == [] and r["tasks"]["repos"]["sympy/sympy"] == 3


def swe_home(home: Path, results: dict[str, dict]) -> Path:
    """A lab home whose swe tier has three published tasks (flask-4992, pytest-9359, sympy-15345; the manifest
    names flask's repository, the others only their task.json), a rejected one, and the run ``a`` with
    ``results`` ({task: result}); returns its ``evals/swe``."""
    swe = home / "evals" / "swe"
    swe.mkdir(parents=True)
    (swe / "suite.toml").write_text(f'dataset = "{home / "none.jsonl"}"\ninstances = []\n')
    (home / "evals" / "aider").mkdir()  # doit's task creators read the aider tier's settings too
    (home / "evals" / "aider" / "suite.toml").write_text('upstream = "x"\nref = "main"\nlanguages = ["python"]\n')
    (home / "evals" / "agents.toml").write_text('[a]\nimage = "noop"\ncommand = ["true"]\n')
    published = [FLASK_A, PYTEST_A, SYMPY_A]
    for t in published:
        (swe / "tasks" / t).mkdir(parents=True)
        env = REPOS[t].split("/")[1]  # a published task names its environment and image (task.json)
        (swe / "tasks" / t / "task.json").write_text(json.dumps({"task": t, "repo": REPOS[t], "language": "python",
                                                                 "env": env, "image": f"lab/swe-env:{env}"}))
    entries = [{"task": t, "language": "python", "exercise": t, "status": "kept"} for t in published]
    entries[0]["repo"] = REPOS[FLASK_A]
    entries.append({"task": SYMPY_B, "language": "python", "exercise": SYMPY_B, "status": "rejected"})
    (swe / "manifest.json").write_text(json.dumps({"version": 2, "tier": "swe", "tasks": entries}))
    run = swe / "runs" / "a"
    for t, res in results.items():
        (run / t).mkdir(parents=True)
        (run / t / "result.json").write_text(json.dumps(res))
    (run / "run.json").write_text(json.dumps({"version": 1, "run": "a", "agent": "a", "agents": ["a"],
                                              "settings": {}, "label": "a", "attempts": 1}))
    return swe


def test_doit_report_suite_swe_writes_the_three_files(tmp_path):
    # unfinished trials only: whether a finished one is current is rules.tiers.swe.swerun's call (next test)
    swe = swe_home(tmp_path / "home", {SYMPY_A: error_result(SYMPY_A),
                                       FLASK_A: error_result(FLASK_A, "infrastructure", "engine refused")})
    res = run_doit(tmp_path / "home", "report", "suite=swe", timeout=120)
    assert res.code == 0, res.stderr
    data = json.loads((swe / "report.json").read_text())
    (row,) = data["agents"]
    assert [m["outcomes"]["a"] for m in data["matrix"]] == ["error:infrastructure", "missing", "error:agent"]
    assert row["resolved"] == report.rate(0, 3) and (row["trials"], row["errors"], row["missing"]) == (2, 2, 1)
    assert data["tasks"]["repos"] == {"pallets/flask": 1, "pytest-dev/pytest": 1, "sympy/sympy": 1}
    assert (swe / "report.md").is_file() and (swe / "report.html").is_file()
    assert not (swe / "report.leaderboard.yml").exists()
    assert "| a | 0.0% (0/3)" in res.stdout and "engine refused" in res.stdout


def test_write_report_swe_judges_finished_trials_with_swerun(tmp_path, monkeypatch):
    from rules import agents, config

    swe = swe_home(tmp_path / "home", {FLASK_A: swe_result(FLASK_A, "pass", [("a", True, "pass")], agents=("a",)),
                                       PYTEST_A: swe_result(PYTEST_A, "pass", [("a", True, "pass")], agents=("a",)),
                                       SYMPY_A: swe_result(SYMPY_A, "fail", [("a", True, "fail")], agents=("a",))})
    monkeypatch.setattr(config, "EVALS", tmp_path / "home" / "evals")
    defined = {"a": types.SimpleNamespace(command=["true"])}
    monkeypatch.setattr(agents, "load_agents", lambda path=None, broken=None: defined)
    asked = []

    def stale(result, task_dir, agent_definitions, tier=None):
        asked.append((task_dir, agent_definitions))
        return result["task"] == PYTEST_A

    monkeypatch.setitem(sys.modules, "rules.tiers.swe.swerun", types.SimpleNamespace(stale=stale))
    data = publish.write_report("swe", echo=False)
    assert json.loads((swe / "report.json").read_text()) == data
    assert [m["outcomes"]["a"] for m in data["matrix"]] == ["resolved", "stale", "unresolved"]
    assert asked[0] == (swe / "tasks" / FLASK_A, defined) and len(asked) == 3
    (row,) = data["agents"]
    assert row["resolved"] == report.rate(1, 3) and row["stale"] == 1 and row["attempts"]["allowed"] == 1
    assert row["attempts"]["plausible"] == report.rate(2, 2)  # of the two current finished trials
    assert "a: 1 stale trial(s)" in " ".join(data["warnings"]) and (swe / "report.html").is_file()


def test_a_tampered_attempt_shows_the_evidence_of_its_own_trial_record(tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "rules.tiers.swe.swerun", None)
    trial = tmp_path / "runs" / "a" / FLASK_A
    (trial / "attempt-2").mkdir(parents=True)
    res = swe_result(FLASK_A, "tampered", [("a", False, "fail"), ("b", True, "tampered")])
    (trial / "result.json").write_text(json.dumps(res))
    (trial / "attempt-2" / "result.json").write_text(json.dumps({"status": "tampered", "tries": [
        {"try": 1, "outcome": "tampered", "grade": {"verdict": "tampered", "evidence": ["canary reported passed"]}}]}))
    tasks = [t for t in TASKS if t.task == FLASK_A]
    (run,), _ = report.load_runs(tmp_path / "runs", tasks, tmp_path / "tasks", {}, SweTier().stale_judge(None, {}), SWE)
    r = build_report("swe", tasks, [run], generated=GENERATED)
    assert r["agents"][0]["tampered_evidence"] == [{"task": FLASK_A, "repeat": 1, "try": 2, "status": "tampered",
                                                    "evidence": ["canary reported passed"]}]
    assert r["matrix"][0]["evidence"] == {"a": ["canary reported passed"]} and r["agents"][0]["tampered"] == 1
    assert "evidence" not in res["attempts"][1]  # the record read is left as it was


def test_a_tampered_attempt_that_was_not_chosen_is_warned_about_not_counted():
    res = swe_result(FLASK_A, "pass", [("a", False, "tampered"), ("b", True, "pass")])
    res["attempts"][0]["evidence"] = ["41 tests reported, the reference ran 12"]
    r = build_report("swe", TASKS, [swe_run("x", {FLASK_A: res})], generated=GENERATED)
    row = r["agents"][0]
    assert row["resolved"]["count"] == 1 and row["tampered"] == 0  # the chosen attempt 2 decides the trial
    assert row["tampered_evidence"] == [{"task": FLASK_A, "repeat": 1, "try": 1, "status": "pass",
                                         "evidence": ["41 tests reported, the reference ran 12"]}]
    assert any(w.startswith("x: 1 attempt(s) tampered with their test report in trials that chose another attempt "
                            f"({FLASK_A})") for w in r["warnings"])
