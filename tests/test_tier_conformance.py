"""Conformance: every tier lab knows keeps the seam of rules/tier.py (as inspect_ai asks every sandbox to pass
its self_check). One parametrised module, for the built-in aider and swe tiers and the toy tier of tests/toy_tier/
(declared by its folder, ``plugin = "toy:ToyTier"``): discovery gives a Selection of specs that carry the tier's
group labels; a render is pure and a rejected one raises Rejected; the report profile groups by one of the tier's
groups; ``eval_steps`` gives uniquely named Steps whose trials write ``runs/<run>/<task>/result.json``;
``stale_judge`` gives a callable; ``report_run`` refuses an unknown agent; an unknown tier names the known ones.

No Docker: each tier reads a fixture source in a scratch lab home (tests/fixture_upstream.py for aider,
tests/fixture_swe.py for swe, tests/fixture_toy.py for the toy), with rules.config's paths pointed at it. What
needs the engine (proofs, trials) is covered per tier elsewhere; for the toy tier by tests/test_toy_tier.py.
"""
from __future__ import annotations

import json
import os
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
from conftest import write_suite  # noqa: E402
from fixture_swe import make_calc, write_swe_suite  # noqa: E402
from fixture_toy import make_toy_home  # noqa: E402
from fixture_upstream import make_upstream  # noqa: E402

from rules import tiers  # noqa: E402
from rules.config import ConfigError  # noqa: E402
from rules.tier import EvalContext, Profile, Rejected, Selection, Step  # noqa: E402

TIERS = ("aider", "swe", "toy")
TRIAL_FILES = ("check.sh", "prompt.txt", "setup.sh", "task.json")  # what rules.trial reads of every task


def _aider(home: Path, scratch: Path) -> str:
    write_suite(home, scratch / "unused", languages=("python", "go"))
    make_upstream(home / ".lab" / "upstream" / "aider")
    return "python-no-config"


def _swe(home: Path, scratch: Path) -> str:
    _repos, records = make_calc(scratch / "src")
    orphan = {**records[0], "instance_id": "lab__calc-9", "version": "9.9"}  # no environment serves 9.9
    with open(scratch / "src" / "data.jsonl", "a") as f:
        f.write(json.dumps(orphan) + "\n")
    write_swe_suite(home, scratch / "src")
    return "lab__calc-9"


def _toy(home: Path, scratch: Path) -> str:
    make_toy_home(home)
    return "toy-broken"


SOURCES: dict[str, Callable[[Path, Path], str]] = {"aider": _aider, "swe": _swe, "toy": _toy}  # → a rejected task


@dataclass
class Made:
    """A tier made in a scratch lab home: the tier, its suite, its selection of every task, the name of one
    task whose render is rejected, and the scratch folder (everything the fixture wrote)."""

    tier: object
    suite: object
    selection: Selection
    rejected: str
    scratch: Path

    def render(self, spec):
        """The render of ``spec``, or the reason it is rejected (a string)."""
        try:
            return self.tier.render(self.suite, spec)
        except Rejected as exc:
            return str(exc)

    def renderable(self) -> list:
        """The chosen specs that render (the fixtures hold rejected ones too)."""
        return [s for s in self.selection.chosen if not isinstance(self.render(s), str)]


def _var(given: dict) -> Callable:
    return lambda name, default=None: given.get(name, default)


@pytest.fixture
def home(tmp_path, monkeypatch) -> Path:
    """A scratch lab home that rules.config, rules.tiers and the registry read (no tier made yet)."""
    import rules.config

    home = tmp_path / "home"
    (home / "evals").mkdir(parents=True)
    monkeypatch.setattr(rules.config, "EVALS", home / "evals")
    monkeypatch.setattr(rules.config, "STATE", home / ".lab")
    monkeypatch.setattr(tiers, "EVALS", home / "evals")
    monkeypatch.setattr(tiers, "_MADE", {})
    monkeypatch.setattr(sys, "path", list(sys.path))  # the registry adds a tier's folder to it
    yield home


