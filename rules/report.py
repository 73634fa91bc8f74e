"""The comparison report: every agent with results on a tier, in Markdown, JSON and a self-contained HTML page.

Denominators are honest: pass@1 and pass@2 are over *all* the tier's published tasks (status ``kept`` or
``free`` in the manifest); a trial that did not finish (missing, an ``error``, or ``stale``: run on another
version of the task or of the agent's definition) counts as not passed. Rates come with a 95% Wilson score
interval; free tasks (whose stub passes by design) are marked, and every rate is also given without them. Two
agents are compared on the tasks both finished with an exact McNemar test (two-sided binomial test on the
discordant pairs). The aider leaderboard's record keys (``pass_rate_1``, ``pass_rate_2``, ``test_cases``,
``seconds_per_case``, ``total_cost``, ...) are written per agent so results sit beside published numbers.

Pure functions compute the numbers from results; ``write_report`` reads the files and writes the three pages
plus ``report.leaderboard.yml``.
"""
from __future__ import annotations

import datetime as dt
import itertools
import json
import math
import statistics
from dataclasses import dataclass

REPORT_FORMAT = 1
Z95 = 1.959963984540054  # the standard normal's 97.5% quantile
ALPHA = 0.05
PALETTE = ("#4269d0", "#efb118", "#ff725c", "#6cc5b0", "#3ca951", "#ff8ab7", "#a463f2", "#97bbf5", "#9c6b4e", "#9498a0")


# ---- the numbers ----

def wilson(k: int, n: int, z: float = Z95) -> tuple[float, float] | None:
    """The Wilson score interval (low, high) of ``k`` successes in ``n`` trials, as fractions in [0, 1];
    None when ``n`` is 0."""
    if n <= 0:
        return None
    p = k / n
    denom = 1 + z * z / n
    center = (p + z * z / (2 * n)) / denom
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denom
    return max(0.0, center - half), min(1.0, center + half)


def mcnemar_exact(b: int, c: int) -> float:
    """Two-sided exact McNemar p-value for ``b`` and ``c`` discordant pairs (A passes and B does not, and
    the reverse): ``min(1, 2 * P[X <= min(b, c)])`` for X ~ Binomial(b + c, 1/2). 1.0 when there are none."""
    n = b + c
    if n == 0:
        return 1.0
    tail = sum(math.comb(n, i) for i in range(min(b, c) + 1)) / 2 ** n
    return min(1.0, 2 * tail)


def rate(k: int, n: int) -> dict:
    """``{"count", "of", "rate", "ci"}``: k of n, the fraction (None when n is 0) and its Wilson interval."""
    return {"count": k, "of": n, "rate": k / n if n else None, "ci": list(wilson(k, n) or []) or None}


@dataclass(frozen=True)
class TaskRow:
    """A published task of the tier: name, language, exercise and whether it is free."""

    task: str
    language: str
    exercise: str
    free: bool


def cell(result: dict | None, stale: bool = False) -> str:
    """A trial's outcome in one word: ``pass@N`` (passed on try N), ``fail``, ``timeout``, ``error``,
    ``stale`` or ``missing``."""
    if result is None:
        return "missing"
    if stale:
        return "stale"
    status = result.get("status")
    if status == "pass":
        return f"pass@{result.get('passed_try') or 1}"
    return status if status in ("fail", "timeout", "error") else "error"


def passed_within(outcome: str, tries: int) -> bool:
    """True when the outcome word says the task passed on try ``tries`` or earlier."""
    return outcome.startswith("pass@") and int(outcome[5:]) <= tries


def finished(outcome: str) -> bool:
    """True for pass/fail/timeout outcomes: the trial ran to its end on the current task and definition."""
    return outcome.startswith("pass@") or outcome in ("fail", "timeout")


