"""The report and the trial pages in a real browser: Debian's chromium (/usr/bin/chromium, installed by .ci/setup)
driven by Playwright's Python package (the test extra; `playwright install` is never needed). Stored trials
from tests/viewer_fixture.py, rendered by `doit report`, opened from file:// as a person would. Screenshots are
kept under the test's tmp path and their paths printed (pytest -s shows them)."""
from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
from conftest import run_doit  # noqa: E402
from viewer_fixture import make_evals  # noqa: E402

CHROMIUM = Path(os.environ.get("LAB_CHROMIUM", "/usr/bin/chromium"))
TASKS = [("python-bowling", "python"), ("go-clock", "go"), ("rust-acronym", "rust"), ("java-bob", "java"),
         ("cpp-anagram", "cpp"), ("javascript-two-fer", "javascript"), ("python-zipper", "python")]


@pytest.fixture(scope="module")
def browser():
    """A headless chromium; fails (never skips) naming the fix when chromium or playwright is missing."""
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        pytest.fail("the browser tests need Playwright's Python package: .venv/bin/pip install -e '.[test]' "
                    "(it pins playwright==1.65.2)")
    if not CHROMIUM.is_file():
        pytest.fail(f"the browser tests need chromium at {CHROMIUM}: apt-get install -y chromium "
                    "(bash .ci/setup does it), or LAB_CHROMIUM=<path to a chromium>")
    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=str(CHROMIUM), headless=True, args=["--no-sandbox"])
        yield b
        b.close()


def _report(tmp_path, n_runs: int) -> Path:
    home = tmp_path / "home"
    tier = make_evals(home, [f"agent{i:02d}.model-{i}" for i in range(1, n_runs + 1)], TASKS)
    res = run_doit(home, "report", timeout=300)
    assert res.code == 0, res.stderr
    return tier


def _shot(page, path: Path) -> None:
    page.screenshot(path=str(path), full_page=True)
    print(f"screenshot: {path}")


@pytest.mark.parametrize("n_runs", [1, 20])
def test_a_person_goes_from_the_matrix_to_a_failed_trial_and_reads_why(browser, tmp_path, n_runs):
    tier = _report(tmp_path, n_runs)
    page = browser.new_page(viewport={"width": 1280, "height": 900})
    errors = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.goto((tier / "report.html").as_uri())
    _shot(page, tmp_path / f"report-{n_runs}-runs.png")
    page.locator("table.matrix").screenshot(path=str(tmp_path / f"matrix-{n_runs}-runs.png"))
    print(f"screenshot: {tmp_path / f'matrix-{n_runs}-runs.png'}")
    # python-bowling in run 1 is a pass (OUTCOMES[0]); go-clock in run 1 a fail (OUTCOMES[1])
    cell = page.locator('a[href="trials/agent01.model-1/go-clock.html"]')
    assert cell.count() == 1
    assert cell.inner_text().strip() in ("fail", "✗")
    cell.click()
    page.wait_for_load_state()
    assert page.url.endswith("/trials/agent01.model-1/go-clock.html")
    assert page.locator("h1").inner_text() == "go-clock"
    assert page.locator("#status").inner_text() == "fail"
    assert page.locator("#cost").inner_text() == "$0.0246"
    assert "last step of try 2" in page.locator("#last-step").inner_text()
    # the last grading's failed tests are visible without a click (an earlier try's are folded)
    failed = page.locator("table.tests td.t-failed")
    assert failed.last.is_visible() and not failed.first.is_visible()
    body = page.locator("body").inner_text()
    assert "go-clock::test_2" in body and "failed" in body and "missing" in body
    # the last try's transcript is open, its last step too; an earlier try's is folded
    tries = page.locator("details.try")
    assert tries.count() == 2
    first = tries.nth(0)
    last_step_1 = first.locator("details.step").last.locator("pre.message")
    assert not last_step_1.is_visible()
    first.locator("summary").first.click()
    assert last_step_1.is_visible() and "last step of try 1" in last_step_1.inner_text()
    # a tool call's output is folded until opened
    step = first.locator("details.step").nth(1)
    step.locator("summary").first.click()
    call = step.locator("details").first
    assert not call.locator("pre").is_visible()
    call.locator("summary").click()
    assert "cat test_2.py" in call.locator("pre").inner_text()
    _shot(page, tmp_path / f"trial-{n_runs}-runs.png")
    # the same task in the other runs, one link each
    assert page.locator("nav a").count() == n_runs  # the report, and the n - 1 other runs
    page.locator("nav a").first.click()
    page.wait_for_load_state()
    assert page.url.endswith("/report.html")
    assert not errors, errors
    page.close()


