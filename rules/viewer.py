"""The trial viewer: one static HTML page per stored trial, reached from the report's task × run matrix.

A trial's page is ``evals/<tier>/trials/<run>/<trial folder>.html`` (the trial folder's own name, so repeat k of a
task is ``<task>@k.html``): beside ``report.html``, so the matrix links to it with a relative path, and two levels
below the tier's folder, so it links to the trial's own files (``../../runs/<run>/<trial folder>/...``) as plain
files. It shows what a person asks of a failed trial: status and verdict with their evidence, the prompt, each
try's transcript (its trajectory's steps, else its agent log), the work-tree diff (swe: the patch), the grader's
result per test id, timings, tokens and cost, the agent's settings and image, and the same task in the other runs.

Pages are rendered with Jinja2's autoescape (every value a trial wrote is untrusted text), need no script and no
network (``file://`` works), and each long text is capped (``TEXT_CAP``) with a link to its full file, so a page
stays small whatever an agent printed. ``write_trials`` rewrites a page only when its inputs changed: a digest
of the trial's files (names, sizes, modification times), the runs that link to each other and the template,
kept in ``trials/stamps.json`` with the trial's last step.

A compare page, ``evals/<tier>/compare/<A>/<B>.html``, sets two runs the report compares side by side on the tasks
where they differ (the McNemar test's discordant pairs, per metric) and on the tasks the test leaves out that one
of them passed, each run's trial linked to its page; it is reached from the report's paired comparisons and made
from what the report loaded and the last steps kept in ``trials/stamps.json`` (no trial file is read again).
``write_compares`` rewrites a page only when what it shows changed (``compare/stamps.json``).
"""
from __future__ import annotations

import hashlib
import json
import re
from functools import lru_cache
from pathlib import Path
from urllib.parse import quote

VIEWER_FORMAT = 1  # bump when a page's content changes for the same inputs (every page is rendered again)
STAMPS = "stamps.json"  # in the trials and compare folders: page path → the digest of the inputs it was rendered from
TEXT_CAP = 24_000  # characters of one log, output or diff shown on a page; the rest is a link to the file
STEP_CAP = 4_000  # characters of one trajectory step's message, arguments or observation
STEPS_CAP = 400  # trajectory steps shown per try (the first ones; the last one is always shown)
STEPS_CHARS = 200_000  # characters of a try's shown steps at most: past them only the last step is shown
TEMPLATE = "report/trial.html.j2"
COMPARE_TEMPLATE = "report/compare.html.j2"
LAST_CAP = 200  # characters of a trial's last step kept in trials/stamps.json and shown on a compare page


def capped(text: str, cap: int = TEXT_CAP) -> tuple[str, bool]:
    """``(text cut to cap characters, whether it was cut)``."""
    return (text, False) if len(text) <= cap else (text[:cap], True)


def _last_line(path: Path, tail: int = 16_384) -> str | None:
    """The last line of a text file that holds more than white space, read from its last ``tail`` bytes (a log
    shown on a page is cut at its beginning: its end is read apart); None when the file is missing or blank."""
    try:
        with open(path, "rb") as f:
            f.seek(max(0, f.seek(0, 2) - tail))
            raw = f.read(tail)
    except OSError:
        return None
    lines = [line for line in raw.decode("utf-8", "replace").splitlines() if line.strip()]
    return lines[-1].strip() if lines else None


def _read(path: Path, cap: int = TEXT_CAP) -> dict | None:
    """A text file for a page: ``{"name", "text" (capped, undecodable bytes replaced), "truncated", "size"
    (bytes)}``, or None when there is no such file. Reads at most ``4 * cap`` bytes (a log may be large)."""
    try:
        size = path.stat().st_size
        with open(path, "rb") as f:
            raw = f.read(4 * cap + 4)
    except OSError:
        return None
    text, cut = capped(raw.decode("utf-8", "replace"), cap)
    return {"name": path.name, "text": text, "truncated": cut or size > len(raw), "size": size}


def _text(value) -> str:
    """A trajectory field as text: a string as it is, anything else as indented JSON."""
    if value is None:
        return ""
    return value if isinstance(value, str) else json.dumps(value, indent=2, ensure_ascii=False)


