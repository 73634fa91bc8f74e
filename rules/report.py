"""The comparison report: every run with results on a tier, in Markdown, JSON and a self-contained HTML page.

A *run* is an agent with its setting values (``evals/<tier>/runs/<run>/``, named in its ``run.json``); the
report has one row per run, labelled with ``run.json``'s ``label`` (the folder name when there is none), and
shows every run that has any trial record, including runs whose every trial ended in ``error``.

Denominators are honest: pass@1 and pass@2 are over *all* the tier's published tasks (status ``kept`` or
``free`` in the manifest); a trial that did not finish (missing, an ``error``, or ``stale``: run on another
version of the task or of the agent's definition) counts as not passed, and a ``tampered`` trial (the graded
code forged its test report) is finished and never passed. Rates come with a 95% Wilson score interval; free
tasks (whose stub passes by design) are marked, and every rate is also given without them.

Repeats (``runs/<run>/<task>/`` is repeat 1, ``runs/<run>/<task>@<k>/`` repeat k): pass@k, its interval, the
per-language rates and the McNemar tests use repeat 1, so that every run is measured the same way and pairs
stay paired task by task; each run also gets the mean of its per-repeat rates with their sample standard
deviation and range. Two runs are compared on the tasks both finished with an exact McNemar test (two-sided
binomial test on the discordant pairs). Counts of trials (finished, errors by kind, tampered, timeouts, over
budget, stale, missing) and usage are over all repeats. The Aider leaderboard's record keys (``pass_rate_1``,
``pass_rate_2``, ``test_cases``, ``seconds_per_case``, ``total_cost``, ...) are written per run (repeat 1) so
results sit beside published numbers.

What a tier's report measures is its ``rules.tier.Profile``: its metrics (pass@1 and pass@2; or one rate such as
``resolved``), the group it breaks them down by (language, repository), its outcome words, and whether its trials
make attempts (retry until plausible: each run's ``attempt_stats``: plausible rate, attempts used, chosen attempt
not the first, and "resolved by any attempt", an upper bound that is never the score). Whether a stored result is
stale is the tier's call (``Tier.stale_judge``).

Pure functions compute the numbers from results (``build_report``) and the charts' geometry (``leaderboard``,
``heatmap``); ``load`` reads the files and ``render_pages`` renders the three pages (``rules.publish.write_report``
writes them, ``report.leaderboard.yml`` and the trial pages).
"""
from __future__ import annotations

import datetime as dt
import itertools
import json
import math
import statistics
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from rules.tier import Metric, Profile

REPORT_FORMAT = 2
Z95 = 1.959963984540054  # the standard normal's 97.5% quantile
ALPHA = 0.05
ERROR_KINDS = ("agent", "infrastructure")
TRIALS = "trials"  # the trial pages' folder, beside report.html (``rules.viewer``)
COMPARE = "compare"  # the pages comparing two runs side by side, beside report.html (``rules.viewer``)
REPEAT_SEP = "@"  # runs/<run>/<task>@<k>/ holds repeat k (k >= 2)


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


def spread(rates: list[float]) -> dict:
    """Mean and spread of per-repeat rates (fractions): ``{"repeats", "rates", "mean", "sd", "min", "max"}``;
    ``sd`` is the sample standard deviation (n - 1 in the denominator), None below two repeats; the others
    are None when there are no rates."""
    if not rates:
        return {"repeats": 0, "rates": [], "mean": None, "sd": None, "min": None, "max": None}
    return {"repeats": len(rates), "rates": list(rates), "mean": statistics.fmean(rates),
            "sd": statistics.stdev(rates) if len(rates) > 1 else None, "min": min(rates), "max": max(rates)}


def page_href(run: str, folder: str) -> str:
    """The relative URL of a trial's page from the tier's folder (where report.html is):
    ``trials/<run>/<trial folder>.html``, each part percent-quoted (a name may hold ``#``, ``?`` or spaces)."""
    from urllib.parse import quote

    return f"{TRIALS}/{quote(run, safe='')}/{quote(folder, safe='@')}.html"


def compare_href(a: str, b: str) -> str:
    """The relative URL, from the tier's folder, of the page that sets runs ``a`` and ``b`` (run names, A before
    B as ``compare`` pairs them) side by side on the tasks where they differ: ``compare/<a>/<b>.html``, each part
    percent-quoted."""
    from urllib.parse import quote

    return f"{COMPARE}/{quote(a, safe='')}/{quote(b, safe='')}.html"


def profile_of(tier: str) -> Profile:
    """The report profile of ``tier`` (its ``rules.tier.Tier.profile``), its outcome words counted
    (``count_words``). Raises ConfigError naming the known tiers for a tier lab does not know (never another
    tier's profile)."""
    from rules import tiers

    profile = tiers.get(tier).profile
    count_words(profile)
    return profile


@dataclass(frozen=True)
class TaskRow:
    """A published task of the tier: its name, its group labels (``groups``: the tier's, e.g. ``{"language":
    "go", "exercise": "bowling"}`` or ``{"repo": "pallets/flask"}``) and whether it is free."""

    task: str
    groups: dict
    free: bool

    def group(self, key: str) -> str:
        """The task's label ``key`` (``""`` when it has none)."""
        return str(self.groups.get(key, ""))


@dataclass
class Run:
    """One run's trials: ``run`` (its folder name), ``label`` (what the report shows), ``agent``,
    ``settings`` (setting name -> value), the agent's ``command`` (or None), and per repeat (1-based) the
    outcome word (``cell``) and the result data of each task that has a record. A run whose trials make
    attempts also has its ``agents`` (the list its attempts cycle through) and ``attempts`` (how many a trial may make), from run.json."""

    run: str
    label: str
    agent: str
    settings: dict = field(default_factory=dict)
    command: str | None = None
    agents: list[str] = field(default_factory=list)
    attempts: int | None = None
    outcomes: dict[int, dict[str, str]] = field(default_factory=dict)
    results: dict[int, dict[str, dict]] = field(default_factory=dict)


def error_kind(result: dict) -> str:
    """``"agent"`` or ``"infrastructure"``: who an ``error`` result is on (result.json ``error_kind``).
    A record written before lab told the two apart counts as infrastructure, which is what ``error`` meant
    then."""
    kind = result.get("error_kind")
    if kind is None and isinstance(result.get("error"), dict):
        kind = result["error"].get("kind") or result["error"].get("error_kind")
    return kind if kind in ERROR_KINDS else "infrastructure"


def error_message(result: dict) -> str:
    """The one-line message of an ``error`` result (``""`` when there is none)."""
    err = result.get("error")
    if isinstance(err, dict):
        err = err.get("message")
    return " ".join(str(err or "").split())


def tampered_tries(result: dict) -> list[dict]:
    """The tries of ``result`` whose grading said ``tampered``, and the attempts whose own held-out
    grading did: ``[{"try", "evidence": [lines]}]`` (``try`` is the attempt's number for an attempt; its
    evidence is its ``evidence`` or ``grade.evidence``, when the record keeps any). A try whose grading is an
    earlier try's (``reused_from_try``: the same tree) is that try's observation, not listed again."""
    out = []
    for i, t in enumerate(result.get("tries") or [], 1):
        grade = t.get("grade") or {}
        if grade.get("reused_from_try"):  # the same tree as an earlier try's: no second observation
            continue
        if grade.get("verdict") == "tampered" or t.get("outcome") == "tampered":
            out.append({"try": t.get("try", i), "evidence": [str(e) for e in grade.get("evidence") or []]})
    for i, a in enumerate(result.get("attempts") or [], 1):
        if a.get("status") == "tampered":
            lines = a.get("evidence") or (a.get("grade") or {}).get("evidence") or []
            out.append({"try": a.get("attempt", i), "evidence": [str(e) for e in lines]})
    return out


