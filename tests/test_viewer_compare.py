"""The compare pages (rules.viewer.compare_view, write_compares): two runs side by side on the tasks where they
differ, the McNemar test's discordant pairs; their links from the report and to the trial pages, their escaping,
and `doit report` rewriting only the pages whose pair changed (no Docker, no browser)."""
from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

from rules import viewer
from rules.report import Run, TaskRow, build_report, cell, compare, compare_href, paired_tasks
from rules.tiers.aider import PROFILE

sys.path.insert(0, str(Path(__file__).resolve().parent))
from conftest import run_doit  # noqa: E402
from viewer_fixture import make_evals  # noqa: E402

TASKS = [TaskRow(t, {"language": t.split("-")[0], "exercise": t.split("-", 1)[1]}, False)
         for t in ("python-a", "python-b", "go-c", "go-d", "rust-e", "rust-f", "java-g")]
PASS2 = PROFILE.metrics[-1]  # the headline: pass@2
PASS1 = PROFILE.metrics[0]


def _res(status, passed_try=None, **more):
    return {"status": status, "passed_try": passed_try, "tries": [{"try": 1}, {"try": 2}][:passed_try or 1],
            "tests": {"ran": 5, "passed": 5 if status == "pass" else 3}, "agent_seconds": 12.5,
            "usage": {"tokens_sent": 1000, "tokens_received": 100, "cost": 0.02}, **more}


def _run(name, results, label=None):
    return Run(run=name, label=label or name, agent=name, outcomes={1: {t: cell(r) for t, r in results.items()}},
               results={1: dict(results)})


def _pair():
    """A passes a (try 1), b (try 2) and e; B passes a (try 2), c and f. d fails in both, g is an error in B,
    e a timeout in B, f missing in A."""
    a = _run("alpha", {"python-a": _res("pass", 1), "python-b": _res("pass", 2), "go-c": _res("fail"),
                       "go-d": _res("fail"), "rust-e": _res("pass", 1), "java-g": _res("pass", 1)},
             label="alpha <b>model</b>")
    b = _run("beta#2", {"python-a": _res("pass", 2), "python-b": _res("fail"), "go-c": _res("pass", 1),
                        "go-d": _res("fail"), "rust-e": _res("timeout"), "rust-f": _res("pass", 1),
                        "java-g": _res("error", error={"message": "provider said <429> too many requests"},
                                       error_kind="agent")})
    return a, b


def test_paired_tasks_are_the_discordant_pairs_the_mcnemar_counts_come_from():
    a, b = _pair()
    split = paired_tasks(a, b, TASKS, PASS2)
    assert split == {"paired": ["python-a", "python-b", "go-c", "go-d", "rust-e"],
                     "a_only": ["python-b", "rust-e"], "b_only": ["go-c"], "both": ["python-a"], "neither": ["go-d"],
                     "unpaired": ["rust-f", "java-g"]}
    at1 = paired_tasks(a, b, TASKS, PASS1)
    assert at1["a_only"] == ["python-a", "rust-e"] and at1["b_only"] == ["go-c"]  # B passed python-a on try 2
    c = compare(a, b, TASKS, PASS2)
    assert (c["paired"], c["a_only"], c["b_only"], c["both"], c["neither"]) == (5, 2, 1, 1, 1)


def test_the_view_lists_each_direction_side_by_side_headline_first_with_what_a_person_needs():
    a, b = _pair()
    comparisons = {m.name: compare(a, b, TASKS, m) for m in PROFILE.metrics}
    last = {"alpha/python-b.html": {"where": "try 2, step 9", "text": "ran <pytest> again"}}
    view = viewer.compare_view(a, b, TASKS, PROFILE, comparisons, last)
    assert [m["name"] for m in view["metrics"]] == ["pass@2", "pass@1"]
    m = view["metrics"][0]
    assert m["comparison"] is comparisons["pass@2"]
    assert [r["task"] for r in m["a_only"]] == ["python-b", "rust-e"] and [r["task"] for r in m["b_only"]] == ["go-c"]
    row = m["a_only"][0]
    assert row["group"] == "python" and row["a"]["word"] == "pass@2" and row["b"]["word"] == "fail"
    assert row["a"]["href"] == "../../trials/alpha/python-b.html"
    assert row["b"]["href"] == "../../trials/beta%232/python-b.html"  # the run's name quoted: '#' would cut the URL
    assert row["a"]["last_step"] == last["alpha/python-b.html"] and row["b"]["last_step"] is None
    assert (row["a"]["tries"], row["b"]["tries"], row["a"]["tests"], row["a"]["cost"]) == ("2 tries", "1 try", "5/5", "$0.0200")
    # left out of the test: f (missing in A, B passed) and g (an error in B, A passed); not d (neither passed)
    assert [r["task"] for r in view["left_out"]] == ["rust-f", "java-g"] and view["unpaired"] == 2
    f, g = view["left_out"]
    assert f["a"]["word"] == "missing" and f["a"]["href"] is None
    assert g["b"]["word"] == "error:agent" and g["b"]["error"] == "provider said <429> too many requests"