def trajectory_steps(data) -> list[dict]:
    """The steps of an ATIF-v1.7 trajectory (``rules.adapters``) as a page shows them: ``[{"n", "source",
    "message", "calls": [{"name", "arguments"}], "results": [text], "metrics": dict, "truncated": bool, "index" (its
    1-based place in the file)}]``,
    each text capped at STEP_CAP. At most STEPS_CAP steps, and steps only until their texts pass STEPS_CHARS
    characters: the first ones and always the last one (what the agent last did). Anything that is not a
    trajectory gives []."""
    steps = data.get("steps") if isinstance(data, dict) else None
    if not isinstance(steps, list):
        return []
    chosen = list(enumerate(steps, 1))
    if len(chosen) > STEPS_CAP:
        chosen = chosen[:STEPS_CAP - 1] + chosen[-1:]
    out = []
    used = 0
    for n, step in chosen:
        if not isinstance(step, dict):
            continue
        if used > STEPS_CHARS and n != len(steps):  # the budget is spent: only the last step still
            continue
        cut = False

        def cap(value) -> str:
            nonlocal cut
            text, c = capped(_text(value), STEP_CAP)
            cut = cut or c
            return text

        calls = [{"name": str(c.get("function_name") or "?"), "arguments": cap(c.get("arguments"))}
                 for c in step.get("tool_calls") or [] if isinstance(c, dict)]
        obs = step.get("observation") if isinstance(step.get("observation"), dict) else {}
        results = [cap(r.get("content") if isinstance(r, dict) else r) for r in obs.get("results") or []]
        out.append({"n": step.get("step_id", n), "index": n, "source": str(step.get("source") or "?"),
                    "message": cap(step.get("message")), "calls": calls, "results": results,
                    "metrics": step.get("metrics") if isinstance(step.get("metrics"), dict) else {},
                    "truncated": cut})
        used += len(out[-1]["message"]) + sum(len(c["arguments"]) for c in calls) + sum(map(len, results))
    return out


_NAMED = re.compile(r"^(\d+) (expected test\(s\) not reported|test\(s\) did not pass): (.*)$")


def test_results(expected: list[str], grade: dict | None) -> list[dict]:
    """The grader's result per test id of one try: ``[{"id", "status": passed | failed | missing | not passed}]``,
    failed and missing first. ``expected`` is the task's test ids (the manifest's ``test_ids``: what the
    reference passed); the record keeps only counts and evidence lines (``rules.grade.decide``), which name at
    most ``rules.grade.EVIDENCE_IDS`` ids each: an expected id past those, in a grading that did not pass every
    test, is "not passed" when the counts say some are unnamed, else "passed". A reported id that is not expected
    (from the evidence) is listed too."""
    if not grade:
        return []
    failed: list[str] = []
    missing: list[str] = []
    unnamed = 0
    for line in grade.get("evidence") or []:
        m = _NAMED.match(str(line))
        if not m:
            continue
        ids = m.group(3)
        more = re.search(r" and (\d+) more$", ids)
        if more:
            ids, unnamed = ids[:more.start()], unnamed + int(more.group(1))
        (missing if m.group(2).startswith("expected") else failed).extend(i.strip() for i in ids.split(", "))
    bad = set(failed) | set(missing)
    rows = [{"id": i, "status": "failed"} for i in failed] + [{"id": i, "status": "missing"} for i in missing]
    rest = "not passed" if unnamed else "passed"
    if grade.get("verdict") == "tampered":
        rest = "not passed"  # a forged report: no test id of it is believed
    rows += [{"id": i, "status": rest} for i in expected if i not in bad]
    return rows


def _money(cost) -> str:
    if not isinstance(cost, (int, float)):
        return "–"
    return f"${cost:.2f}" if cost >= 1 else f"${cost:.4f}"