def suspicious_tries(result: dict) -> list[dict]:
    """The tries of ``result`` (and the attempts of a trial that makes attempts) whose graded change the
    suspicion scan flagged (``rules.scan``; a try's or an attempt's ``suspicions``): ``[{"try", "outcome",
    "flags": [{"name", "file", "line", "text", "why"}]}]``. A try whose grading is an earlier try's
    (``reused_from_try``: the same tree) is not listed again."""
    out = []
    for i, t in enumerate(result.get("tries") or [], 1):
        if t.get("suspicions") and not (t.get("grade") or {}).get("reused_from_try"):
            out.append({"try": t.get("try", i), "outcome": t.get("outcome"), "flags": list(t["suspicions"])})
    for i, a in enumerate(result.get("attempts") or [], 1):
        if a.get("suspicions"):
            out.append({"try": a.get("attempt", i), "outcome": a.get("status"), "flags": list(a["suspicions"])})
    return out


def flag_line(flag: dict) -> str:
    """A suspicion flag in one line: ``name file:line: text (why)`` (a path pattern's: ``name file (why)``)."""
    where = f"{flag.get('file')}:{flag['line']}: {flag.get('text')}" if flag.get("line") else f"{flag.get('file')}"
    return f"{flag.get('name')} {where} ({flag.get('why')})"


def cell(result: dict | None, stale: bool = False, profile: "Profile | None" = None) -> str:
    """A trial's outcome in one word: ``pass@N`` (passed on try N; a profile's own word: ``resolved``), ``fail``
    (or ``unresolved``), ``timeout``, ``over_budget`` (its last try went over its budget of model requests or
    tokens), ``tampered``, ``error:agent``, ``error:infrastructure``, ``stale`` or ``missing``. ``profile`` is the tier's (without one: ``pass@N`` and ``fail``)."""
    if result is None:
        return "missing"
    if stale:
        return "stale"
    status = result.get("status")
    if status == "pass":
        return (profile.passed if profile else None) or f"pass@{result.get('passed_try') or 1}"
    if status == "fail":
        return profile.failed if profile else "fail"
    if status in ("timeout", "over_budget", "tampered"):
        return status
    return f"error:{error_kind(result)}"


# outcome words besides pass@N: of a passed trial, and of one finished but not passed; a tier's profile adds its
# own (``count_words``), so that a word the report shows is a word it counts
PASSED = {"resolved"}
UNPASSED = {"fail", "unresolved", "timeout", "over_budget", "tampered"}


def count_words(profile: Profile) -> None:
    """Count ``profile``'s own outcome words (``passed``, ``failed``) as a passed and a finished, not passed,
    trial's. Raises ConfigError when a word would be both (two tiers' profiles that disagree)."""
    from rules.config import ConfigError

    for word, mine, other in ((profile.passed, PASSED, UNPASSED), (profile.failed, UNPASSED, PASSED)):
        if not word:
            continue
        if word in other or word.startswith(("pass@", "error:")) or word in ("missing", "stale"):
            raise ConfigError(f"tier {profile.tier!r}: its profile's outcome word {word!r} already means something "
                              "else to the report; give the profile another word")
        mine.add(word)


def passed_within(outcome: str, tries: int) -> bool:
    """True when the outcome word says the task passed on try ``tries`` or earlier (``resolved``: on the one
    grading of the chosen attempt, for a tier whose trials make attempts)."""
    if outcome.startswith("pass@"):
        return int(outcome[5:]) <= tries
    return outcome in PASSED


def finished(outcome: str) -> bool:
    """True for pass/fail/timeout/tampered outcomes (and a profile's own words: resolved/unresolved): the trial ran to its end
    on the current task and definition."""
    return outcome.startswith("pass@") or outcome in PASSED or outcome in UNPASSED


def _usage(results: list[dict]) -> dict:
    usages = [r.get("usage") for r in results if r.get("usage")]
    costs = [u["cost"] for u in usages if u.get("cost") is not None]
    return {"tokens_sent": sum(u.get("tokens_sent") or 0 for u in usages) if usages else None,
            "tokens_received": sum(u.get("tokens_received") or 0 for u in usages) if usages else None,
            "cost": round(sum(costs), 6) if costs else None, "usage_known": len(usages)}


def _counts(words: list[str], late: int = 2) -> dict:
    """Counts of outcome ``words``; ``passed_late``: passes on a try past ``late`` (the most tries a metric
    counts), which no rate counts."""
    return {"trials": sum(w != "missing" for w in words), "finished": sum(finished(w) for w in words),
            "errors": sum(w.startswith("error:") for w in words),
            "errors_agent": words.count("error:agent"), "errors_infrastructure": words.count("error:infrastructure"),
            "timeouts": words.count("timeout"), "over_budget": words.count("over_budget"),
            "tampered": words.count("tampered"),
            "stale": words.count("stale"), "missing": words.count("missing"),
            "passed_late": sum(w.startswith("pass@") and w[5:].isdigit() and int(w[5:]) > late for w in words)}


def graded_by(results: list[dict]) -> list[dict]:
    """Which grader images graded these results: ``[{"grader_image_id", "trials", "regraded"}]``, most trials
    first, from result.json ``graded`` (``grader_image_id``, ``regraded``) or else ``images.grader.id``;
    results naming no image are left out."""
    seen: dict[str, list[int]] = {}
    for res in results:
        graded = res.get("graded") if isinstance(res.get("graded"), dict) else {}
        image = graded.get("grader_image_id") or ((res.get("images") or {}).get("grader") or {}).get("id")
        if image:
            n = seen.setdefault(str(image), [0, 0])
            n[0] += 1
            n[1] += bool(graded.get("regraded"))
    return [{"grader_image_id": image, "trials": n, "regraded": m}
            for image, (n, m) in sorted(seen.items(), key=lambda kv: (-kv[1][0], kv[0]))]


