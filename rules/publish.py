"""Writing a tier's pages: the report (``rules.report``), every stored trial's page and each compared pair of
runs' page (``rules.viewer``), the last step of ``doit run`` and ``doit report``. Kept apart from both so that the
viewer may build on the report without the report knowing the viewer."""
from __future__ import annotations


def write_report(tier: str, echo: bool = True, subset: tuple[str, frozenset[str]] | None = None) -> dict:
    """Build the report of ``tier`` from the files and write ``evals/<tier>/report.{md,json,html}`` and, for a
    tier whose profile has the Aider leaderboard's records, ``report.leaderboard.yml`` (atomically), every
    stored trial's page under ``evals/<tier>/trials/`` (``rules.viewer.write_trials``: only the pages whose trial
    changed) and each compared pair of runs' page under ``evals/<tier>/compare/`` (``rules.viewer.write_compares``:
    only the pages whose tasks changed); print the Markdown when ``echo``. Returns the report data.

    ``subset`` (``(name, task names)``, ``Tier.subset``): the report over the published tasks among them only,
    its data's ``subset`` saying so, written as ``report.<name>.{md,json,html}`` beside the whole report; the
    trial and compare pages stay the whole report's (written by a report without a subset)."""
    from rules.config import load_suite
    from rules.files import write_atomic, write_json
    from rules.report import COMPARE, TRIALS, build_report, load, render_pages, test_ids
    from rules.viewer import write_compares, write_trials

    suite = load_suite(tier)
    tasks, runs, notes = load(tier)
    if subset is not None:
        name, members = subset
        every = len(tasks)
        tasks = [t for t in tasks if t.task in members]
        report = build_report(tier, tasks, runs, notes=notes)
        report["subset"] = {"name": name, "tasks": len(tasks), "of": every}
        pages = render_pages(report)
        for page, text in pages.items():
            write_atomic(suite.dir / page.replace("report.", f"report.{name}.", 1), text)
        write_json(suite.dir / f"report.{name}.json", report)
        if echo:
            print(pages["report.md"])
            print(f"subset {name}: {len(tasks)} of the {every} published tasks; written to "
                  f"{suite.dir / f'report.{name}.md'} (.json, .html)")
        return report
    report = build_report(tier, tasks, runs, notes=notes)
    pages = render_pages(report)
    for name, text in pages.items():
        write_atomic(suite.dir / name, text)
    write_json(suite.dir / "report.json", report)
    views = write_trials(suite.dir, runs, tasks, suite.tasks_dir, test_ids(suite.manifest_path), suite.runs_dir)
    pairs = write_compares(suite.dir, report, runs, tasks, views["last_steps"])
    if echo:
        print(pages["report.md"])
        for what, folder, n in (("trial pages", TRIALS, views), ("compare pages", COMPARE, pairs)):
            print(f"{what} ({suite.dir / folder}): {n['written']} written, {n['kept']} unchanged"
                  + (f", {n['removed']} removed" if n["removed"] else ""))
    return report