def _tries(result: dict, trial_dir: Path) -> list[dict]:
    """The tries of a trial as ``[{"label", "try" (its record), "dir" (where its files are), "prefix" (their
    relative folder from the trial folder, "" or "<attempt folder>/")}]``: a trial's own tries, or, for a trial
    that makes attempts (swe), each attempt's tries read from its own record (an attempt without one: its entry)."""
    out = []
    for t in result.get("tries") or []:
        out.append({"label": f"try {t.get('try', len(out) + 1)}", "try": t, "dir": trial_dir, "prefix": ""})
    for i, a in enumerate(result.get("attempts") or [], 1):
        if not isinstance(a, dict):
            continue
        folder = str(a.get("folder") or "")
        own = None
        if folder and "/" not in folder and ".." not in folder:
            try:
                own = json.loads((trial_dir / folder / "result.json").read_text(encoding="utf-8"))
            except (OSError, ValueError):
                own = None
        tries = own.get("tries") if isinstance(own, dict) and isinstance(own.get("tries"), list) else []
        agent = a.get("agent") or (own or {}).get("agent") or ""
        for t in tries or [{"try": 1, "outcome": a.get("status"), "usage": a.get("usage")}]:
            if isinstance(t, dict):
                out.append({"label": f"attempt {a.get('attempt', i)} ({agent}), try {t.get('try', 1)}", "try": t,
                            "dir": trial_dir / folder if folder else trial_dir,
                            "prefix": f"{folder}/" if folder else ""})
    return out


def trial_view(result: dict, trial_dir: Path, task_dir: Path, run, folder: str, expected: list[str],
               others: list[dict], word: str) -> dict:
    """What a trial's page shows, as data (``trial.html.j2``'s ``t``): ``result`` is its result.json,
    ``trial_dir`` its folder, ``task_dir`` its published task (the prompt), ``run`` its ``rules.report.Run``,
    ``folder`` the trial folder's name, ``expected`` the task's test ids, ``others`` the same task in the other
    runs (``[{"label", "href", "word"}]``) and ``word`` its outcome word in the matrix (``rules.report.cell``).
    ``last_step`` is what the agent last did (the last try's last agent step, else its log's last line)."""
    from rules.report import error_kind, error_message, flag_line, suspicious_tries, tampered_tries

    files = f"../../runs/{quote(run.run, safe='')}/{quote(folder, safe='@')}/"
    tries, folders = [], []  # folders: each try's own folder (its log's)
    for entry in _tries(result, trial_dir):
        t, where, prefix = entry["try"], entry["dir"], files + quote(entry["prefix"])
        n = t.get("try", 1)
        steps, log, total = [], None, 0
        traj_name = t.get("trajectory")
        if isinstance(traj_name, str) and "/" not in traj_name:
            try:
                data = json.loads((where / traj_name).read_text(encoding="utf-8"))
            except (OSError, ValueError):
                data = None
            steps = trajectory_steps(data)
            total = len(data["steps"]) if steps else 0
        if not steps:
            log = _read(where / f"agent-{n}.log")
        grade = t.get("grade") if isinstance(t.get("grade"), dict) else None
        usage = t.get("usage") if isinstance(t.get("usage"), dict) else {}
        agent = t.get("agent") if isinstance(t.get("agent"), dict) else {}
        folders.append(where)
        tries.append({
            "label": entry["label"], "outcome": t.get("outcome"), "note": t.get("note") or "",
            "steps": steps, "steps_total": total, "trajectory": traj_name if steps else None,
            "log": log, "files": prefix, "follow_up": _read(where / f"prompt-{n}.txt"),
            "grade": grade, "grade_log": _read(where / f"grade-{n}.log"), "tests": test_results(expected, grade),
            "agent_seconds": agent.get("seconds"), "grade_seconds": (grade or {}).get("seconds"),
            "exit_code": agent.get("exit_code"), "timed_out": agent.get("timed_out"), "stopped": agent.get("stopped"),
            "tokens_sent": usage.get("tokens_sent"), "tokens_received": usage.get("tokens_received"),
            "cost": _money(usage.get("cost")), "suspicions": [flag_line(f) for f in t.get("suspicions") or []],
        })
    last_step = None
    for r, where in reversed(list(zip(tries, folders))):  # what the agent last did: the last try's last agent
        # step, else its log's last line (read from the file: the log shown is cut)
        agent_steps = [s for s in r["steps"] if s["source"] == "agent"]
        if agent_steps:
            s = agent_steps[-1]
            text = s["message"] or "; ".join(f"{c['name']} {c['arguments']}" for c in s["calls"])
            last_step = {"where": f"{r['label']}, step {s['n']}", "text": " ".join(text.split())[:400]}
            break
        line = _last_line(where / r["log"]["name"]) if r["log"] else None
        if line:
            last_step = {"where": f"{r['label']}, the end of its log", "text": line[:400]}
            break
    diff = _read(trial_dir / "work.diff") or _read(trial_dir / "patch.diff")
    seconds = [result.get(k) if isinstance(result.get(k), (int, float)) else None
               for k in ("agent_seconds", "grading_seconds", "seconds")]
    other = (seconds[2] - seconds[0] - seconds[1]) if None not in seconds else None
    usage = result.get("usage") if isinstance(result.get("usage"), dict) else {}
    status = str(result.get("status"))
    return {
        "tier": result.get("tier"), "task": str(result.get("task") or folder), "folder": folder,
        "run": run.run, "label": run.label, "agent": str(result.get("agent") or run.agent),
        "agents": result.get("agents") or run.agents, "repeat": result.get("repeat", 1),
        "status": status, "word": word, "passed_try": result.get("passed_try"),
        "resolved": result.get("resolved"), "plausible": result.get("plausible"), "chosen": result.get("chosen"),
        "error": error_message(result) if status == "error" else "",
        "error_kind": error_kind(result) if status == "error" else "",
        "tampered": [{"try": x["try"], "evidence": x["evidence"]} for x in tampered_tries(result)],
        "suspicions": [{"try": x["try"], "outcome": x["outcome"], "lines": [flag_line(f) for f in x["flags"]]}
                       for x in suspicious_tries(result)],
        "tests": result.get("tests") or {}, "notes": [str(n) for n in result.get("notes") or []],
        "prompt": _read(task_dir / "prompt.txt"), "tries": tries, "diff": diff, "files": files,
        "seconds": {"agent": seconds[0], "grading": seconds[1], "total": seconds[2], "other": other},
        "tokens_sent": usage.get("tokens_sent"), "tokens_received": usage.get("tokens_received"),
        "cost": _money(usage.get("cost")), "settings": result.get("settings") or run.settings,
        "command": run.command, "images": result.get("images") or {}, "service": result.get("service"),
        "backend": result.get("backend"), "started": result.get("started"), "finished": result.get("finished"),
        "service_log": (trial_dir / "service.log").is_file(), "others": others, "last_step": last_step,
    }