@pytest.fixture(params=TIERS)
def made(request, home, tmp_path) -> Made:
    from rules.config import load_suite

    rejected = SOURCES[request.param](home, tmp_path)
    tier = tiers.get(request.param)
    suite = load_suite(request.param)
    return Made(tier, suite, tier.tasks(suite, _var({"all": "1"})), rejected, tmp_path)


def _snapshot(root: Path) -> dict:
    """Every file below ``root``: path → (SHA-256 of its content, mode). Modification times are left out: git
    freshens the objects it writes again (the swe tier's render applies the gold patch in a temporary index,
    writing the objects of its result, which this fixture's fix commit already holds)."""
    import hashlib

    out = {}
    for folder, _dirs, files in os.walk(root):
        for name in files:
            path = os.path.join(folder, name)
            with open(path, "rb") as f:
                out[path] = (hashlib.sha256(f.read()).hexdigest(), os.lstat(path).st_mode)
    return out


def _ctx(made: Made, tasks: list[str]) -> EvalContext:
    """A command's context with one fixture agent ``a`` (run ``a``) and the published ``tasks``."""
    from rules.agents import parse_agent

    agent = parse_agent("a", {"image": "noop", "command": ["true"]})
    agents = {"a": agent}
    return EvalContext(
        suite=made.suite, agents=agents, problem=None, runs={"a": (agent, "a")}, tasks=tasks, var=_var({}),
        whole=lambda name, default: default, backend=lambda: ("local", None),
        stamp=lambda agent, run: made.scratch / "agents" / f"{run}.json",
        agent_problem=lambda name, settings=True: None if name in agents else f"unknown agent {name!r}",
        settings_unused=lambda names: None,
        agent_image=lambda name, base: f"agent_image:{name}" + (f"@{base}" if base else ""),
        since=0.0)


def test_discovery_gives_specs_with_the_tiers_group_labels(made):
    sel = made.selection
    assert isinstance(sel, Selection) and sel.chosen
    names = [s.name for s in sel.chosen]
    assert len(set(names)) == len(names) and set(names) <= set(sel.every)
    for spec in sel.chosen:
        assert set(made.tier.groups) <= set(spec.groups), spec
        assert all(isinstance(v, str) and v for v in spec.groups.values()), spec
        assert isinstance(spec.image, str) and all(isinstance(d, str) for d in spec.deps)
    json.dumps(sel.settings)  # written into the manifest


def test_render_is_pure_and_gives_a_task_lab_can_run(made):
    from rules.reports import PARSERS

    before = _snapshot(made.scratch)
    rendered = 0
    for spec in made.selection.chosen:
        one, two = made.render(spec), made.render(spec)
        if isinstance(one, str):
            assert one == two and one, spec.name  # rejected alike, with a reason
            continue
        rendered += 1
        assert (one.task_files, one.answer_files, one.meta) == (two.task_files, two.answer_files, two.meta)
        assert set(TRIAL_FILES) <= set(one.task_files), spec.name
        meta = json.loads(one.task_files["task.json"][0])
        assert meta["task"] == spec.name and meta["tier"] == made.tier.name and meta["report"] in PARSERS
        assert {k: meta.get(k) for k in made.tier.groups} == {k: spec.groups[k] for k in made.tier.groups}
    assert rendered and _snapshot(made.scratch) == before, "no render, or a render wrote files"


def test_a_rejected_render_raises_rejected(made):
    spec = next(s for s in made.selection.chosen if s.name == made.rejected)
    with pytest.raises(Rejected) as err:
        made.tier.render(made.suite, spec)
    assert str(err.value)  # the reason the manifest records


def test_the_profile_groups_by_one_of_the_tiers_groups(made):
    profile = made.tier.profile
    assert isinstance(profile, Profile) and profile.tier == made.tier.name
    assert profile.group in made.tier.groups and profile.metrics
    assert profile.headline is profile.metrics[-1] and all(m.tries >= 1 for m in profile.metrics)