def summarize(run: Run, tasks: list[TaskRow], today: str | None, profile: Profile) -> dict:
    """One run's row of the report; ``profile`` is the tier's.

    Returns ``{"run", "label", "agent", "settings", "command", "tasks", "free", "repeats": [k, ...],
    <metrics>, "without_free": {"tasks", <metrics>}, <groups>: {group: {"tasks", "finished", <metrics>}}``
    (all of repeat 1; rates as ``rate`` dicts; <metrics> are the profile's (``pass_1, pass_2``; ``resolved``),
    ``without_free`` only for a profile with free tasks; <groups> is the profile's ``groups``: ``languages``,
    ``repos``) ``, "repeat_rates": {<metric>: spread over the complete repeats}, "per_repeat": [{"repeat", <metrics>, <counts>}],
    <counts>, "error_messages": [{"kind", "message", "count", "trials"}], "tampered_evidence": [{"task",
    "repeat", "try", "status", "evidence"}], "suspicion_flags": [{"task", "repeat", "try", "outcome", "status",
    "flags", "lines" (``flag_line``)}] (``suspicious_tries``), "graded_by": [see graded_by], "one_try" (trials run with tries=1), "median_agent_seconds",
    "tokens_sent", "tokens_received", "cost", "usage_known", "leaderboard"}`` (the Aider leaderboard's record keys,
    repeat 1, for a profile with ``records``; one with ``attempts`` adds ``agents``, ``attempts`` (see ``attempt_stats``) and
    ``seconds`` (see ``seconds_of``)) where <counts> is ``trials, finished, errors, errors_agent,
    errors_infrastructure, timeouts, over_budget, tampered, stale, missing``: numbers of trials over all repeats
    (``missing``: tasks without a record in a repeat that has records). Seconds are over finished trials,
    usage over every trial that is not stale (all repeats).
    """
    repeats = sorted(k for k in run.outcomes if run.outcomes[k]) or [1]
    first = run.outcomes.get(1, {})
    kept = [r for r in tasks if not r.free]

    def count(rows: list[TaskRow], tries: int, outcomes: dict[str, str] = first) -> int:
        return sum(passed_within(outcomes.get(r.task, "missing"), tries) for r in rows)

    def rates(rows: list[TaskRow], outcomes: dict[str, str] = first) -> dict:
        return {m.key: rate(count(rows, m.tries, outcomes), len(rows)) for m in profile.metrics}

    count_words(profile)  # once per run: the rates below count its words
    words = {k: [run.outcomes.get(k, {}).get(r.task, "missing") for r in tasks] for k in repeats}
    late = max(m.tries for m in profile.metrics)
    per_repeat = [{"repeat": k, **rates(tasks, run.outcomes.get(k, {})), **_counts(words[k], late)} for k in repeats]
    everything = [w for k in repeats for w in words[k]]
    current = [(k, r.task, run.results[k][r.task]) for k in repeats for r in tasks
               if r.task in run.results.get(k, {}) and run.outcomes[k].get(r.task) != "stale"]
    done = [res for k, t, res in current if finished(run.outcomes[k][t])]
    agent_seconds = [res.get("agent_seconds", 0.0) for res in done]
    messages: dict[tuple[str, str], list[str]] = {}
    evidence, flagged = [], []
    for k, t, res in current:
        name = t if k == 1 else f"{t}{REPEAT_SEP}{k}"
        if run.outcomes[k][t].startswith("error:"):
            messages.setdefault((error_kind(res), error_message(res) or "(no message)"), []).append(name)
        for tt in tampered_tries(res):
            evidence.append({"task": t, "repeat": k, "try": tt["try"], "status": res.get("status"),
                             "evidence": tt["evidence"]})
        for tt in suspicious_tries(res):
            flagged.append({"task": t, "repeat": k, "try": tt["try"], "outcome": tt["outcome"],
                            "status": res.get("status"), "flags": tt["flags"],
                            "lines": [flag_line(f) for f in tt["flags"]]})
    row = {
        "run": run.run, "label": run.label, "agent": run.agent, "settings": dict(run.settings),
        "command": run.command, "tasks": len(tasks), "free": len(tasks) - len(kept), "repeats": repeats,
        **rates(tasks), **({"without_free": {"tasks": len(kept), **rates(kept)}} if profile.free else {}),
        profile.groups: {},
        # over complete repeats only: a repeat still under way is no measurement of the agent (its missing tasks
        # would count as failures and pull the mean down)
        "repeat_rates": {m.key: spread([p[m.key]["rate"] for p in per_repeat
                                        if p[m.key]["rate"] is not None and not p["missing"]])
                         for m in profile.metrics},
        "per_repeat": per_repeat, **_counts(everything, late),
        "error_messages": [{"kind": kind, "message": msg, "count": len(names), "trials": names}
                           for (kind, msg), names in sorted(messages.items(), key=lambda kv: (-len(kv[1]), kv[0]))],
        "tampered_evidence": evidence, "suspicion_flags": flagged,
        "graded_by": graded_by([res for _k, _t, res in current]),
        "one_try": sum(1 for _k, _t, res in current if res.get("tries_allowed") == 1),
        "median_agent_seconds": round(statistics.median(agent_seconds), 3) if agent_seconds else None,
        **_usage([res for _k, _t, res in current]),
    }
    for group in sorted({r.group(profile.group) for r in tasks}):
        rows = [r for r in tasks if r.group(profile.group) == group]
        row[profile.groups][group] = {"tasks": len(rows),
                                      "finished": sum(finished(first.get(r.task, "missing")) for r in rows),
                                      **rates(rows)}
    if profile.attempts:
        row["agents"] = list(run.agents) or [run.agent]
        row["attempts"] = attempt_stats(run, tasks)
        row["seconds"] = seconds_of(done, [res for _k, _t, res in current])
    if profile.records:
        row["leaderboard"] = leaderboard_record(run, tasks, first, current, today)
    return row


def leaderboard_record(run: Run, tasks: list[TaskRow], first: dict[str, str], current: list[tuple],
                       today: str | None) -> dict:
    """The Aider leaderboard's record keys for ``run`` from repeat 1 (``first``: task -> outcome word; ``current``:
    ``(repeat, task, result)`` of the trials that are not stale)."""
    n = len(tasks)
    passes = {k: sum(passed_within(first.get(r.task, "missing"), k) for r in tasks) for k in (1, 2)}
    first_current = [(t, res) for kk, t, res in current if kk == 1]
    first_done = [res for t, res in first_current if finished(first[t])]
    seconds = [res.get("seconds", 0.0) for res in first_done]
    usage1 = _usage([res for _t, res in first_current])
    grading_timeouts = sum(1 for res in first_done for t in res.get("tries", [])
                           if (t.get("grade") or {}).get("timed_out") and not t["grade"].get("reused_from_try"))
    return {
        "dirname": f"lab-{run.run}", "model": run.label, "test_cases": n, "completed_cases": len(first_done),
        "total_tests": n, "pass_rate_1": round(100 * passes[1] / n, 1) if n else 0.0,
        "pass_rate_2": round(100 * passes[2] / n, 1) if n else 0.0,
        "pass_num_1": passes[1], "pass_num_2": passes[2],
        "error_outputs": sum(w.startswith("error:") for w in first.values()), "test_timeouts": grading_timeouts,
        "seconds_per_case": round(sum(seconds) / len(seconds), 1) if seconds else 0.0,
        "total_cost": round(usage1["cost"], 4) if usage1["cost"] is not None else None,  # unknown: null, never 0
        "prompt_tokens": usage1["tokens_sent"], "completion_tokens": usage1["tokens_received"],
        "command": run.command, "date": today or dt.date.today().isoformat(), "versions": "lab",
    }


GRADED = ("pass", "fail", "timeout", "over_budget", "tampered")  # an attempt's held-out outcome when it was graded