@lru_cache(maxsize=1)
def _environment():
    """The pages' Jinja2 environment: templates/ with autoescape on (every value is a trial's untrusted text)
    and an undefined variable an error."""
    import jinja2

    from rules.config import TEMPLATES
    from rules.report import pvalue, word_class, word_text

    env = jinja2.Environment(loader=jinja2.FileSystemLoader(str(TEMPLATES)), undefined=jinja2.StrictUndefined,
                             autoescape=True)
    env.filters["secs"] = lambda v: "–" if not isinstance(v, (int, float)) else f"{v:.1f} s"
    env.filters["num"] = lambda v: "–" if v is None else f"{v:,}"
    env.filters.update(word_class=word_class, word_text=word_text, pvalue=pvalue)
    return env


def render_trial(view: dict) -> str:
    """A trial's page (HTML) from its ``trial_view``."""
    return _environment().get_template(TEMPLATE).render(t=view)


def _digest(trial_dir: Path, extra: str) -> str:
    """The digest of what a trial's page is made of: every file below ``trial_dir`` (relative name, size,
    modification time in ns) and ``extra`` (the links to other runs, the template, VIEWER_FORMAT)."""
    h = hashlib.sha256(extra.encode())
    for p in sorted(trial_dir.rglob("*")):
        try:
            st = p.stat()
        except OSError:
            continue
        h.update(f"{p.relative_to(trial_dir)}\0{st.st_size}\0{st.st_mtime_ns}\n".encode("utf-8", "surrogateescape"))
    return h.hexdigest()


