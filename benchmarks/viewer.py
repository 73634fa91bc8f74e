"""The report, the trial pages and the compare pages at scale: 20 runs over 525 tasks (10,500 stored trials), in
headless chromium.

    python3 benchmarks/viewer.py [--runs 20] [--aider 225] [--swe 300] [--home DIR] [--keep]

Makes a home (a temporary folder unless ``--home``) with synthetic stored trials (tests/viewer_fixture.py: the
records rules.records defines, each trial with result.json, two tries' agent logs, trajectories and grader
output, and a work.diff; every 50th trial has a 2 MB agent log and a 3,000-step trajectory, to check the caps),
under the aider tier: 225 aider-shaped task names (``<language>-<exercise>``: the polyglot benchmark's exercises)
and 300 swe-shaped ones (``<owner>__<repo>-<number>``: SWE-bench Lite's instances), 525 in all. Nothing it makes is committed or kept (unless ``--keep``).

Measures ``rules.publish.write_report`` (every page written; again with nothing changed; again after one result
changed; again with every compare page written; how many trial and compare pages each wrote), then, in Debian's
chromium through Playwright (file://, as a person opens it), the report's first contentful paint and load event
(its seconds: the later of the two), a trial page's and a compare page's (two runs side by side on the tasks where
they differ; a typical one and the largest of each), each the median of 3 loads in a fresh page; and the largest
file the browser loads (the pages hold their styles inline and load nothing else: the resource entries are
counted). Prints one table.
Targets (issue 21): report < 2 s, a trial page (and a compare page) < 1 s, no file over 5 MB.
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

PROJECT = Path(__file__).resolve().parent.parent
LANGS = ("cpp", "go", "java", "javascript", "python", "rust")
REPOS = ("astropy__astropy", "django__django", "matplotlib__matplotlib", "mwaskom__seaborn", "pallets__flask",
         "psf__requests", "pydata__xarray", "pylint-dev__pylint", "pytest-dev__pytest", "scikit-learn__scikit-learn",
         "sphinx-doc__sphinx", "sympy__sympy")


def task_names(aider: int, swe: int) -> list[tuple[str, str]]:
    """(task, language) pairs: ``aider`` names spread over the six languages, ``swe`` over twelve repositories."""
    out = [(f"{LANGS[i % 6]}-exercise-{i:03d}", LANGS[i % 6]) for i in range(aider)]
    out += [(f"{REPOS[i % 12]}-{10000 + 7 * i}", "python") for i in range(swe)]
    return out


def measure(browser, url: str, rounds: int = 3) -> dict:
    """Median first contentful paint and load event (ms from navigation start) of ``url`` over ``rounds`` fresh
    pages, and how many resources the page loaded besides itself."""
    fcp, load, resources = [], [], 0
    for _ in range(rounds):
        page = browser.new_page(viewport={"width": 1280, "height": 900})
        page.goto(url, wait_until="load")
        t = page.evaluate("""() => new Promise(done => {
            const nav = performance.getEntriesByType('navigation')[0];
            const result = fcp => done({load: nav.loadEventEnd, fcp: fcp,
                                        resources: performance.getEntriesByType('resource').length});
            new PerformanceObserver(list => {
                const p = list.getEntriesByName('first-contentful-paint')[0];
                if (p) result(p.startTime);
            }).observe({type: 'paint', buffered: true});
            setTimeout(() => result(null), 5000);
        })""")
        fcp.append(t["fcp"] if t["fcp"] is not None else float("nan"))
        load.append(t["load"])
        resources = max(resources, t["resources"])
        page.close()
    return {"fcp_ms": statistics.median(fcp), "load_ms": statistics.median(load), "resources": resources}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--runs", type=int, default=20)
    ap.add_argument("--aider", type=int, default=225)
    ap.add_argument("--swe", type=int, default=300)
    ap.add_argument("--home", type=Path)
    ap.add_argument("--keep", action="store_true", help="keep the home (its path is printed)")
    ap.add_argument("--chromium", default=os.environ.get("LAB_CHROMIUM", "/usr/bin/chromium"))
    args = ap.parse_args()
    home = args.home or Path(tempfile.mkdtemp(prefix="lab-bench-viewer-"))
    os.environ["LAB_HOME"] = str(home)  # before rules.config is imported: the home is read once
    sys.path[:0] = [str(PROJECT), str(PROJECT / "tests")]
    from viewer_fixture import make_evals  # noqa: E402

    from rules.publish import write_report  # noqa: E402

    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        print("benchmarks/viewer.py needs Playwright's Python package: .venv/bin/pip install -e '.[test]'")
        return 2
    tasks = task_names(args.aider, args.swe)
    runs = [f"agent{i:02d}.model-{i}" for i in range(1, args.runs + 1)]
    rows = []
    try:
        t0 = time.perf_counter()
        tier = make_evals(home, runs, tasks)
        for i, run in enumerate(runs):  # every 50th trial: a huge log and a long trajectory
            for j, (task, _) in enumerate(tasks):
                if (i * len(tasks) + j) % 50 == 0:
                    d = tier / "runs" / run / task
                    (d / "agent-1.log").write_text("a line the agent printed, again and again\n" * 50_000)
                    steps = [{"step_id": s, "source": "agent", "message": f"step {s} " + "thinking " * 40,
                              "tool_calls": [{"tool_call_id": f"c{s}", "function_name": "bash",
                                              "arguments": {"command": "ls -R /work"}}],
                              "observation": {"results": [{"source_call_id": f"c{s}", "content": "x\n" * 2000}]}}
                             for s in range(1, 3001)]
                    (d / "trajectory-1.json").write_text(json.dumps({"schema_version": "ATIF-v1.7", "steps": steps}))
        rows.append(("make the stored trials", f"{len(runs)} runs × {len(tasks)} tasks", time.perf_counter() - t0, ""))
        def mtimes() -> dict[Path, int]:
            return {p: p.stat().st_mtime_ns for folder in ("trials", "compare") for p in (tier / folder).rglob("*.html")}

        def written(since: dict[Path, int]) -> str:
            """How many trial and compare pages were (re)written since the ``mtimes`` snapshot ``since``."""
            now = mtimes()
            n = {folder: sum(now[p] != since.get(p) for p in now if p.parts[-3] == folder) for folder in ("trials", "compare")}
            return f"pages written: {n['trials']} trial, {n['compare']} compare"

        for what in ("every page written", "nothing changed"):
            before = mtimes()
            t0 = time.perf_counter()
            write_report("aider", echo=False)
            rows.append((f"write_report ({what})", "", time.perf_counter() - t0, written(before)))
        changed = tier / "runs" / runs[0] / tasks[1][0] / "result.json"
        data = json.loads(changed.read_text())
        data["usage"]["cost"] = 1.5
        changed.write_text(json.dumps(data))
        before = mtimes()
        t0 = time.perf_counter()
        write_report("aider", echo=False)
        rows.append(("write_report (one result changed)", "", time.perf_counter() - t0, written(before)))
        (tier / "compare" / "stamps.json").unlink()  # the compare pages' share of a write: all of them again
        before = mtimes()
        t0 = time.perf_counter()
        write_report("aider", echo=False)
        rows.append(("write_report (every compare page written)", "", time.perf_counter() - t0, written(before)))
        pages = sorted((tier / "trials").rglob("*.html"), key=lambda p: p.stat().st_size)
        pairs = sorted((tier / "compare").rglob("*.html"), key=lambda p: p.stat().st_size)
        report = tier / "report.html"
        sizes = {"report.html": report.stat().st_size, "largest trial page": pages[-1].stat().st_size,
                 "median trial page": pages[len(pages) // 2].stat().st_size,
                 "largest compare page": pairs[-1].stat().st_size, "median compare page": pairs[len(pairs) // 2].stat().st_size}
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=args.chromium, headless=True, args=["--no-sandbox"])
            for name, page, target in (("report.html", report, 2000),
                                       ("median trial page", pages[len(pages) // 2], 1000),
                                       ("largest trial page", pages[-1], 1000),
                                       ("median compare page", pairs[len(pairs) // 2], 1000),
                                       ("largest compare page", pairs[-1], 1000)):
                m = measure(browser, page.as_uri())
                shown = max(m["load_ms"], m["fcp_ms"])  # rendered: painted and loaded, whichever came last
                ok = shown < target and m["resources"] == 0
                rows.append((f"chromium: {name}", f"{sizes[name] / 1e6:.2f} MB, {m['resources']} other files",
                             shown / 1000, f"first paint {m['fcp_ms']:.0f} ms, load event {m['load_ms']:.0f} ms; "
                             f"< {target} ms: " + ("yes" if ok else "NO")))
            browser.close()
        biggest = max([report, *pages, *pairs], key=lambda p: p.stat().st_size)
        rows.append(("largest file the browser loads", biggest.relative_to(tier).as_posix(), None,
                     f"{biggest.stat().st_size / 1e6:.2f} MB; < 5 MB: " + ("yes" if biggest.stat().st_size < 5e6 else "NO")))
        print(f"{'what':40} {'of':38} {'seconds':>8}  notes")
        for what, of, secs, note in rows:
            print(f"{what:40} {of:38} {'' if secs is None else f'{secs:8.2f}':>8}  {note}")
        print(f"trial pages: {len(pages)}, compare pages: {len(pairs)} ({sum(p.stat().st_size for p in pairs) / 1e6:.1f} MB "
              f"in all); load average {os.getloadavg()[0]:.2f} on {os.cpu_count()} cores")
    finally:
        if args.keep:
            print(f"kept: {home}")
        elif not args.home:
            shutil.rmtree(home, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