def summarize(agent: str, tasks: list[TaskRow], outcomes: dict[str, str], results: dict[str, dict],
              command: str | None = None, today: str | None = None) -> dict:
    """One agent's row of the report, from the outcome word of each task (``cell``) and the results.

    Returns ``{"agent", "tasks", "free", "pass_1", "pass_2", "without_free": {"tasks", "pass_1", "pass_2"},
    "languages": {lang: {"tasks", "pass_1", "pass_2"}}, "finished", "errors", "timeouts", "stale",
    "missing", "median_agent_seconds", "tokens_sent", "tokens_received", "cost", "usage_known",
    "leaderboard"}``. Rates use ``rate``; seconds and usage are over finished trials only.
    """
    def count(rows: list[TaskRow], tries: int) -> int:
        return sum(passed_within(outcomes.get(r.task, "missing"), tries) for r in rows)

    kept = [r for r in tasks if not r.free]
    languages = sorted({r.language for r in tasks})
    done = [r for r in tasks if finished(outcomes.get(r.task, "missing"))]
    words = [outcomes.get(r.task, "missing") for r in tasks]
    agent_seconds = [results[r.task].get("agent_seconds", 0.0) for r in done]
    seconds = [results[r.task].get("seconds", 0.0) for r in done]
    usages = [results[r.task].get("usage") for r in done if results[r.task].get("usage")]
    sent = sum(u.get("tokens_sent") or 0 for u in usages)
    received = sum(u.get("tokens_received") or 0 for u in usages)
    costs = [u["cost"] for u in usages if u.get("cost") is not None]
    grading_timeouts = sum(1 for r in done for t in results[r.task].get("tries", [])
                           if (t.get("grade") or {}).get("timed_out"))
    row = {
        "agent": agent, "tasks": len(tasks), "free": len(tasks) - len(kept),
        "pass_1": rate(count(tasks, 1), len(tasks)), "pass_2": rate(count(tasks, 2), len(tasks)),
        "without_free": {"tasks": len(kept), "pass_1": rate(count(kept, 1), len(kept)),
                         "pass_2": rate(count(kept, 2), len(kept))},
        "languages": {},
        "finished": len(done), "errors": words.count("error"), "timeouts": words.count("timeout"),
        "stale": words.count("stale"), "missing": words.count("missing"),
        "median_agent_seconds": round(statistics.median(agent_seconds), 3) if agent_seconds else None,
        "tokens_sent": sent if usages else None, "tokens_received": received if usages else None,
        "cost": round(sum(costs), 6) if costs else None, "usage_known": len(usages),
    }
    for lang in languages:
        rows = [r for r in tasks if r.language == lang]
        row["languages"][lang] = {"tasks": len(rows), "pass_1": rate(count(rows, 1), len(rows)),
                                  "pass_2": rate(count(rows, 2), len(rows))}
    n = len(tasks)
    row["leaderboard"] = {
        "dirname": f"lab-{agent}", "model": agent, "test_cases": n, "completed_cases": len(done),
        "total_tests": n, "pass_rate_1": round(100 * count(tasks, 1) / n, 1) if n else 0.0,
        "pass_rate_2": round(100 * count(tasks, 2) / n, 1) if n else 0.0,
        "pass_num_1": count(tasks, 1), "pass_num_2": count(tasks, 2),
        "error_outputs": row["errors"], "test_timeouts": grading_timeouts,
        "seconds_per_case": round(sum(seconds) / len(seconds), 1) if seconds else 0.0,
        "total_cost": round(sum(costs), 4) if costs else 0.0,
        "prompt_tokens": sent if usages else None, "completion_tokens": received if usages else None,
        "command": command, "date": today or dt.date.today().isoformat(), "versions": "lab",
    }
    return row


def compare(a: str, b: str, outcomes: dict[str, dict[str, str]], tasks: list[TaskRow], tries: int) -> dict:
    """Agents ``a`` and ``b`` on the tasks both finished, at pass@``tries``: ``{"a", "b", "metric",
    "paired", "a_only", "b_only", "both", "neither", "p_value", "significant"}`` (exact McNemar, 5% level)."""
    oa, ob = outcomes.get(a, {}), outcomes.get(b, {})
    paired = [r.task for r in tasks if finished(oa.get(r.task, "missing")) and finished(ob.get(r.task, "missing"))]
    pa = {t: passed_within(oa[t], tries) for t in paired}
    pb = {t: passed_within(ob[t], tries) for t in paired}
    a_only = sum(pa[t] and not pb[t] for t in paired)
    b_only = sum(pb[t] and not pa[t] for t in paired)
    p = mcnemar_exact(a_only, b_only)
    return {"a": a, "b": b, "metric": f"pass@{tries}", "paired": len(paired), "a_only": a_only, "b_only": b_only,
            "both": sum(pa[t] and pb[t] for t in paired), "neither": sum(not pa[t] and not pb[t] for t in paired),
            "p_value": p, "significant": p < ALPHA}