def test_the_matrix_filters_by_name_language_outcome_and_run_and_sorts(browser, tmp_path):
    tier = _report(tmp_path, 3)
    page = browser.new_page(viewport={"width": 1280, "height": 900})
    page.goto((tier / "report.html").as_uri())
    visible = lambda: [t for t in page.locator("table.matrix td.task").all_inner_texts()  # noqa: E731
                       if t and page.locator("table.matrix td.task", has_text=t).first.is_visible()]
    assert page.locator("#f-shown").inner_text() == f"{len(TASKS)} of {len(TASKS)} tasks shown"
    page.fill("#f-task", "go-")
    assert visible() == ["go-clock"]
    page.fill("#f-task", "")
    page.select_option("#f-group", "python")
    assert sorted(visible()) == ["python-bowling", "python-zipper"]
    page.select_option("#f-group", "")
    page.select_option("#f-outcome", "tampered")  # OUTCOMES cycles: run 1 tampered python-zipper only
    page.select_option("#f-run", "1")
    assert visible() == ["python-zipper"] and page.locator("#f-shown").inner_text() == f"1 of {len(TASKS)} tasks shown"
    page.select_option("#f-outcome", "")
    page.select_option("#f-run", "")
    page.locator("table.matrix th.sort").first.click()  # by task name, ascending
    names = page.locator("table.matrix td.task").all_inner_texts()
    assert names == sorted(names)
    page.locator("table.matrix th.sort").first.click()  # descending
    assert page.locator("table.matrix td.task").all_inner_texts() == sorted(names, reverse=True)
    page.locator("table.matrix").screenshot(path=str(tmp_path / "matrix-sorted.png"))
    print(f"screenshot: {tmp_path / 'matrix-sorted.png'}")
    page.close()


@pytest.mark.parametrize("n_runs", [2, 20])
def test_a_person_follows_a_comparison_to_the_tasks_where_two_runs_differ(browser, tmp_path, n_runs):
    import json
    from urllib.parse import quote

    tier = _report(tmp_path, n_runs)
    data = json.loads((tier / "report.json").read_text())
    first, second = data["agents"][0]["run"], data["agents"][1]["run"]  # the leaderboard's first two
    c = next(c for c in data["comparisons"] if (c["a"], c["b"]) == (first, second) and c["metric"] == "pass@2")
    page = browser.new_page(viewport={"width": 1280, "height": 900})
    errors = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.goto((tier / "report.html").as_uri())
    grid = page.locator("xpath=//h2[starts-with(., 'Paired comparisons')]/following-sibling::table[1]")
    grid.screenshot(path=str(tmp_path / f"comparisons-{n_runs}-runs.png"))
    print(f"screenshot: {tmp_path / f'comparisons-{n_runs}-runs.png'}")
    # two runs: the table's row at pass@2; twenty: the grid's cell of row 2, column 1
    link = grid.locator(f'a[href="compare/{quote(first, safe="")}/{quote(second, safe="")}.html#pass%402"]')
    assert link.count() == 1
    link.click()
    page.wait_for_load_state()
    assert page.url.endswith(f"/compare/{first}/{second}.html#pass%402")
    assert page.locator(":target").get_attribute("id") == "pass@2"  # the fragment found its section
    assert page.locator("h1").inner_text() == f"A{first} vs B{second}"
    tables = page.locator('h2[id="pass@2"] ~ table.pairs')
    a_only, b_only = tables.nth(0), tables.nth(1)
    assert a_only.locator("tr").count() == c["a_only"] + 1 and b_only.locator("tr").count() == c["b_only"] + 1
    if n_runs == 2:  # OUTCOMES cycled: run 1 passes bowling and bob, run 2 acronym and zipper, on try 2
        assert a_only.locator("td.task").all_inner_texts() == ["python-bowling", "java-bob"]
        assert b_only.locator("td.task").all_inner_texts() == ["rust-acronym", "python-zipper"]
        row = a_only.locator("tr").nth(2)
        assert row.locator("td.side.a a.o").inner_text() == "pass@2"
        assert row.locator("td.side.b a.o").inner_text() == "timeout"
        assert "last step of try 1" in row.locator("td.side.b .last").inner_text()
    _shot(page, tmp_path / f"compare-{n_runs}-runs.png")
    # each outcome is a link to its trial's page: follow B's side of the first task A passes and B does not
    task = a_only.locator("td.task").first.inner_text()
    side = a_only.locator("tr").nth(1).locator("td.side.b a.o")
    word = side.inner_text()
    side.click()
    page.wait_for_load_state()
    assert page.url.endswith(f"/trials/{second}/{task}.html")
    assert page.locator("h1").inner_text() == task and page.locator("#status").inner_text() == word
    page.go_back()
    page.locator("nav a").first.click()  # ← report
    page.wait_for_load_state()
    assert page.url.endswith("/report.html")
    assert not errors, errors
    page.close()