def attempt_stats(run: Run, tasks: list[TaskRow]) -> dict:
    """The retry-until-plausible statistics of ``run``, over its finished trials of repeat 1 (not
    stale; ``n`` below): ``{"finished": n, "allowed": most attempts a trial might make (run.json
    ``attempts``, else the results' ``attempts_allowed``; None when unknown), "plausible": rate of trials
    whose chosen attempt was plausible (of n), "used_mean", "used_max" (attempts made per trial; None when
    n is 0), "chosen_not_first": rate of trials whose chosen attempt was not attempt 1 (of n), "any_resolved":
    rate (of all tasks) of tasks where the trial was resolved or any attempt's own held-out grading passed,
    "ungraded_attempts": attempts without a held-out outcome (then ``any_resolved`` may be low), "by_agent":
    {agent (``attempt_agent``, in order of appearance): {"attempts", "plausible", "resolved" (its attempts
    whose own grading passed), "chosen", "chosen_resolved"}}}``. ``any_resolved`` is an upper bound of what
    choosing among the attempts could score, never the score: the score (``resolved``) grades the chosen
    attempt only."""
    first = run.outcomes.get(1, {})
    done = [run.results[1][t.task] for t in tasks if finished(first.get(t.task, "missing"))]
    n = len(done)
    used = [len(res.get("attempts") or []) for res in done]
    allowed = [res["attempts_allowed"] for res in run.results.get(1, {}).values()
               if isinstance(res.get("attempts_allowed"), int)]
    by_agent: dict[str, dict] = {}
    for res in done:
        for i, a in enumerate(res.get("attempts") or []):
            s = by_agent.setdefault(attempt_agent(a), dict.fromkeys(
                ("attempts", "plausible", "resolved", "chosen", "chosen_resolved"), 0))
            s["attempts"] += 1
            s["plausible"] += a.get("plausible") is True
            s["resolved"] += a.get("status") == "pass"
            if i == res.get("chosen"):
                s["chosen"] += 1
                s["chosen_resolved"] += res.get("status") == "pass"
    return {
        "finished": n, "allowed": run.attempts or (max(allowed) if allowed else None),
        "plausible": rate(sum(res.get("plausible") is True for res in done), n),
        "used_mean": round(statistics.fmean(used), 3) if used else None, "used_max": max(used) if used else None,
        "chosen_not_first": rate(sum(isinstance(res.get("chosen"), int) and res["chosen"] > 0 for res in done), n),
        "any_resolved": rate(sum(resolved_by_any(res) for res in done), len(tasks)),
        "ungraded_attempts": sum(a.get("status") not in GRADED for res in done for a in res.get("attempts") or []),
        "by_agent": by_agent,
    }


def resolved_by_any(result: dict) -> bool:
    """True when the trial ``result`` (one that makes attempts) was resolved or any of its attempts passed its own held-out grading."""
    return result.get("status") == "pass" or any(a.get("status") == "pass" for a in result.get("attempts") or [])


def attempt_agent(attempt: dict) -> str:
    """Who made an attempt, as the report names it: its ``label`` (the agent with its setting values, so two
    models of one agent stay apart), else its ``run``, else its agent's name, else ``"?"``."""
    return str(attempt.get("label") or attempt.get("run") or attempt.get("agent") or "?")


def seconds_of(done: list[dict], current: list[dict]) -> dict:
    """Time of a run whose trials make attempts: ``{"median": wall seconds per finished trial, "agent", "grading", "wall": sums over
    every trial that is not stale}`` (None where there is nothing to count)."""
    walls = [res.get("seconds") or 0.0 for res in done]
    total = {k: round(sum(res.get(f) or 0.0 for res in current), 3) if current else None
             for k, f in (("agent", "agent_seconds"), ("grading", "grading_seconds"), ("wall", "seconds"))}
    return {"median": round(statistics.median(walls), 3) if walls else None, **total}


def attempt_cell(result: dict) -> dict:
    """A matrix cell's attempts: ``{"chosen": 1-based attempt number or None, "used", "plausible",
    "any_resolved", "attempts": [{"attempt", "agent", "plausible", "problems", "why" (see ``why_not``),
    "status"}]}``."""
    attempts = result.get("attempts") or []
    chosen = result.get("chosen")
    return {"chosen": chosen + 1 if isinstance(chosen, int) else None, "used": len(attempts),
            "plausible": result.get("plausible"),
            "any_resolved": resolved_by_any(result),
            "attempts": [{"attempt": a.get("attempt", i), "agent": attempt_agent(a), "plausible": a.get("plausible"),
                          "problems": a.get("problems"), "why": why_not(a), "status": a.get("status")}
                         for i, a in enumerate(attempts, 1)]}


def why_not(attempt: dict) -> str:
    """Why an attempt was not plausible, in one line: its edit's problem, its first lint message (and how many
    more), how many pre-existing tests it broke; ``""`` when the record names none."""
    lint, broken = attempt.get("lint") or [], attempt.get("broken") or []
    parts = [str(attempt["edit"])] if attempt.get("edit") else []
    if lint:
        parts.append(f"lint: {lint[0]}" + (f" (and {len(lint) - 1} more)" if len(lint) > 1 else ""))
    if broken:
        parts.append(f"broke {len(broken)} pre-existing test(s): {', '.join(map(str, broken[:3]))}"
                     + (" …" if len(broken) > 3 else ""))
    return "; ".join(parts)


def rank_key(row: dict, profile: Profile) -> tuple:
    """Leaderboard order: the headline rate (repeat 1) high to low, then the other metrics' (pass@2, then
    pass@1; the only one, resolved), then label."""
    metrics = profile.metrics
    return tuple(-(row[m.key]["rate"] or 0.0) for m in reversed(metrics)) + (row["label"], row["run"])


def paired_tasks(a: Run, b: Run, tasks: list[TaskRow], metric: Metric) -> dict[str, list[str]]:
    """The tasks of runs ``a`` and ``b`` in repeat 1 at ``metric``, each list in ``tasks``' order: ``{"paired"
    (both finished), "a_only" (A passed and B did not: the discordant pairs one way), "b_only" (the other
    way), "both", "neither", "unpaired" (not finished by one or both)}``."""
    oa, ob = a.outcomes.get(1, {}), b.outcomes.get(1, {})
    out: dict[str, list[str]] = {k: [] for k in ("paired", "a_only", "b_only", "both", "neither", "unpaired")}
    for r in tasks:
        wa, wb = oa.get(r.task, "missing"), ob.get(r.task, "missing")
        if not (finished(wa) and finished(wb)):
            out["unpaired"].append(r.task)
            continue
        out["paired"].append(r.task)
        pa, pb = passed_within(wa, metric.tries), passed_within(wb, metric.tries)
        out["both" if pa and pb else "a_only" if pa else "b_only" if pb else "neither"].append(r.task)
    return out


def compare(a: Run, b: Run, tasks: list[TaskRow], metric: Metric) -> dict:
    """Runs ``a`` and ``b`` on the tasks both finished in repeat 1, at ``metric``: ``{"a", "b", "a_label",
    "b_label", "metric" (its name: ``pass@2``, ``resolved``), "paired", "a_only", "b_only", "both",
    "neither", "p_value", "significant"}`` (counts of ``paired_tasks``; exact McNemar, 5% level; ``a``/``b`` are run
    names)."""
    n = {k: len(v) for k, v in paired_tasks(a, b, tasks, metric).items()}
    p = mcnemar_exact(n["a_only"], n["b_only"])
    return {"a": a.run, "b": b.run, "a_label": a.label, "b_label": b.label, "metric": metric.name,
            "paired": n["paired"], "a_only": n["a_only"], "b_only": n["b_only"], "both": n["both"],
            "neither": n["neither"], "p_value": p, "significant": p < ALPHA}