def build_report(tier: str, tasks: list[TaskRow], outcomes: dict[str, dict[str, str]],
                 results: dict[str, dict[str, dict]], commands: dict[str, str] | None = None,
                 generated: str | None = None) -> dict:
    """The whole report as data (``report.json``): ``{"version", "tier", "generated", "tasks": {"total",
    "kept", "free", "free_tasks", "languages"}, "agents": [summarize rows], "comparisons": [compare, for
    pass@1 and pass@2 of each pair], "matrix": [{"task", "language", "exercise", "free", "outcomes": {agent:
    word}}]}``. ``outcomes[agent][task]`` is a ``cell`` word, ``results[agent][task]`` the result data."""
    generated = generated or dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds")
    agents = sorted(outcomes)
    commands = commands or {}
    rows = [summarize(a, tasks, outcomes[a], results.get(a, {}), commands.get(a), generated[:10]) for a in agents]
    pairs = [compare(a, b, outcomes, tasks, k) for a, b in itertools.combinations(agents, 2) for k in (1, 2)]
    languages = {}
    for r in tasks:
        languages[r.language] = languages.get(r.language, 0) + 1
    return {
        "version": REPORT_FORMAT, "tier": tier, "generated": generated,
        "tasks": {"total": len(tasks), "kept": sum(not r.free for r in tasks), "free": sum(r.free for r in tasks),
                  "free_tasks": [r.task for r in tasks if r.free], "languages": dict(sorted(languages.items()))},
        "agents": rows, "comparisons": pairs,
        "matrix": [{"task": r.task, "language": r.language, "exercise": r.exercise, "free": r.free,
                    "outcomes": {a: outcomes[a].get(r.task, "missing") for a in agents}} for r in tasks],
    }


# ---- presentation helpers (used by the templates) ----

def pct(r: dict | None) -> str:
    """``"42.7% (96/225)"`` for a ``rate`` dict; ``"–"`` when its denominator is 0."""
    if not r or r.get("rate") is None:
        return "–"
    return f"{100 * r['rate']:.1f}% ({r['count']}/{r['of']})"


def ci(r: dict | None) -> str:
    """``"[36.4, 49.3]"`` (percent) for a ``rate`` dict's interval; ``""`` without one."""
    if not r or not r.get("ci"):
        return ""
    return f"[{100 * r['ci'][0]:.1f}, {100 * r['ci'][1]:.1f}]"


def pvalue(p: float) -> str:
    """A p-value for people: 4 significant digits, ``<0.0001`` below that."""
    return "<0.0001" if p < 1e-4 else f"{p:.4g}"


def chart(report: dict, width: int = 760, height: int = 260) -> dict:
    """Geometry of the per-language bar chart (pass@2 rate per agent per language) for the HTML page:
    ``{"width", "height", "bars": [{"x", "y", "w", "h", "color", "title"}], "labels": [{"x", "y", "text"}],
    "legend": [{"x", "y", "color", "text"}], "grid": [{"y", "text"}]}`` in SVG user units."""
    langs = list(report["tasks"]["languages"])
    agents = report["agents"]
    left, top, bottom = 40, 10, 50
    plot_h = height - top - bottom
    group = (width - left - 10) / max(1, len(langs))
    bar = max(2.0, min(28.0, (group - 12) / max(1, len(agents))))
    out = {"width": width, "height": height, "bars": [], "labels": [], "legend": [],
           "grid": [{"y": round(top + plot_h * (1 - f), 1), "text": f"{int(f * 100)}%"} for f in (0, 0.25, 0.5, 0.75, 1)]}
    for i, lang in enumerate(langs):
        x0 = left + i * group + (group - bar * len(agents)) / 2
        out["labels"].append({"x": round(left + (i + 0.5) * group, 1), "y": height - bottom + 16, "text": lang})
        for j, row in enumerate(agents):
            r = row["languages"].get(lang, {}).get("pass_2") or {}
            value = r.get("rate") or 0.0
            h = plot_h * value
            out["bars"].append({"x": round(x0 + j * bar, 1), "y": round(top + plot_h - h, 1), "w": round(bar - 2, 1),
                                "h": round(h, 1), "color": PALETTE[j % len(PALETTE)],
                                "title": f"{row['agent']} · {lang}: {pct(r)}"})
    for j, row in enumerate(agents):
        out["legend"].append({"x": left + j * 140, "y": height - 14, "color": PALETTE[j % len(PALETTE)],
                              "text": row["agent"]})
    return out


