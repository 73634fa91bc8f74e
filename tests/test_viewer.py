"""The trial pages (rules.viewer): what a page shows of a stored trial, its escaping and caps, the matrix's links
to it, and `doit report` writing only the pages whose trial changed (no Docker, no browser)."""
from __future__ import annotations

import json
import sys
from pathlib import Path

from rules import viewer
from rules.report import Run

sys.path.insert(0, str(Path(__file__).resolve().parent))
from conftest import run_doit  # noqa: E402
from viewer_fixture import expected_ids, make_evals, trial_record  # noqa: E402


def _page(tmp_path, status, **more):
    result, files = trial_record("python-bowling", "alpha", status, "python", cost=0.0456, **more)
    trial = tmp_path / "runs" / "alpha" / "python-bowling"
    trial.mkdir(parents=True)
    for name, text in files.items():
        (trial / name).write_text(text)
    task = tmp_path / "tasks" / "python-bowling"
    task.mkdir(parents=True)
    (task / "prompt.txt").write_text("Score a <bowling> game.\n")
    run = Run(run="alpha", label="alpha (model-x)", agent="alpha", command="fake --go")
    others = [{"label": "beta", "word": "pass@1", "href": "../beta/python-bowling.html"}]
    view = viewer.trial_view(result.to_json(), trial, task, run, "python-bowling", expected_ids("python-bowling"),
                             others, "fail" if status == "fail" else status)
    return view, viewer.render_trial(view)


def test_a_failed_trial_page_names_failed_and_missing_tests_last_step_and_cost(tmp_path):
    view, html = _page(tmp_path, "fail")
    rows = {r["id"]: r["status"] for r in view["tries"][0]["tests"]}
    assert rows == {"python-bowling::test_1": "passed", "python-bowling::test_2": "failed",
                    "python-bowling::test_3": "passed", "python-bowling::test_4": "missing",
                    "python-bowling::test_5": "passed"}
    assert "last step of try 2: edited python-bowling.py" in html
    assert "$0.0456" in html and "Score a &lt;bowling&gt; game." in html
    assert 'href="../beta/python-bowling.html"' in html and 'href="../../report.html"' in html
    assert "lab-agent-fake" in html and "fake --go" in html and "model=model-alpha" in html
    assert 'href="../../runs/alpha/python-bowling/result.json"' in html


def test_everything_a_trial_wrote_is_escaped(tmp_path):
    _, html = _page(tmp_path, "fail")
    assert "<script>alert(1)</script>" not in html and "&lt;script&gt;alert(1)&lt;/script&gt;" in html
    assert "<b>not bold</b>" not in html and "&lt;b&gt;not bold&lt;/b&gt;" in html


def test_error_and_tampered_pages_show_their_evidence(tmp_path):
    _, html = _page(tmp_path / "e", "error")
    assert "error (agent)" in html and "provider said 401 Unauthorized" in html
    view, html = _page(tmp_path / "t", "tampered")
    assert "the failing canary test was reported as passed" in html
    assert {r["status"] for r in view["tries"][0]["tests"]} == {"not passed"}  # a forged report proves no test


def _stored_go_clock(tmp_path):
    """A stored failed trial of go-clock (two tries, each with a trajectory and an agent log): (result, folder)."""
    result, files = trial_record("go-clock", "alpha", "fail", "go", cost=0.1)
    trial = tmp_path / "go-clock"
    trial.mkdir()
    for name, text in files.items():
        (trial / name).write_text(text)
    return result, trial


def test_a_huge_log_is_capped_with_a_link_to_the_full_file(tmp_path):
    result, trial = _stored_go_clock(tmp_path)
    (trial / "trajectory-1.json").unlink()  # try 1 falls back to its agent log
    (trial / "agent-1.log").write_text("x" * (viewer.TEXT_CAP * 10) + "THE END")
    view = viewer.trial_view(result.to_json(), trial, tmp_path / "none", Run(run="r#1", label="r", agent="a"),
                             "go-clock", [], [], "fail")
    html = viewer.render_trial(view)
    assert view["tries"][0]["log"]["truncated"] and "THE END" not in html
    assert 'truncated, full file: <a href="../../runs/r%231/go-clock/agent-1.log">' in html
    assert len(html) < 4 * viewer.TEXT_CAP + 50_000


def test_the_last_step_of_a_long_log_is_its_real_last_line_not_the_end_of_what_is_shown(tmp_path):
    result, trial = _stored_go_clock(tmp_path)
    (trial / "trajectory-2.json").unlink()  # the last try falls back to its agent log
    (trial / "agent-2.log").write_text("".join(f"line {i} " + "x" * 100 + "\n" for i in range(2000))
                                       + "wrote clock.go and ran the tests\n\n")
    view = viewer.trial_view(result.to_json(), trial, tmp_path / "none", Run(run="r", label="r", agent="a"),
                             "go-clock", [], [], "fail")
    assert view["tries"][1]["log"]["truncated"]
    assert view["last_step"]["text"] == "wrote clock.go and ran the tests", view["last_step"]


def test_a_long_trajectory_keeps_its_first_steps_and_its_last(tmp_path):
    steps = viewer.trajectory_steps({"steps": [{"source": "agent", "message": f"m{i}"} for i in range(1000)]})
    assert len(steps) <= viewer.STEPS_CAP and steps[-1]["message"] == "m999" and steps[0]["message"] == "m0"
    assert viewer.trajectory_steps({"not": "steps"}) == [] and viewer.trajectory_steps([1]) == []