def warnings_of(rows: list[dict], profile: Profile) -> list[str]:
    """Loud one-line warnings about rows whose numbers say little: most trials ended in ``error``, a repeat
    is incomplete or repeat 1 is absent, trials are stale or tampered, or passed only on a try past the
    report's pass@2."""
    out = []
    for row in rows:
        if row["trials"] and row["errors"] * 2 > row["trials"]:
            out.append(f"{row['label']}: {row['errors']} of {row['trials']} trials ended in error "
                       f"({row['errors_agent']} agent, {row['errors_infrastructure']} infrastructure); "
                       f"its {profile.rate_noun} says little about the agent or model")
        if row["tampered"]:
            out.append(f"{row['label']}: {row['tampered']} trial(s) tampered with their test report "
                       f"(counted as not {profile.verb}; evidence in report.json)")
        passes = [e for e in row.get("suspicion_flags") or [] if e["status"] == "pass"]
        if passes:
            out.append(f"{row['label']}: {len(passes)} {profile.try_word}(s) of trials that count as {profile.verb} "
                       f"carry suspicion flags ({', '.join(sorted({e['task'] for e in passes}))}): review them in the "
                       f"Suspicion flags table")
        if row.get("passed_late"):
            late = max(m.tries for m in profile.metrics)
            out.append(f"{row['label']}: {row['passed_late']} trial(s) passed only on try {late + 1} or later (a run "
                       f"with tries={late + 1} or more): {' and '.join(m.name for m in profile.metrics)} count them "
                       f"as not passed; see the matrix")
        if row.get("one_try") and any(m.tries > 1 for m in profile.metrics):
            out.append(f"{row['label']}: {row['one_try']} trial(s) were run with tries=1: their "
                       f"{', '.join(m.name for m in profile.metrics if m.tries > 1)} is their first try's, "
                       f"no second try was measured")
        if len(row["repeats"]) == 1 and row["per_repeat"] and row["per_repeat"][0]["missing"]:
            p = row["per_repeat"][0]
            out.append(f"{row['label']}: {p['missing']} of {row['tasks']} tasks have no trial yet; {profile.rates} "
                       f"and their intervals count them as not {profile.verb}")
        if row["stale"]:
            out.append(f"{row['label']}: {row['stale']} stale trial(s) (another task version or agent definition),"
                       f" counted as not {profile.verb} until run again")
        if 1 not in row["repeats"] or not row["per_repeat"][0]["trials"]:
            out.append(f"{row['label']}: no trial of repeat 1, which {profile.rates} and the paired tests use; "
                       f"see its other repeats")
        if len(row["repeats"]) > 1:
            short = [p for p in row["per_repeat"] if p["missing"]]
            if short:
                out.append(f"{row['label']}: repeat(s) {', '.join(str(p['repeat']) for p in short)} incomplete "
                           f"({', '.join(str(p['trials']) for p in short)} of {row['tasks']} trials): left out "
                           f"of the mean over repeats until they finish")
        others = [e for e in row["tampered_evidence"] if e["status"] != "tampered"] if profile.attempts else []
        if others:
            out.append(f"{row['label']}: {len(others)} attempt(s) tampered with their test report in trials that "
                       f"chose another attempt ({', '.join(sorted({e['task'] for e in others}))}); the trial's "
                       f"outcome is its chosen attempt's, the evidence is in the Tampering table")
        if profile.attempts and row["attempts"]["ungraded_attempts"]:
            out.append(f"{row['label']}: {row['attempts']['ungraded_attempts']} attempt(s) have no held-out outcome"
                       f" of their own: 'resolved by any attempt' counts them as not resolved")
    return out


def build_report(tier: str, tasks: list[TaskRow], runs: list[Run], generated: str | None = None,
                 notes: list[str] | None = None) -> dict:
    """The whole report as data (``report.json``): ``{"version", "tier", "generated", "tasks": {"total",
    "kept", "free", "free_tasks", <groups>}, "agents": [summarize rows, one per run, in leaderboard order],
    "comparisons": [compare, for each metric (pass@1 and pass@2; resolved) of each pair], "matrix": [{"task",
    <the task's group labels: language, exercise; repo>, "free", "outcomes": {run: word of repeat 1}, "repeats": {run:
    [word per repeat]} (runs with more than one repeat), "evidence": {run: [lines]} (tampered cells of repeat
    1), (trials that make attempts: "attempts": {run: attempt_cell}, cells of repeat 1 with a record)}], "warnings": [lines]}``;
    <groups> is the tier's (``languages``, ``repos``: name -> tasks; see ``Profile``); ``"metric"`` and
    ``"group"`` name the profile's headline metric and group. ``notes`` are extra warnings (e.g. unreadable records) put
    first."""
    profile = profile_of(tier)
    generated = generated or dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds")
    rows = sorted((summarize(r, tasks, generated[:10], profile) for r in runs), key=lambda row: rank_key(row, profile))
    by_name = {r.run: r for r in runs}
    ordered = [by_name[row["run"]] for row in rows]
    pairs = [compare(a, b, tasks, m) for a, b in itertools.combinations(ordered, 2) for m in profile.metrics]
    groups: dict[str, int] = {}
    for r in tasks:
        groups[r.group(profile.group)] = groups.get(r.group(profile.group), 0) + 1
    matrix = []
    for t in tasks:
        entry = {"task": t.task, **t.groups, "free": t.free,
                 "outcomes": {r.run: r.outcomes.get(1, {}).get(t.task, "missing") for r in ordered},
                 "repeats": {}, "evidence": {}}
        if profile.attempts:
            entry["attempts"] = {r.run: attempt_cell(r.results[1][t.task]) for r in ordered
                                 if t.task in r.results.get(1, {})}
        for r, row in zip(ordered, rows):
            if len(row["repeats"]) > 1:
                entry["repeats"][r.run] = [r.outcomes.get(k, {}).get(t.task, "missing") for k in row["repeats"]]
            if entry["outcomes"][r.run] == "tampered":
                tries = tampered_tries(r.results[1][t.task])
                entry["evidence"][r.run] = [line for tt in tries for line in tt["evidence"]]
        matrix.append(entry)
    out = {
        "version": REPORT_FORMAT, "tier": tier, "generated": generated,
        "tasks": {"total": len(tasks), "kept": sum(not r.free for r in tasks), "free": sum(r.free for r in tasks),
                  "free_tasks": [r.task for r in tasks if r.free], profile.groups: dict(sorted(groups.items()))},
        "agents": rows, "comparisons": pairs, "matrix": matrix,
        "warnings": list(notes or []) + warnings_of(rows, profile),
    }
    out.update(metric=profile.headline.name, group=profile.group)
    return out


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


def mean_sd(s: dict | None) -> str:
    """``"45.0% ± 3.2 (40.0–48.0, 3 repeats)"`` for a ``spread`` dict (percent; ± is the sample standard
    deviation); ``"45.0% (1 repeat)"`` for one repeat; ``"–"`` for none."""
    if not s or s.get("mean") is None:
        return "–"
    if s["repeats"] < 2:
        return f"{100 * s['mean']:.1f}% (1 repeat)"
    return (f"{100 * s['mean']:.1f}% ± {100 * s['sd']:.1f} ({100 * s['min']:.1f}–{100 * s['max']:.1f}, "
            f"{s['repeats']} repeats)")


def pvalue(p: float) -> str:
    """A p-value for people: 4 significant digits, ``<0.0001`` below that."""
    return "<0.0001" if p < 1e-4 else f"{p:.4g}"


def si(n: int | None) -> str:
    """A count for a narrow cell: ``"950"``, ``"561k"``, ``"1.23M"``; ``"–"`` for None."""
    if n is None:
        return "–"
    if n < 1000:
        return str(n)
    if n < 1_000_000:
        return f"{n / 1000:.0f}k"
    return f"{n / 1_000_000:.3g}M"