def render_pages(report: dict) -> dict[str, str]:
    """The report's pages from its data: ``{"report.md": ..., "report.html": ..., "report.leaderboard.yml": ...}``."""
    from rules.render import environment

    env = environment().overlay()
    env.filters.update(pct=pct, ci=ci, pvalue=pvalue)
    md = env.get_template("report/report.md.j2").render(r=report)
    html = env.get_template("report/report.html.j2").render(r=report, chart=chart(report))
    yml = env.get_template("report/leaderboard.yml.j2").render(r=report, dump=lambda v: json.dumps(v, ensure_ascii=False))
    return {"report.md": md, "report.html": html, "report.leaderboard.yml": yml}


# ---- the files ----

def load(tier: str) -> tuple[list[TaskRow], dict[str, dict[str, str]], dict[str, dict[str, dict]], dict[str, str]]:
    """Read the tier's manifest and every agent's results: (tasks, outcomes[agent][task],
    results[agent][task], commands[agent]). A finished result is ``stale`` unless ``rules.trial.trial_state``
    calls it current (the same rule as doit's and the run's: task, agent definition, grading)."""
    from rules import images
    from rules.agents import AgentError, load_agents
    from rules.config import load_suite
    from rules.files import read_json
    from rules.trial import FINISHED, GRADING_FILES, current_grader_id, result_state_for_report, task_digest

    suite = load_suite(tier)
    manifest = read_json(suite.manifest_path) or {}
    tasks = [TaskRow(t["task"], t.get("language", ""), t.get("exercise", ""), t.get("status") == "free")
             for t in manifest.get("tasks", []) if t.get("status") in ("kept", "free")
             and (suite.tasks_dir / t["task"] / "task.json").is_file()]
    try:
        agents = load_agents()
    except AgentError:
        agents = {}
    digests = {r.task: task_digest(suite.tasks_dir / r.task, GRADING_FILES) for r in tasks}
    grader_id = current_grader_id(images.GRADER)
    outcomes: dict[str, dict[str, str]] = {}
    results: dict[str, dict[str, dict]] = {}
    runs = sorted(p for p in suite.runs_dir.glob("*") if p.is_dir()) if suite.runs_dir.is_dir() else []
    for run in runs:
        mine = {r.task: read_json(run / r.task / "result.json") for r in tasks}
        mine = {t: res for t, res in mine.items() if isinstance(res, dict)}
        if not mine:
            continue
        agent = agents.get(run.name)
        outcomes[run.name] = {}
        for t, res in mine.items():
            if agent is None:  # no definition any more: judged by the task the agent saw
                stale = ((res.get("key") or {}).get("run") or {}).get("task_digest") != digests[t]
            else:
                stale = res.get("status") in FINISHED and result_state_for_report(
                    res, suite.tasks_dir / t, agent, suite.prove, run / t, images.GRADER, grader_id) != "current"
            outcomes[run.name][t] = cell(res, stale)
        results[run.name] = mine
    commands = {name: " ".join(a.command) for name, a in agents.items()}
    return tasks, outcomes, results, commands


def write_report(tier: str = "aider", echo: bool = True) -> dict:
    """Build the report of ``tier`` from the files and write ``evals/<tier>/report.{md,json,html}`` and
    ``report.leaderboard.yml`` (atomically); print the Markdown when ``echo``. Returns the report data."""
    from rules.config import load_suite
    from rules.files import write_atomic, write_json

    suite = load_suite(tier)
    tasks, outcomes, results, commands = load(tier)
    report = build_report(tier, tasks, outcomes, results, commands)
    pages = render_pages(report)
    for name, text in pages.items():
        write_atomic(suite.dir / name, text)
    write_json(suite.dir / "report.json", report)
    if echo:
        print(pages["report.md"])
        if not tasks:
            print(f"(no published tasks in {suite.manifest_path}: run `doit gen:{tier}` first)")
    return report