def _remove_pages(out_dir: Path, stale: set) -> int:
    """Remove the pages ``stale`` (paths relative to ``out_dir``, as a stamps file names them) and each folder
    they leave empty (a run's, once it is gone); returns how many pages were removed. A name that is no page or
    leads outside ``out_dir`` (a stamps file edited by hand) is left alone."""
    removed = 0
    for rel in stale:
        if not str(rel).endswith(".html") or ".." in str(rel):
            continue
        (out_dir / rel).unlink(missing_ok=True)
        removed += 1
        if (out_dir / rel).parent != out_dir:
            try:
                (out_dir / rel).parent.rmdir()
            except OSError:  # not empty
                pass
    return removed


def write_trials(tier_dir: Path, runs: list, tasks: list, tasks_dir: Path, test_ids: dict[str, list[str]],
                 runs_dir: Path) -> dict:
    """Write the page of every stored trial of ``runs`` (``rules.report.Run``, as ``load_runs`` read them) under
    ``tier_dir/trials/``, rewriting a page only when its inputs changed (``_digest``; stamps in
    ``trials/stamps.json``: page path → ``{"digest", "last_step"}``, the trial's last step kept for the compare
    pages), and remove the pages of trials no longer stored. ``tasks`` are the published ``TaskRow``s,
    ``test_ids`` task → its expected test ids. Returns ``{"written", "kept", "removed"}`` (counts) and
    ``"last_steps"``: page path (``<run>/<trial folder>.html``) → ``{"where", "text"}`` (what the agent last did,
    ``trial_view``'s, its text cut at LAST_CAP characters) for each trial that has one."""
    from rules.config import TEMPLATES
    from rules.files import read_json, write_atomic, write_json
    from rules.report import TRIALS

    out_dir = Path(tier_dir) / TRIALS
    try:
        stamps = read_json(out_dir / STAMPS) or {}
    except ValueError:
        stamps = {}
    stamps = stamps if isinstance(stamps, dict) else {}
    template = hashlib.sha256((TEMPLATES / TEMPLATE).read_bytes()).hexdigest()
    published = {t.task for t in tasks}
    new: dict[str, dict] = {}
    counts = {"written": 0, "kept": 0, "removed": 0}
    for run in runs:
        for k, results in sorted(run.results.items()):
            for task, result in sorted(results.items()):
                if task not in published:
                    continue
                folder = task if k == 1 else f"{task}@{k}"
                others = [{"label": r.label, "word": r.outcomes.get(k, {}).get(task, "missing"),
                           "href": f"../{quote(r.run, safe='')}/{quote(folder, safe='@')}.html"}
                          for r in runs if r is not run and task in r.results.get(k, {})]
                trial_dir = Path(runs_dir) / run.run / folder
                word = run.outcomes.get(k, {}).get(task, "missing")
                rel = f"{run.run}/{folder}.html"
                key = _digest(trial_dir, json.dumps([VIEWER_FORMAT, template, word, others, run.label,
                                                     run.command, test_ids.get(task)]))
                old = stamps.get(rel)
                if isinstance(old, dict) and old.get("digest") == key and (out_dir / rel).is_file():
                    new[rel] = old
                    counts["kept"] += 1
                    continue
                view = trial_view(result, trial_dir, Path(tasks_dir) / task, run, folder,
                                  test_ids.get(task) or [], others, word)
                write_atomic(out_dir / rel, render_trial(view))
                last = view["last_step"]
                new[rel] = {"digest": key, "last_step": last and {"where": last["where"],
                                                                  "text": capped(last["text"], LAST_CAP)[0]}}
                counts["written"] += 1
    counts["removed"] = _remove_pages(out_dir, set(stamps) - set(new))
    if new or stamps:
        write_json(out_dir / STAMPS, new, only_if_changed=True)
    return {**counts, "last_steps": {rel: v["last_step"] for rel, v in new.items() if v.get("last_step")}}


# ---- two runs side by side: the tasks where they differ ----

def _plural(n: int, one: str, many: str) -> str:
    return f"{n} {one if n == 1 else many}"