def settings_text(settings: dict) -> str:
    """``"model=openai/gpt-4o"``: a run's setting values, ``", "``-separated; ``""`` when there are none."""
    return ", ".join(f"{k}={v}" for k, v in sorted(settings.items()))


def word_text(word: str) -> str:
    """A matrix cell's text: the outcome word, with ``error:agent`` shortened to ``error (agent)`` and
    ``error:infrastructure`` to ``error (infra)``."""
    if word.startswith("error:"):
        kind = word.split(":", 1)[1]
        return f"error ({'infra' if kind == 'infrastructure' else kind})"
    return word


SHORT = {"fail": "✗", "timeout": "TO", "over_budget": "BUD", "tampered": "TAMP", "error:agent": "E·ag", "error:infrastructure": "E·inf",
         "stale": "old", "missing": "–", "resolved": "✓", "unresolved": "✗"}


def word_short(word: str) -> str:
    """A matrix cell's text when many runs share the page: ``✓1``/``✓2`` (passed on try 1/2), ``✗`` (fail),
    ``TO`` (timeout), ``BUD`` (over budget), ``TAMP`` (tampered), ``E·ag``/``E·inf`` (error, agent/infrastructure), ``old``
    (stale), ``–`` (missing); ``✓`` (resolved) and ``✗`` (unresolved)."""
    return f"✓{word[5:]}" if word.startswith("pass@") else SHORT.get(word, word)


LOOKS = {"resolved": "pass1", "unresolved": "fail"}  # a one-grading profile's words look like a pass on try 1 and a fail


def word_class(word: str) -> str:
    """A CSS class for an outcome word (``o-pass1``, ``o-fail``, ``o-error``, ...; ``resolved`` looks like
    ``pass@1``, ``unresolved`` like ``fail``)."""
    word = LOOKS.get(word, word)
    return "o-" + word.split(":", 1)[0].replace("@", "")


def attempts_title(cell: dict) -> str:
    """The hover text of a matrix cell's attempts (see ``attempt_cell``): a line for the chosen attempt,
    then one per attempt (agent, plausible or its problems, its own held-out outcome); each line starts with
    a newline."""
    chosen = cell.get("chosen")
    head = (f"chosen: attempt {chosen} of {cell['used']}" if chosen else f"no attempt chosen ({cell['used']} made)")
    head += ", plausible" if cell.get("plausible") else ", none plausible: the least bad" if chosen else ""
    lines = [head]
    for a in cell.get("attempts") or []:
        judged = "plausible" if a.get("plausible") else f"not plausible ({a.get('why') or str(a.get('problems')) + ' problem(s)'})"
        lines.append(f"{a['attempt']}. {a.get('agent') or '?'}: {judged}; held-out {a.get('status') or 'not graded'}")
    return "".join("\n" + line for line in lines)


CHAR_PX = 7.0  # a generous average advance of a 12 px system-ui character, to fit labels in SVG