def test_the_page_escapes_what_runs_wrote_and_links_both_trials(tmp_path):
    a, b = _pair()
    comparisons = {m.name: compare(a, b, TASKS, m) for m in PROFILE.metrics}
    last = {"alpha/python-b.html": {"where": "try 2, step 9", "text": "<script>alert(1)</script>"}}
    html = viewer.render_compare(viewer.compare_view(a, b, TASKS, PROFILE, comparisons, last))
    assert "<script>alert(1)</script>" not in html and "&lt;script&gt;alert(1)&lt;/script&gt;" in html
    assert "alpha <b>model</b>" not in html and "alpha &lt;b&gt;model&lt;/b&gt;" in html
    assert "provider said &lt;429&gt; too many requests" in html
    assert 'href="../../trials/alpha/python-b.html"' in html and 'href="../../trials/beta%232/go-c.html"' in html
    assert 'href="../../report.html"' in html and 'id="pass@2"' in html and 'id="left-out"' in html


def test_the_report_links_each_comparison_to_its_pair_s_page():
    a, b = _pair()
    report = build_report("aider", TASKS, [a, b], generated="2026-12-07T00:00:00+00:00")
    from rules.report import render_pages

    html = render_pages(report)["report.html"]
    first, second = report["comparisons"][0]["a"], report["comparisons"][0]["b"]
    assert compare_href("beta#2", "alpha") == "compare/beta%232/alpha.html"
    assert f'href="{compare_href(first, second)}#pass%402"' in html
    assert f'href="{compare_href(first, second)}#pass%401"' in html


def test_doit_report_writes_a_page_per_pair_and_rewrites_only_the_pairs_that_changed(tmp_path):
    home = tmp_path / "home"
    runs = ["alpha", "beta", "gamma"]
    tier = make_evals(home, runs, [("python-bowling", "python"), ("go-clock", "go"), ("rust-acronym", "rust"),
                                   ("java-bob", "java")])
    res = run_doit(home, "report", timeout=120)
    assert res.code == 0, res.stderr
    assert "compare pages" in res.stdout and "3 written, 0 unchanged" in res.stdout
    report = json.loads((tier / "report.json").read_text())
    html = (tier / "report.html").read_text()
    pairs = {(c["a"], c["b"]) for c in report["comparisons"]}
    assert len(pairs) == 3
    for a, b in pairs:
        page = tier / "compare" / a / f"{b}.html"
        assert page.is_file() and f'href="{compare_href(a, b)}#pass%402"' in html
        text = page.read_text()
        assert "the tasks where they differ" in text.lower()
        # its rows link to trial pages that exist
        for href in set(__import__("re").findall(r'href="(\.\./\.\./trials/[^"#]+)"', text)):
            assert (page.parent / href).resolve().is_file(), href
    stamps = json.loads((tier / "trials" / "stamps.json").read_text())
    assert stamps["alpha/go-clock.html"]["last_step"]["text"].startswith("last step of try")
    # a cost in gamma changes: only gamma's two pairs are written again
    changed = tier / "runs" / "gamma" / "go-clock" / "result.json"
    data = json.loads(changed.read_text())
    data["usage"]["cost"] = 7.25
    changed.write_text(json.dumps(data))
    untouched = next(tier / "compare" / a / f"{b}.html" for a, b in pairs if "gamma" not in (a, b))
    before = untouched.stat().st_mtime_ns
    res = run_doit(home, "report", timeout=120)
    assert res.code == 0, res.stderr
    assert "compare pages" in res.stdout and "2 written, 1 unchanged" in res.stdout.split("compare pages")[1]
    assert untouched.stat().st_mtime_ns == before
    # a run removed: its pairs' pages go
    shutil.rmtree(tier / "runs" / "gamma")
    res = run_doit(home, "report", timeout=120)
    assert res.code == 0, res.stderr
    assert "0 written, 1 unchanged, 2 removed" in res.stdout.split("compare pages")[1]
    assert sorted(p.relative_to(tier / "compare").as_posix() for p in (tier / "compare").rglob("*.html")) == \
        [f"{a}/{b}.html" for a, b in pairs if "gamma" not in (a, b)]
    assert not (tier / "trials" / "gamma").exists()  # its trial pages' folder goes with them, not left empty


def test_trial_stamps_of_the_older_shape_rewrite_their_pages_once_to_learn_the_last_steps(tmp_path):
    home = tmp_path / "home"
    tier = make_evals(home, ["alpha", "beta"], [("python-bowling", "python"), ("go-clock", "go")])
    assert run_doit(home, "report", timeout=120).code == 0
    stamps = tier / "trials" / "stamps.json"
    old = {rel: v["digest"] for rel, v in json.loads(stamps.read_text()).items()}  # before compare pages: digests only
    stamps.write_text(json.dumps(old))
    (tier / "compare" / "stamps.json").unlink()
    res = run_doit(home, "report", timeout=120)
    assert res.code == 0, res.stderr
    assert "trial pages" in res.stdout and "4 written, 0 unchanged" in res.stdout
    assert all(isinstance(v, dict) and v["digest"] == old[rel] for rel, v in json.loads(stamps.read_text()).items())
    page = next((tier / "compare").rglob("*.html")).read_text()
    assert "last step of try" in page