def side(run, task: str, last_steps: dict) -> dict:
    """``run``'s trial of ``task`` (repeat 1; ``rules.report.Run``) as a compare page shows it: ``{"word" (its
    outcome word), "href" (its trial page, relative to a compare page; None without a record), "tries" ("2
    tries"; a trial that makes attempts: "3 attempts"), "tests" ("passed/ran", or ""), "seconds" (the agent's),
    "cost" (money text), "tokens_sent", "tokens_received", "error" (an error's message, cut at LAST_CAP
    characters, or ""; its kind is in the word), "last_step" (``{"where", "text"}`` from ``last_steps``, page path → last step, or
    None)}``."""
    from rules.report import error_message, page_href

    word = run.outcomes.get(1, {}).get(task, "missing")
    result = run.results.get(1, {}).get(task)
    if not isinstance(result, dict):
        return {"word": word, "href": None, "tries": "", "tests": "", "seconds": None, "cost": _money(None),
                "tokens_sent": None, "tokens_received": None, "error": "", "last_step": None}
    tests = result.get("tests") if isinstance(result.get("tests"), dict) else {}
    usage = result.get("usage") if isinstance(result.get("usage"), dict) else {}
    attempts = result.get("attempts") or []
    error = ""
    if result.get("status") == "error":
        error = capped(error_message(result) or "(no message)", LAST_CAP)[0]  # its kind is in the word
    return {"word": word, "href": "../../" + page_href(run.run, task),
            "tries": _plural(len(attempts), "attempt", "attempts") if attempts
            else _plural(len(result.get("tries") or []), "try", "tries"),
            "tests": f"{tests['passed']}/{tests['ran']}" if "passed" in tests and "ran" in tests else "",
            "seconds": result.get("agent_seconds"), "cost": _money(usage.get("cost")),
            "tokens_sent": usage.get("tokens_sent"), "tokens_received": usage.get("tokens_received"),
            "error": error, "last_step": last_steps.get(f"{run.run}/{task}.html")}


def compare_view(a, b, tasks: list, profile, comparisons: dict[str, dict], last_steps: dict) -> dict:
    """What the page of runs ``a`` and ``b`` (``rules.report.Run``, A before B as the report pairs them) shows, as
    data (``compare.html.j2``'s ``v``): ``{"tier", "a", "b" ({"run", "label", "settings"}), "group" (the
    profile's: language, repo), "passes", "verb" (the profile's words), "metrics": [{"name", "comparison" (the
    report's ``compare`` at that metric, from ``comparisons``: metric name → it), "a_only", "b_only": [rows]}]
    (the headline metric first), "left_out": [rows] (tasks left out of the paired test, not finished by one run
    or both, that one of them passed at the headline metric), "unpaired": how many tasks were left out}``; a row
    is ``{"task", "group", "free", "a", "b" (``side``)}``, rows in ``tasks``' order (the published
    ``TaskRow``s)."""
    from rules.report import paired_tasks, passed_within

    by_task = {t.task: t for t in tasks}
    rows: dict[str, dict] = {}

    def row(task: str) -> dict:
        if task not in rows:
            t = by_task[task]
            rows[task] = {"task": task, "group": t.group(profile.group), "free": t.free,
                          "a": side(a, task, last_steps), "b": side(b, task, last_steps)}
        return rows[task]

    metrics = [profile.headline] + [m for m in profile.metrics if m is not profile.headline]
    out = {"tier": profile.tier, "group": profile.group, "passes": profile.passes, "verb": profile.verb,
           "metrics": [], "left_out": [], "unpaired": 0,
           **{k: {"run": r.run, "label": r.label, "settings": dict(r.settings)} for k, r in (("a", a), ("b", b))}}
    for m in metrics:
        split = paired_tasks(a, b, tasks, m)
        out["metrics"].append({"name": m.name, "comparison": comparisons.get(m.name),
                               "a_only": [row(t) for t in split["a_only"]], "b_only": [row(t) for t in split["b_only"]]})
        if m is profile.headline:
            out["unpaired"] = len(split["unpaired"])
            oa, ob = a.outcomes.get(1, {}), b.outcomes.get(1, {})
            out["left_out"] = [row(t) for t in split["unpaired"]
                               if passed_within(oa.get(t, "missing"), m.tries) or passed_within(ob.get(t, "missing"), m.tries)]
    return out


def render_compare(view: dict) -> str:
    """The page of two runs side by side (HTML) from its ``compare_view``."""
    return _environment().get_template(COMPARE_TEMPLATE).render(v=view)