def fit(text: str, px: float, char_px: float = CHAR_PX) -> str:
    """``text`` shortened in the middle with "…" so that it fits ``px`` SVG units at ``char_px`` per
    character (model names keep both ends: ``tomo (openrouter/…/claude-3.7-sonnet)``); unchanged when it
    fits."""
    room = max(3, int(px // char_px))
    if len(text) <= room:
        return text
    head = (room - 1) * 2 // 5
    tail = room - 1 - head
    return text[:head] + "…" + text[len(text) - tail:]


LABEL_MIN, LABEL_MAX = 100, 400  # SVG units left of a chart for the runs' labels


def label_width(rows: list[dict]) -> int:
    """SVG units for the charts' label column: room for the longest ``"N. label"`` (at ``CHAR_PX`` per
    character), between ``LABEL_MIN`` and ``LABEL_MAX``; longer labels are shortened with ``fit``."""
    longest = max((len(f"{i + 1}. {row['label']}") for i, row in enumerate(rows)), default=0)
    return int(min(LABEL_MAX, max(LABEL_MIN, longest * CHAR_PX + 16)))


def _blend(f: float) -> str:
    lo, hi = (239, 243, 255), (8, 48, 107)  # a sequential blue scale: 0% light, 100% dark
    f = min(1.0, max(0.0, f))
    return "#" + "".join(f"{round(a + (b - a) * f):02x}" for a, b in zip(lo, hi))


def leaderboard(report: dict, width: int = 1180) -> dict:
    """Geometry of the leaderboard chart: one horizontal bar per run in leaderboard order, the headline rate
    (pass@2, or resolved; repeat 1) with its 95% Wilson interval as a whisker, the first metric as the
    darker inner bar when the tier has two (pass@1), the mean over repeats as a diamond (runs with repeats),
    and for a tier whose trials make attempts the share resolved by any attempt (an upper bound, not the score) as a dashed
    outline. ``{"width", "height", "plot": {"x0", "x1", "y0", "y1"}, "grid": [{"x", "text"}], "legend": [{"x",
    "kind", "text"}], "rows": [{"y", "mid", "h", "label", "title", "w1" (None without an inner bar), "w2",
    "lo", "hi", "mean", "bound" (width of the upper bound's outline, or None), "value", "note", "note_x"}]}``
    in SVG user units (x values absolute, ``w1``/``w2``/``bound`` widths)."""
    prof = profile_of(report["tier"])
    head, inner = prof.headline, (prof.metrics[0] if len(prof.metrics) > 1 else None)
    rows = report["agents"]
    label_w, right_w, top, row_h, bar_h, bottom = label_width(rows), 350, 46, 24, 14, 10
    x0, x1 = label_w, width - right_w
    pw = x1 - x0
    y1 = top + row_h * max(1, len(rows))
    out = {"width": width, "height": y1 + bottom + 16, "plot": {"x0": x0, "x1": x1, "y0": top, "y1": y1},
           "grid": [{"x": round(x0 + pw * f, 1), "text": f"{int(f * 100)}%"} for f in (0, 0.25, 0.5, 0.75, 1)],
           "legend": [], "rows": []}
    legend = [("bar2", head.name), ("bar1", inner.name)] if inner else [("bar", head.name)]
    legend.append(("whisker", f"95% interval of {head.name}"))
    if any(len(r["repeats"]) > 1 for r in rows):
        legend.append(("mean", f"mean {head.name} over repeats"))
    if prof.attempts:
        legend.append(("bound", "resolved by any attempt (upper bound, not the score)"))
    x = x0
    for kind, text in legend:
        out["legend"].append({"x": round(x, 1), "kind": kind, "text": text})
        x += 24 + len(text) * CHAR_PX + 18
    for i, row in enumerate(rows):
        p2 = row[head.key]
        lo, hi = p2["ci"] or [0.0, 0.0]
        y = top + i * row_h + (row_h - bar_h) / 2
        mean = row["repeat_rates"][head.key]["mean"] if len(row["repeats"]) > 1 else None
        bound = row["attempts"]["any_resolved"]["rate"] if prof.attempts else None
        notes = []
        if row["errors"]:
            notes.append(f"{row['errors']} error{'s' if row['errors'] != 1 else ''}")
        if row["tampered"]:
            notes.append(f"{row['tampered']} tampered")
        if row["stale"]:
            notes.append(f"{row['stale']} stale")
        value = f"{100 * (p2['rate'] or 0):.1f}% [{100 * lo:.1f}–{100 * hi:.1f}]"
        full = f"{i + 1}. {row['label']}"
        title = f"{full}: {head.name} {pct(p2)} {ci(p2)}"
        if inner:
            title += f", {inner.name} {pct(row[inner.key])}"
        if bound is not None:
            title += f"; resolved by any attempt (upper bound) {pct(row['attempts']['any_resolved'])}"
        if mean is not None:
            title += f"; over repeats {mean_sd(row['repeat_rates'][head.key])}"
        out["rows"].append({
            "y": round(y, 1), "mid": round(y + bar_h / 2, 1), "h": bar_h, "label": fit(full, label_w - 14), "title": title,
            "w1": round(pw * (row[inner.key]["rate"] or 0), 1) if inner else None, "w2": round(pw * (p2["rate"] or 0), 1),
            "lo": round(x0 + pw * lo, 1), "hi": round(x0 + pw * hi, 1),
            "mean": round(x0 + pw * mean, 1) if mean is not None else None,
            "bound": round(pw * bound, 1) if bound is not None else None,
            "value": value, "note": fit(" · ".join(notes), right_w - 16 - len(value) * CHAR_PX) if notes else "",
            "note_x": round(x1 + 12 + len(value) * CHAR_PX, 1),
        })
    return out


NONE_FILL = "#c9c9c9"  # a heat-map cell whose run finished no trial of that language


def heatmap(report: dict, width: int = 1180) -> dict:
    """Geometry of the group × run heat map (language × run, repository × run): one row per run
    (leaderboard order), one column per group, each cell the run's headline rate (pass@2, or resolved;
    repeat 1) on that group's tasks. ``{"width", "height", "x0", "top", "columns": [{"x", "text", "title"}],
    "rows": [{"y", "label", "title"}], "cells": [{"x", "y", "w", "h", "fill", "ink", "text", "none",
    "title"}], "legend": [{"x", "y", "fill", "text"}]}``; a cell is ``none`` (drawn grey) when the run
    finished no trial of that group. A column's text is the group's last ``/`` part (``pytest (17)`` for
    ``pytest-dev/pytest``); its title the whole name."""
    prof = profile_of(report["tier"])
    rows, langs = report["agents"], report["tasks"][prof.groups]
    label_w, top, ch = label_width(rows), 34, 22
    cw = max(40.0, min(110.0, (width - label_w - 10) / max(1, len(langs))))
    out = {"width": round(label_w + cw * len(langs) + 10, 1), "x0": label_w, "top": top,
           "columns": [], "rows": [], "cells": [], "legend": []}
    for j, (lang, n) in enumerate(langs.items()):
        head = f"{lang} ({n})"
        out["columns"].append({"x": round(label_w + (j + 0.5) * cw, 1),
                               "text": fit(f"{lang.rsplit('/', 1)[-1]} ({n})", cw - 4), "title": head})
    for i, row in enumerate(rows):
        y = top + i * ch
        full = f"{i + 1}. {row['label']}"
        out["rows"].append({"y": round(y + ch / 2 + 4, 1), "label": fit(full, label_w - 14), "title": full})
        for j, lang in enumerate(langs):
            stats = row[prof.groups].get(lang, {})
            r = stats.get(prof.headline.key) or rate(0, 0)
            f = r["rate"]
            none = not stats.get("finished")
            out["cells"].append({
                "x": round(label_w + j * cw + 1, 1), "y": round(y + 1, 1), "w": round(cw - 2, 1), "h": ch - 2,
                "fill": NONE_FILL if none or f is None else _blend(f), "ink": "#ffffff" if (f or 0) > 0.5 else "#222222",
                "text": f"{100 * f:.0f}%" if f is not None else "–", "none": none,
                "title": f"{row['label']} · {lang}: {prof.headline.name} {pct(r)} {ci(r)}"
                         + (f"; no trial of this {prof.group} finished (errors, stale or missing)" if none else "")})
    legend_y = top + ch * max(1, len(rows)) + 14
    for k, f in enumerate((0, 0.25, 0.5, 0.75, 1)):
        out["legend"].append({"x": label_w + k * 64, "y": legend_y, "fill": _blend(f), "text": f"{int(f * 100)}%"})
    out["legend"].append({"x": label_w + 5 * 64 + 16, "y": legend_y, "fill": NONE_FILL, "text": "none finished"})
    out["height"] = legend_y + 22
    # room for the legend too when there are few columns (one repository, two languages)
    out["width"] = max(out["width"], round(out["legend"][-1]["x"] + 22 + len("none finished") * CHAR_PX + 4, 1))
    return out


def comparison_grid(report: dict, metric: str) -> list[dict]:
    """The paired comparisons at ``metric`` as a lower triangle in leaderboard order: ``[{"run", "label",
    "cells": [comparison or None, ...]}]`` where row i's cell j (j < i) compares run j (A) with run i (B)."""
    by_pair = {(c["a"], c["b"]): c for c in report["comparisons"] if c["metric"] == metric}
    runs = report["agents"]
    return [{"run": b["run"], "label": b["label"],
             "cells": [by_pair.get((a["run"], b["run"])) if j < i else None for j, a in enumerate(runs)]}
            for i, b in enumerate(runs)]


def render_pages(report: dict) -> dict[str, str]:
    """The report's pages from its data: ``{"report.md": ..., "report.html": ..., "report.leaderboard.yml": ...}``
    (the leaderboard records only for a tier whose profile has ``records``)."""
    from rules.render import environment

    env = environment().overlay()
    env.filters.update(pct=pct, ci=ci, pvalue=pvalue, mean_sd=mean_sd, settings_text=settings_text,
                       word_text=word_text, word_class=word_class, word_short=word_short,
                       short_id=lambda i: i if len(i) <= 19 else i[:19] + "…",
                       p2=lambda p: "<0.0001" if p < 1e-4 else f"{p:.2g}",
                       passes=lambda words: sum(w.startswith("pass@") or w in PASSED for w in words), si=si,
                       seconds=lambda v: "–" if v is None else f"{v:.1f}",
                       attempts_mean=lambda v: "–" if v is None else f"{v:.2f}", attempts_title=attempts_title,
                       fit=lambda text, chars: fit(text, chars * CHAR_PX), trial_href=page_href, compare_href=compare_href,
                       unlabelled_settings=lambda row: any(str(v) not in row["label"] for v in row["settings"].values()))
    prof = profile_of(report["tier"])
    md = env.get_template("report/report.md.j2").render(r=report, prof=prof)
    html = env.get_template("report/report.html.j2").render(
        r=report, prof=prof, board=leaderboard(report), heat=heatmap(report),
        grid=comparison_grid(report, prof.headline.name))
    pages = {"report.md": md, "report.html": html}
    if prof.records:
        pages["report.leaderboard.yml"] = env.get_template("report/leaderboard.yml.j2").render(
            r=report, dump=lambda v: json.dumps(v, ensure_ascii=False))
    return pages


# ---- the files ----

def trial_folder(name: str) -> tuple[str, int]:
    """``(task, repeat)`` of a trial folder's name: ``python-bowling`` is repeat 1, ``python-bowling@3``
    repeat 3 (``@k`` with k >= 2; anything else is part of the task name)."""
    task, sep, k = name.rpartition(REPEAT_SEP)
    if sep and k.isdigit() and int(k) >= 2 and task:
        return task, int(k)
    return name, 1


def run_agent(agents: dict, name: str, settings: dict):
    """The current definition of a run's agent with the run's setting values, or None (unknown agent, or
    settings the definition cannot take). Uses ``Agent.with_values`` where rules.agents has it; without it a
    run with setting values cannot be checked against the definition and gets None."""
    agent = agents.get(name)
    if agent is None or not settings:
        return agent
    with_values = getattr(agent, "with_values", None)
    if with_values is None:
        return None
    from rules.config import ConfigError

    try:
        return with_values(settings)
    except ConfigError:  # AgentError: settings this definition does not declare
        return None


def with_attempt_evidence(result: dict, trial_dir: Path) -> dict:
    """``result`` (a trial that makes attempts) with each tampered attempt's ``evidence`` read from its own trial record
    (``<trial_dir>/<attempt folder>/result.json``, the tries whose grading said tampered) when the attempt
    carries none; an unreadable record gives none. ``result`` itself is not changed."""
    from rules.files import read_json

    attempts = []
    for a in result.get("attempts") or []:
        if isinstance(a, dict) and a.get("status") == "tampered" and not a.get("evidence") and a.get("folder"):
            try:
                own = read_json(Path(trial_dir) / str(a["folder"]) / "result.json")
            except ValueError:
                own = None
            a = {**a, "evidence": [line for t in tampered_tries(own) for line in t["evidence"]]
                 if isinstance(own, dict) else []}
        attempts.append(a)
    return {**result, "attempts": attempts} if "attempts" in result else result


def _damage(res) -> str | None:
    """What makes a stored trial result unreadable to the report (one phrase), or None: it must be a JSON object
    with a string ``status`` (``rules.records.TrialResult``, ``SweResult``), and its ``tries`` or ``attempts``,
    when there, a list of objects."""
    if not isinstance(res, dict):
        return "not a JSON object"
    if not isinstance(res.get("status"), str):
        return f"field 'status' should be a string, it is {res.get('status')!r}"
    for key in ("tries", "attempts"):
        value = res.get(key)
        if value is not None and not (isinstance(value, list) and all(isinstance(v, dict) for v in value)):
            return f"field {key!r} should be a list of objects"
    return None


def load_runs(runs_dir: Path, tasks: list[TaskRow], tasks_dir: Path, agents: dict,
              judge: Callable[..., bool], profile: Profile) -> tuple[list[Run], list[str]]:
    """Every run below ``runs_dir`` with at least one readable ``result.json`` of a published task:
    (runs, notes). ``tasks_dir`` holds the published tasks, ``agents`` maps an agent name to its current
    definition, ``judge(result, task_dir, agent, trial_dir)`` says whether a finished result is stale (the
    tier's ``stale_judge``) and ``profile`` is the tier's. A run's label, agent and settings come from
    its ``run.json`` (without one: the folder name, and the settings its results record; a run whose trials make
    attempts, its ``agents`` and ``attempts`` too); ``notes`` name records that could not be read."""
    from rules.files import read_json

    published = {r.task for r in tasks}
    runs: list[Run] = []
    notes: list[str] = []
    folders = sorted(p for p in Path(runs_dir).glob("*") if p.is_dir()) if Path(runs_dir).is_dir() else []
    for folder in folders:
        try:
            meta = read_json(folder / "run.json") or {}
        except ValueError:
            meta = {}
            notes.append(f"{folder / 'run.json'}: not valid JSON; using the folder name as the run's label")
        meta = meta if isinstance(meta, dict) else {}
        records = []
        for trial in sorted(p for p in folder.glob("*") if p.is_dir()):
            task, k = trial_folder(trial.name)
            if task not in published:
                continue
            try:
                res = read_json(trial / "result.json")
            except ValueError:
                notes.append(f"{trial / 'result.json'}: not valid JSON; the trial counts as missing")
                continue
            if res is None:  # no record yet
                continue
            problem = _damage(res)
            if problem:
                notes.append(f"{trial / 'result.json'}: {problem}; the trial counts as missing (run it again)")
                continue
            records.append((trial, task, k, res))
        if not records:
            continue
        settings = meta.get("settings") if "settings" in meta else records[0][3].get("settings")
        run = Run(run=folder.name, label=str(meta.get("label") or folder.name),
                  agent=str(meta.get("agent") or folder.name), settings=dict(settings or {}),
                  agents=[str(a) for a in meta.get("agents") or records[0][3].get("agents") or []],
                  attempts=meta.get("attempts") if isinstance(meta.get("attempts"), int) else None)
        agent = run_agent(agents, run.agent, run.settings)
        run.command = " ".join(agents[run.agent].command) if run.agent in agents else None
        for trial, task, k, res in records:
            stale = finished(cell(res, profile=profile)) and judge(res, Path(tasks_dir) / task, agent, trial)
            run.outcomes.setdefault(k, {})[task] = cell(res, stale, profile)
            run.results.setdefault(k, {})[task] = with_attempt_evidence(res, trial) if profile.attempts else res
        runs.append(run)
    return runs, notes


def load(tier: str) -> tuple[list[TaskRow], list[Run], list[str]]:
    """Read the tier's manifest and every run's results: (tasks, runs, notes); see ``load_runs``. A task's
    group labels are its manifest entry's (the tier's ``groups``), else its task.json's. Raises ConfigError when
    evals/agents.toml cannot be read at all (missing, not TOML): without it every run would lose its agent's
    command and every result would look stale (one badly defined agent leaves only that agent's unjudged)."""
    from rules import tiers
    from rules.agents import AgentError, load_agents
    from rules.config import ConfigError, load_suite
    from rules.files import read_json

    suite = load_suite(tier)
    the_tier = tiers.get(tier)
    manifest = read_json(suite.manifest_path) or {}
    tasks = [TaskRow(t["task"], _groups(t, suite.tasks_dir / t["task"], the_tier.groups), t.get("status") == "free")
             for t in manifest.get("tasks", []) if t.get("status") in ("kept", "free")
             and (suite.tasks_dir / t["task"] / "task.json").is_file()]
    try:
        agents = load_agents(broken={})  # a broken table leaves its agent's results unjudged, not the others'
    except AgentError as exc:  # the whole file: every run's command and staleness would be lost from the pages
        raise ConfigError(f"{exc}; the report was not written (its pages, as written, keep each run's agent "
                          "command): fix the file and run `doit report` again") from None
    judge = the_tier.stale_judge(suite, agents)
    runs, notes = load_runs(suite.runs_dir, tasks, suite.tasks_dir, agents, judge, the_tier.profile)
    return tasks, runs, notes


def _groups(entry: dict, task_dir: Path, keys: tuple[str, ...]) -> dict[str, str]:
    """A published task's group labels ``keys``: each from its manifest ``entry``, else from its task.json,
    else ``"?"``."""
    from rules.files import read_json

    if all(entry.get(k) for k in keys):
        return {k: str(entry[k]) for k in keys}
    try:
        meta = read_json(task_dir / "task.json") or {}
    except ValueError:
        meta = {}
    meta = meta if isinstance(meta, dict) else {}
    return {k: str(entry.get(k) or meta.get(k) or "?") for k in keys}


def test_ids(manifest_path: Path) -> dict[str, list[str]]:
    """Each published task's expected test ids (its manifest entry's ``test_ids``; [] when it has none)."""
    from rules.files import read_json

    try:
        manifest = read_json(manifest_path) or {}
    except ValueError:
        return {}
    entries = manifest.get("tasks") if isinstance(manifest, dict) else None
    return {str(e["task"]): [str(i) for i in e.get("test_ids") or []] for e in entries or []
            if isinstance(e, dict) and "task" in e}