def test_eval_steps_are_uniquely_named_and_trials_write_their_result(made):
    tasks = [s.name for s in made.renderable()]
    steps = list(made.tier.eval_steps(_ctx(made, tasks)))
    assert steps and all(isinstance(s, Step) for s in steps)
    names = [s.name for s in steps]
    assert len(set(names)) == len(names), names
    trials = [s for s in steps if s.targets]
    runs = made.suite.runs_dir
    assert sorted(t for s in trials for t in s.targets) == sorted(str(runs / "a" / t / "result.json") for t in tasks)
    assert all(callable(s.action[0]) and callable(s.current[0]) for s in trials)
    assert "a" in names  # the run: every trial of it


def test_stale_judge_is_a_callable(made):
    assert callable(made.tier.stale_judge(made.suite, {}))


def test_report_run_refuses_an_unknown_agent(made):
    with pytest.raises(ConfigError, match="nobody"):
        made.tier.report_run(_ctx(made, []), "nobody")


def test_an_unknown_tier_names_the_known_ones(home, tmp_path):
    make_toy_home(home)
    assert tiers.names() == ["aider", "swe", "swe-multi", "toy"]
    toy = tiers.get("toy")
    assert Path(sys.modules[type(toy).__module__].__file__).parent == home / "evals" / "toy"  # its own folder
    with pytest.raises(ConfigError, match="unknown tier 'nope'") as err:
        tiers.get("nope")
    assert all(name in str(err.value) for name in TIERS)


def _copy_toy(home: Path, name: str, edit: Callable[[str], str] = lambda s: s) -> None:
    """The toy tier's folder copied as tier ``name`` (its class says so), its module's text passed through
    ``edit``."""
    import shutil

    shutil.copytree(home / "evals" / "toy", home / "evals" / name)
    module = home / "evals" / name / "toy.py"
    text = module.read_text().replace('name = "toy"', f'name = "{name}"').replace('Profile("toy"', f'Profile("{name}"')
    module.write_text(edit(text))


def test_two_tiers_whose_folders_hold_modules_of_one_name_both_load(home):
    """A red team copied the worked example as a second tier: both folders held toy.py, the first import won and
    the second tier was refused as 'kata'. Each folder's module is its own."""
    make_toy_home(home)
    _copy_toy(home, "kata")
    kata, toy = tiers.get("kata"), tiers.get("toy")
    assert (kata.name, toy.name) == ("kata", "toy") and type(kata) is not type(toy)
    assert Path(sys.modules[type(kata).__module__].__file__).parent == home / "evals" / "kata"


@pytest.mark.parametrize("edit, said", [
    (lambda s: s.replace("    profile = PROFILE\n", ""), "give the class profile"),
    (lambda s: s.replace('group="topic"', 'group="language"'), "group by one of its groups"),
    (lambda s: s + "\n\ndef _needs(self, x):\n    pass\n\n\nToyTier.__init__ = _needs\n", "does not load or make"),
])
def test_a_plugin_missing_what_lab_relies_on_is_refused_in_one_line(home, edit, said):
    make_toy_home(home)
    _copy_toy(home, "kb", edit)
    with pytest.raises(ConfigError, match=said) as err:
        tiers.get("kb")
    assert "\n" not in str(err.value) and "kb" in str(err.value)


def test_a_tier_declares_command_line_variables_of_its_own(home):
    """``doit gen:kata topics=double`` was refused as an unknown variable: lab knew only its own. A tier's
    ``variables`` are known too, and named in the refusal of one that nobody declares."""
    from rules.cli import check_variables

    make_toy_home(home)
    (home / "evals" / "agents.toml").write_text('[noop]\nimage = "noop"\ncommand = ["true"]\n')
    _copy_toy(home, "kc", lambda s: s.replace("    profile = PROFILE\n", '    profile = PROFILE\n    variables = ("topics",)\n'))
    check_variables({"topics": "double", "suite": "kc"})
    with pytest.raises(SystemExit, match="unknown variable.s. nosuch=") as err:
        check_variables({"nosuch": "1"})
    assert "topics=" in str(err.value)