def write_compares(tier_dir: Path, report: dict, runs: list, tasks: list, last_steps: dict) -> dict:
    """Write the page of each pair of runs the report compares (``report["comparisons"]``; ``runs`` as
    ``rules.report.load_runs`` read them, ``tasks`` the published ``TaskRow``s, ``last_steps`` as
    ``write_trials`` returns them) at ``tier_dir/compare/<a>/<b>.html`` (``rules.report.compare_href``),
    rewriting a page only when what it shows changed (a digest of its ``compare_view``, the template and
    VIEWER_FORMAT; stamps in ``compare/stamps.json``), and remove the pages of pairs the report no longer has.
    Returns ``{"written", "kept", "removed"}`` (counts)."""
    from rules.config import TEMPLATES
    from rules.files import read_json, write_atomic, write_json
    from rules.report import COMPARE, profile_of

    out_dir = Path(tier_dir) / COMPARE
    try:
        stamps = read_json(out_dir / STAMPS) or {}
    except ValueError:
        stamps = {}
    stamps = stamps if isinstance(stamps, dict) else {}
    template = hashlib.sha256((TEMPLATES / COMPARE_TEMPLATE).read_bytes()).hexdigest()
    profile = profile_of(report["tier"])
    by_run = {r.run: r for r in runs}
    by_pair: dict[tuple[str, str], dict[str, dict]] = {}
    for c in report.get("comparisons") or []:
        by_pair.setdefault((c["a"], c["b"]), {})[c["metric"]] = c
    new: dict[str, str] = {}
    counts = {"written": 0, "kept": 0, "removed": 0}
    for (a, b), comparisons in by_pair.items():
        if a not in by_run or b not in by_run:
            continue
        view = compare_view(by_run[a], by_run[b], tasks, profile, comparisons, last_steps)
        rel = f"{a}/{b}.html"
        key = hashlib.sha256(json.dumps([VIEWER_FORMAT, template, view], sort_keys=True,
                                        default=str).encode()).hexdigest()
        new[rel] = key
        if stamps.get(rel) == key and (out_dir / rel).is_file():
            counts["kept"] += 1
            continue
        write_atomic(out_dir / rel, render_compare(view))
        counts["written"] += 1
    counts["removed"] = _remove_pages(out_dir, set(stamps) - set(new))
    if new or stamps:
        write_json(out_dir / STAMPS, new, only_if_changed=True)
    return counts


HOST = "127.0.0.1"  # `doit view` listens here only: the pages are a lab home's records, not for the network


def server(directory: Path, port: int = 8000):
    """An HTTP server of ``directory``'s files (the lab home's ``evals/``) on 127.0.0.1:``port`` (0: any free
    port), read only (GET and HEAD), not yet serving: call ``serve_forever()``, and ``server_close()`` after.
    Raises OSError when the port is taken (the message names it)."""
    import functools
    from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer

    class Quiet(SimpleHTTPRequestHandler):
        def log_message(self, format, *args):  # noqa: A002 (http.server's name) — one line per request is noise
            pass

    handler = functools.partial(Quiet, directory=str(directory))
    try:
        return ThreadingHTTPServer((HOST, port), handler)
    except OSError as exc:
        raise OSError(f"doit view: cannot listen on {HOST}:{port} ({exc.strerror}); give another port with "
                      f"LAB_VIEW_PORT=N (0: any free one)") from None


def view(evals: Path, port: int) -> None:
    """``doit view``: serve ``evals`` on 127.0.0.1:``port`` until Ctrl-C, printing the URL of each tier's report
    (the pages work from ``file://`` too: this is for people who prefer a URL)."""
    srv = server(evals, port)
    try:  # Ctrl-C may come as soon as the URL is out
        base = f"http://{HOST}:{srv.server_address[1]}/"
        reports = sorted(p.parent.name for p in Path(evals).glob("*/report.html"))
        print(f"serving {evals} at {base} (127.0.0.1 only; Ctrl-C stops it)", flush=True)
        for tier in reports:
            print(f"  {base}{quote(tier)}/report.html")
        if not reports:
            print("  no report yet: `doit report` writes evals/<tier>/report.html", flush=True)
        srv.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        srv.server_close()
