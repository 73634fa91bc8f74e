"""Agents on the swe-multi tier through doit and the real Docker engine (the swe tier's trials, its own tier's
name, groups and tasks): on the Go fixture made at test time (tests/fixture_swe_multi.py), ``noop`` is graded
unresolved (never an error), an agent that writes the fix resolves it, an attempt that breaks a pre-existing test
(the task's ``pretest.sh``: its packages' tests at the base commit) is not plausible and loses to a later one that
does not, and a built-in agent (mini-swe-agent, against the scripted model fixture of tests/scripted_model/, with
no network) runs from its own prefix on the Go environment image and resolves the instance."""
from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
from conftest import AGENTS, run_doit  # noqa: E402
from fixture_swe_multi import BASE, FIXED, make_calcgo, write_multi_suite  # noqa: E402
from test_agents_swe import assert_resolved_from_own_prefix, scripted_swe_table  # noqa: E402

docker = pytest.mark.docker
TASK = "lab__calcgo-1"
BUILT_IN = "mini-swe-agent"  # its own Python prefix laid into an image whose only Python is Debian's
BREAKS_SUB = FIXED.replace("int { return a - b }", "int { return a + b }")  # Add fixed, Sub broken


def _writes(source: str) -> str:
    """A command line writing ``source`` (no ``%`` or ``'`` in it) to calc/calc.go."""
    return "printf '" + source.replace("\n", "\\n") + "' > calc/calc.go"


SCRIPTED = f"""
[fixer]
image = "noop"
command = ["sh", "-c", '''{_writes(FIXED)}''']
network = "none"

[breaker]
image = "noop"
command = ["sh", "-c", '''{_writes(BREAKS_SUB)}''']
network = "none"
"""


@pytest.fixture(scope="module")
def home(tmp_path_factory, grader_image) -> Path:
    """A lab home with the Go fixture generated (environment image, proof) and the agents: noop, fixer,
    breaker, and ``mini-swe-agent-go`` (the shipped table answered by the scripted model)."""
    root = tmp_path_factory.mktemp("multi-trials")
    make_calcgo(root / "src")
    home = root / "home"
    write_multi_suite(home, root / "src")
    shutil.copy(AGENTS, home / "evals" / "agents.toml")
    with open(home / "evals" / "agents.toml", "a") as f:
        f.write(SCRIPTED + scripted_swe_table(BUILT_IN, f"{BUILT_IN}-go", "calc/calc.go", FIXED, BASE["calc/calc.go"]))
    res = run_doit(home, "gen:swe-multi", timeout=1800)
    assert res.code == 0, res.stdout[-3000:] + res.stderr[-3000:]
    return home


def _run(home: Path, *args: str):
    res = run_doit(home, "run", "suite=swe-multi", "jobs=1", *args, timeout=2400)
    assert res.code == 0, res.stdout[-4000:] + res.stderr[-3000:]
    return res


def _result(home: Path, run: str) -> dict:
    return json.loads((home / "evals" / "swe-multi" / "runs" / run / TASK / "result.json").read_text())


@docker
def test_noop_is_unresolved_and_an_agent_that_writes_the_fix_resolves_it(home):
    _run(home, "agent=noop")
    noop = _result(home, "noop")
    assert (noop["status"], noop["resolved"], noop["error"]) == ("fail", False, None), noop
    assert (noop["tier"], noop["repo"], noop["language"]) == ("swe-multi", "lab/calcgo", "go")
    assert noop["attempts"][0]["edit"] == "the attempt changed nothing"
    assert noop["tests"]["failed"] >= 1  # TestAdd, held out, graded on the untouched base
    _run(home, "agent=fixer")
    fixer = _result(home, "fixer")
    assert (fixer["status"], fixer["resolved"], fixer["plausible"]) == ("pass", True, True), fixer
    report = json.loads((home / "evals" / "swe-multi" / "report.json").read_text())
    rows = {row["run"]: row for row in report["agents"]}
    assert (rows["noop"]["resolved"]["count"], rows["fixer"]["resolved"]["count"]) == (0, 1), rows
    predictions = (home / "evals" / "swe-multi" / "predictions" / "fixer.jsonl").read_text()
    assert "+func Add(a, b int) int { return a + b }" in json.loads(predictions)["model_patch"]


@docker
def test_an_attempt_that_breaks_a_pre_existing_test_loses_to_one_that_does_not(home):
    _run(home, "agents=breaker,fixer", "attempts=2")
    r = _result(home, "breaker+fixer.x2")
    first, second = r["attempts"]
    # the pre-existing tests (pretest.sh: TestSub's cases at base) fail on the first attempt's patch
    assert (first["plausible"], first["broken"]) == (False, ["TestSub/negative", "TestSub/small"]), first
    assert (second["agent"], second["plausible"]) == ("fixer", True), second
    assert (r["chosen"], r["resolved"]) == (1, True), r


@docker
def test_a_built_in_agent_resolves_it_from_its_own_prefix_on_the_go_environment_image(home):
    name = f"{BUILT_IN}-go"
    res = _run(home, f"agent={name}")
    found = list((home / "evals" / "swe-multi" / "runs").glob(f"{name}.*/{TASK}/result.json"))
    assert len(found) == 1, (found, res.stdout[-3000:] + res.stderr[-3000:])
    assert_resolved_from_own_prefix(found[0].parent, BUILT_IN, res)
    attempt = json.loads(found[0].read_text())["attempts"][0]
    assert (attempt["plausible"], attempt["broken"]) == (True, []), attempt  # its pre-existing tests ran, passed