def test_test_results_say_not_passed_for_ids_past_those_the_evidence_names():
    ids = [f"t{i}" for i in range(15)]
    grade = {"verdict": "fail", "evidence": ["12 test(s) did not pass: " + ", ".join(ids[:10]) + " and 2 more"]}
    rows = viewer.test_results(ids, grade)
    assert [r["status"] for r in rows[:10]] == ["failed"] * 10
    assert {r["status"] for r in rows[10:]} == {"not passed"}
    assert viewer.test_results(ids, None) == []


def test_doit_report_links_each_cell_and_rewrites_only_changed_pages(tmp_path):
    home = tmp_path / "home"
    tier = make_evals(home, ["alpha", "beta"], [("python-bowling", "python"), ("go-clock", "go")])
    res = run_doit(home, "report", timeout=120)
    assert res.code == 0, res.stderr
    assert "trial pages" in res.stdout and "4 written, 0 unchanged" in res.stdout
    html = (tier / "report.html").read_text()
    for run in ("alpha", "beta"):
        for task in ("python-bowling", "go-clock"):
            assert f'href="trials/{run}/{task}.html"' in html
            assert (tier / "trials" / run / f"{task}.html").is_file()
    page = tier / "trials" / "alpha" / "go-clock.html"
    before = page.stat().st_mtime_ns
    result = json.loads((tier / "runs" / "beta" / "python-bowling" / "result.json").read_text())
    result["usage"]["cost"] = 9.5
    (tier / "runs" / "beta" / "python-bowling" / "result.json").write_text(json.dumps(result))
    res = run_doit(home, "report", timeout=120)
    assert res.code == 0, res.stderr
    assert "1 written, 3 unchanged" in res.stdout
    assert page.stat().st_mtime_ns == before
    assert "$9.50" in (tier / "trials" / "beta" / "python-bowling.html").read_text()


def test_a_swe_trial_page_shows_each_attempt_s_tries_and_the_patch(tmp_path):
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from test_report_swe import swe_result

    result = swe_result("pallets__flask-4045", "fail", [("a", False, "fail"), ("b", True, "pass")], chosen=1)
    trial = tmp_path / "pallets__flask-4045"
    for n, status in ((1, "fail"), (2, "pass")):
        own, files = trial_record("pallets__flask-4045", "a+b", status, "python", cost=0.2, tries=1)
        (trial / f"attempt-{n}").mkdir(parents=True)
        for name, text in files.items():
            (trial / f"attempt-{n}" / name).write_text(text)
        own.save(trial / f"attempt-{n}" / "result.json")
    (trial / "patch.diff").write_text("--- a/src/flask/blueprints.py\n+++ b/src/flask/blueprints.py\n+raise ValueError\n")
    view = viewer.trial_view(result, trial, tmp_path / "no-task", Run(run="a+b", label="a+b", agent="a+b",
                             agents=["a", "b"]), "pallets__flask-4045", [], [], "unresolved")
    html = viewer.render_trial(view)
    assert [t["label"] for t in view["tries"]] == ["attempt 1 (a), try 1", "attempt 2 (b), try 1"]
    assert "raise ValueError" in html and "patch.diff" in html
    assert 'href="../../runs/a%2Bb/pallets__flask-4045/attempt-2/trajectory-1.json"' in html


def test_doit_view_serves_the_evals_folder_on_loopback_only(tmp_path):
    import threading
    import urllib.request

    (tmp_path / "aider").mkdir()
    (tmp_path / "aider" / "report.html").write_text("<p>the report</p>")
    srv = viewer.server(tmp_path, 0)
    host, port = srv.server_address[:2]
    assert host == "127.0.0.1"
    thread = threading.Thread(target=srv.serve_forever, daemon=True)
    thread.start()
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/aider/report.html", timeout=10) as r:
            assert r.read() == b"<p>the report</p>"
    finally:
        srv.shutdown()
        srv.server_close()


def test_doit_view_stops_on_ctrl_c_without_a_traceback(tmp_path):
    """`doit view` ends on SIGINT (Ctrl-C) with its own quiet stop, whatever jobs=N doit runs tasks with."""
    import os
    import signal
    import subprocess
    import sys
    import time

    from conftest import PROJECT

    env = {**os.environ, "LAB_HOME": str(tmp_path), "LAB_VIEW_PORT": "0"}
    import shutil
    shutil.copytree(PROJECT / "evals", tmp_path / "evals")
    # as from a terminal: a command started in the background of a script (CI's) inherits SIGINT ignored
    proc = subprocess.Popen([sys.executable, "-m", "doit", "-f", str(PROJECT / "dodo.py"), "view", "jobs=2"],
                            cwd=PROJECT, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    try:
        deadline = time.monotonic() + 60
        out = ""
        while "serving" not in out and time.monotonic() < deadline and proc.poll() is None:
            out += proc.stdout.readline()
        assert "serving" in out, out
        proc.send_signal(signal.SIGINT)
        out += proc.communicate(timeout=30)[0]
    finally:
        proc.kill()
    assert "Traceback" not in out and "KeyboardInterrupt" not in out, out
