"""Agent definitions: parsing, clear errors, command placeholders, environment and usage (no Docker needed)."""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from rules.adapters.aider import usage as _aider_usage
from rules.agents import (AgentError, add_usage, get_agent, load_agents, parse_agent,
                          read_usage_file, run_id, slug)

sys.path.insert(0, str(Path(__file__).resolve().parent))
from conftest import AGENTS, PROJECT, run_doit  # noqa: E402


def test_builtin_agents_are_noop_and_aider():
    agents = load_agents(AGENTS)
    assert {"noop", "aider"} <= set(agents)
    assert agents["noop"].network == "none" and agents["noop"].command == ("true",)
    aider = agents["aider"]
    assert [(x.name, x.env) for x in aider.settings] == [("model", "AIDER_MODEL"), ("edit_format", "AIDER_EDIT_FORMAT")]
    assert "AIDER_MODEL" not in aider.env + aider.env_optional
    assert "--no-check-update" in aider.command and aider.usage == "aider"
    assert "aider-chat==" in aider.dockerfile("lab/grader:latest") and aider.tag() == "lab/agent-aider:latest"
    assert aider.tag("lab/grader-x:latest") != aider.tag()


def test_command_placeholders_expand_files_as_arguments_or_quoted_list():
    agent = parse_agent("tomo", {"image": "noop", "command": [
        "tomo", "--prompt", "{prompt}", "--cwd", "{work}", "{files}", "--usage={out}/usage.json",
        "sh -c 'edit {files}' # try {try}", "${HOME}", "{unknown}"]})
    argv = agent.argv(["a b.py", "c.py"], 2)
    assert argv == ["tomo", "--prompt", "/lab/in/prompt.txt", "--cwd", "/work", "a b.py", "c.py",
                    "--usage=/lab/out/usage.json", "sh -c 'edit 'a b.py' c.py' # try 2", "${HOME}", "{unknown}"]


@pytest.mark.parametrize("raw, message", [
    ({"command": ["x"]}, "missing field(s) image"),
    ({"image": "noop", "command": ["x"], "netwrk": "none"}, "unknown field(s) netwrk (network?); known: image, command"),
    ({"image": "noop", "command": "x"}, "command: must be a list of strings"),
    ({"image": "noop", "command": ["x"], "network": "wifi"}, "network 'wifi' is not one of none, bridge, host"),
    ({"image": "noop", "command": ["x"], "env": ["API KEY"]}, "not environment variable names: API KEY"),
    ({"image": "noop", "command": ["x"], "usage": "magic"}, "usage 'magic' is unknown; known: aider"),
    ({"image": "noop", "command": ["x"], "limits": {"gpus": 1}}, "unknown limit(s) gpus (cpus?); known: cpus, memory"),
    ({"image": "noop", "command": ["x"], "limits": {"timout": 5}}, "unknown limit(s) timout (timeout?); known:"),
    ({"image": "noop", "command": ["x"], "limits": {"timeout": True}}, "timeout = True is not seconds"),
    ({"image": "noop", "command": ["x"], "limits": {"timeout": 0}}, "must be positive"),
    ({"image": "noop", "command": ["x"], "limits": {"timeout": "sixty"}}, "timeout = 'sixty' is not seconds"),
    ({"image": "noop", "command": ["x"], "limits": {"memory": "lots"}}, "memory = 'lots' is not bytes"),
])
def test_a_bad_field_names_the_agent_the_field_and_what_is_allowed(raw, message):
    with pytest.raises(AgentError) as err:
        parse_agent("tomo", raw, "agents.toml")
    assert "agents.toml [tomo]" in str(err.value) and message in str(err.value)


def test_a_broken_table_names_all_its_problems_at_once_and_the_file_all_its_broken_tables(tmp_path):
    """A newcomer fixed an agent table one error at a time, each fix showing the next: every problem of the table
    comes in one line, numbered, and a file with several broken tables names each."""
    raw = {"image": "", "command": [], "netwrk": "none", "network": "wifi", "env": ["API KEY"], "usage": "magic",
           "limits": {"timeout": 0}, "settings": {"Model": {"env": "M"}, "size": {"env": "SIZE", "deflt": "1"}}}
    with pytest.raises(AgentError) as err:
        parse_agent("tomo", raw, "agents.toml")
    said = str(err.value)
    assert said.startswith("agents.toml [tomo]: 9 problems: (1) unknown field(s) netwrk (network?)"), said
    for part in ("(2) image must be a template name", "(3) command must not be empty",
                 "(4) not environment variable names: API KEY", "(5) network 'wifi' is not one of",
                 "(6) usage 'magic' is unknown", "(7) limits: timeout = 0.0: it must be positive",
                 "(8) settings.Model: a setting name is lower-case", "(9) settings.size: unknown field(s) deflt"):
        assert part in said, (part, said)
    assert "\n" not in said
    with pytest.raises(AgentError, match=r"^agents.toml \[tomo\]: network 'wifi' is not one of"):
        parse_agent("tomo", {"image": "noop", "command": ["x"], "network": "wifi"}, "agents.toml")  # one: as it was
    path = tmp_path / "agents.toml"
    path.write_text('[noop]\nimage = "noop"\ncommand = ["true"]\n[a]\nimage = "noop"\n'
                    '[b]\nimage = "noop"\ncommand = ["b"]\nnetwork = "wifi"\ncontainer = "box"\n')
    with pytest.raises(AgentError) as err:
        load_agents(path)
    said = str(err.value)
    assert said.startswith(f"{path}: 2 agent tables are badly defined: {path} [a]: missing field(s) command"), said
    assert f" | {path} [b]: 2 problems: (1) network 'wifi'" in said and "(2) container 'box'" in said, said
    broken: dict = {}
    assert set(load_agents(path, broken=broken)) == {"noop"} and set(broken) == {"a", "b"}


def test_every_problem_of_a_limits_table_comes_at_once_each_by_name():
    """``[NAME.limits]`` was reported one problem at a time, and "cpus, memory, pids, timeout and disk must be
    positive" named no field."""
    raw = {"image": "noop", "command": ["x"],
           "limits": {"timeout": 0, "pids": -1, "disk": "lots", "memry": "1g", "tokens": -5, "requests": 1.5}}
    with pytest.raises(AgentError) as err:
        parse_agent("tomo", raw, "agents.toml")
    said = str(err.value)
    for part in ("requests must be a whole number (0: no budget), got 1.5",
                 "tokens must be a whole number (0: no budget), got -5", "unknown limit(s) memry (memory?)",
                 "disk = 'lots' is not bytes"):
        assert part in said, (part, said)
    raw["limits"] = {"timeout": 0, "pids": -1, "cpus": 2}
    with pytest.raises(AgentError, match=r"limits: pids = -1, timeout = 0.0: each must be positive$"):
        parse_agent("tomo", raw, "agents.toml")


def test_unknown_agent_lists_the_known_ones(tmp_path):
    path = tmp_path / "agents.toml"
    path.write_text('[noop]\nimage = "noop"\ncommand = ["true"]\n[tomo]\nimage = "noop"\ncommand = ["tomo"]\n')
    with pytest.raises(AgentError, match="unknown agent 'nope'; agents defined in .*: noop, tomo"):
        get_agent("nope", path)
    path.write_text("[noop\n")
    with pytest.raises(AgentError, match="not valid TOML"):
        load_agents(path)


def test_missing_variables_are_named_and_values_never_enter_the_definition():
    agent = parse_agent("tomo", {"image": "noop", "command": ["tomo"], "env": ["TOMO_KEY", "TOMO_MODEL"],
                                 "env_optional": ["TOMO_BASE"], "env_set": {"TOMO_MODE": "bench"}})
    with pytest.raises(AgentError, match="needs the environment variable\\(s\\) TOMO_KEY, TOMO_MODEL"):
        agent.environment({"TOMO_KEY": ""})
    env = agent.environment({"TOMO_KEY": "secret", "TOMO_MODEL": "m", "OTHER": "x"})
    assert env == {"TOMO_MODE": "bench", "TOMO_KEY": "secret", "TOMO_MODEL": "m"}
    assert "secret" not in str(agent.definition())


def test_definition_digest_changes_with_any_field():
    a = parse_agent("tomo", {"image": "noop", "command": ["tomo"]})
    b = parse_agent("tomo", {"image": "noop", "command": ["tomo"], "limits": {"timeout": 60}})
    assert a.digest == parse_agent("tomo", {"image": "noop", "command": ["tomo"]}).digest != b.digest


def test_aider_usage_is_read_from_its_token_lines():
    out = ("Tokens: 2.3k sent, 120 received. Cost: $0.01 message, $0.01 session.\n"
           "Applied edit to a.py\nTokens: 1.1k sent, 1.5k cache write, 80 received. Cost: $0.02 message, $0.03 session.\n")
    assert _aider_usage(out) == {"tokens_sent": 3400, "tokens_received": 200, "tokens_cached": None, "cost": 0.03}
    assert _aider_usage("Tokens: 500 sent, 20 received.\n") == {"tokens_sent": 500, "tokens_received": 20,
                                                                "tokens_cached": None, "cost": None}
    assert _aider_usage("Tokens: 9k sent, 4k cache hit, 1 received.\n")["tokens_cached"] == 4000
    assert _aider_usage("no usage here") is None


def test_an_unknown_adapter_is_refused_naming_the_known_ones():
    with pytest.raises(AgentError, match="adapter 'nope' is unknown; known: .*aider"):
        parse_agent("tomo", {"image": "noop", "command": ["tomo"], "adapter": "nope"})
    a = parse_agent("tomo", {"image": "noop", "command": ["tomo"], "adapter": "aider"})
    assert a.usage == a.errors == "aider"


def test_aider_chat_history_is_a_trajectory(tmp_path):
    from rules.adapters import trajectory
    (tmp_path / "chat.md").write_text("# aider chat started at 2026\n\n#### fix it\n\nHere.\n\n> Applied edit to a.py\n")
    steps = trajectory("aider", "", tmp_path)["steps"]
    assert [(s["source"], s["message"]) for s in steps] == [
        ("system", "# aider chat started at 2026"), ("user", "fix it"), ("agent", "Here."),
        ("system", "Applied edit to a.py")]
    assert trajectory("aider", "", tmp_path / "none") is None


def test_usage_file_and_sums(tmp_path):
    f = tmp_path / "usage.json"
    f.write_text('{"tokens_sent": 10, "tokens_received": 2, "cost": "free"}')
    assert read_usage_file(f) == {"tokens_sent": 10, "tokens_received": 2, "tokens_cached": None, "cost": None}
    f.write_text("[1]")
    assert read_usage_file(f) is None and read_usage_file(tmp_path / "none.json") is None
    total = add_usage(None, {"tokens_sent": 10, "tokens_received": 2, "cost": None})
    total = add_usage(total, {"tokens_sent": 5, "tokens_received": None, "cost": 0.5})
    assert total == {"tokens_sent": 15, "tokens_received": 2, "tokens_cached": None, "cost": 0.5}


def _home(tmp_path: Path) -> Path:
    home = tmp_path / "home"
    (home / "evals" / "aider").mkdir(parents=True)
    (home / "evals" / "aider" / "suite.toml").write_text('upstream = "x"\nref = "main"\nlanguages = ["python"]\n')
    shutil.copy(AGENTS, home / "evals" / "agents.toml")
    return home


def test_doit_run_with_an_unknown_agent_or_a_missing_variable_says_what_is_needed(tmp_path, monkeypatch):
    home = _home(tmp_path)
    res = run_doit(home, "agent=tomo", timeout=120)  # doit's `run` command is the default one
    said = res.stdout + res.stderr
    assert res.code != 0 and said.strip() == ("agent=tomo: unknown agent 'tomo'; agents defined in evals/agents.toml: "
                                              "aider, aider-local, mini-swe-agent, noop; nothing was run"), said
    monkeypatch.delenv("AIDER_MODEL", raising=False)
    res = run_doit(home, "agent=aider", timeout=120)
    assert res.code != 0 and ("agent 'aider' needs a value for its setting(s) model (model: give model=VALUE on "
                              "the command line or set AIDER_MODEL)") in res.stdout + res.stderr
    assert not res.executed("eval:"), "nothing runs before the error"


def test_doit_run_refuses_what_it_would_drop_without_a_word(tmp_path):
    home = _home(tmp_path)
    out = lambda res: res.stdout + res.stderr  # noqa: E731
    res = run_doit(home, "agent=noop", "model=m1", timeout=120)  # model is aider's setting, not noop's
    assert res.code != 0 and "model= is not a setting of 'noop' (its settings: none)" in out(res), out(res)
    res = run_doit(home, "agent=noop", "langs=python", "limit=2", timeout=120)
    assert res.code != 0 and "langs=, limit= choose what `doit gen:aider` proves and publishes" in out(res), out(res)
    res = run_doit(home, "agent=", timeout=120)
    assert res.code != 0 and "agent=: give the name of an agent" in out(res), out(res)
    agents = home / "evals" / "agents.toml"
    agents.write_text(agents.read_text() + '\n[broken]\nimage = "noop"\ncommand = ["true"]\ncontainer = "bogus"\n')
    res = run_doit(home, "agent=noop", timeout=120)  # another agent's bad table is said, loudly, not dropped
    warned = [x for x in res.stderr.splitlines() if x.startswith("lab: agent 'broken' cannot run")]
    assert len(warned) == 1 and "container 'bogus' is not one of" in warned[0] and "agent=noop:" not in out(res), out(res)
    # this home has no published tasks: noop's own refusal says gen first, broken's line is beside it
    assert res.code != 0 and "no published tasks" in out(res) and "TaskFailed" not in out(res), out(res)
    res = run_doit(home, "agent=broken", timeout=120)  # the asked agent's own table: said once, in its refusal
    assert res.code != 0 and out(res).count("container 'bogus' is not one of") == 1, out(res)
    assert "agent=broken:" in out(res) and "nothing was run" in out(res), out(res)


# ---- settings: what changes an agent's behaviour is part of its identity ----

TOMO = {"image": "noop", "command": ["tomo"], "env": ["TOMO_KEY"], "env_optional": ["TOMO_BASE"],
        "settings": {"model": {"env": "TOMO_MODEL"}, "temperature": {"env": "TOMO_TEMP", "default": "0"}}}


def test_a_setting_comes_from_the_command_line_else_the_environment_else_its_default():
    agent = parse_agent("tomo", TOMO)
    assert agent.resolve({"model": "cli/m"}, {"TOMO_MODEL": "env-m"}).values == (("model", "cli/m"), ("temperature", "0"))
    assert agent.resolve({}, {"TOMO_MODEL": "env-m", "TOMO_TEMP": "0.7"}).values == (("model", "env-m"), ("temperature", "0.7"))
    with pytest.raises(AgentError, match=r"agent 'tomo' needs a value for its setting\(s\) model \(model: give "
                                         r"model=VALUE on the command line or set TOMO_MODEL\)"):
        agent.resolve({}, {"TOMO_TEMP": "1"})
    # the value reaches the container in its variable, over the caller's
    env = agent.resolve({"model": "cli/m"}).environment({"TOMO_KEY": "secret", "TOMO_MODEL": "env-m"})
    assert env == {"TOMO_KEY": "secret", "TOMO_MODEL": "cli/m", "TOMO_TEMP": "0"}


def test_two_models_are_two_runs_with_their_own_digest_folder_and_label(tmp_path):
    agent = parse_agent("tomo", TOMO)
    a, b = agent.resolve({"model": "openai/gpt-4o"}, {}), agent.resolve({"model": "openai/o3"}, {})
    assert a.digest != b.digest != agent.resolve({"model": "openai/o3", "temperature": "1"}, {}).digest
    assert (a.run, a.label) == ("tomo.openai-gpt-4o.0", "tomo (openai/gpt-4o, 0)")
    assert a.run_record() == {"version": 1, "run": "tomo.openai-gpt-4o.0", "agent": "tomo",
                              "settings": {"model": "openai/gpt-4o", "temperature": "0"}, "label": "tomo (openai/gpt-4o, 0)"}
    assert "secret" not in json.dumps(a.definition()) and a.definition()["settings"]["model"] == {
        "env": "TOMO_MODEL", "value": "openai/gpt-4o"}
    # the same slug for another value never shares a folder: the second gets a suffix
    assert run_id(a, tmp_path) == "tomo.openai-gpt-4o.0"
    (tmp_path / a.run).mkdir()
    (tmp_path / a.run / "run.json").write_text(json.dumps(a.run_record()))
    c = agent.resolve({"model": "openai:gpt-4o"}, {})
    assert c.run == a.run and run_id(a, tmp_path) == a.run
    assert run_id(c, tmp_path).startswith("tomo.openai-gpt-4o.0-") and run_id(c, tmp_path) != a.run
    assert run_id(parse_agent("x", {"image": "noop", "command": ["x"], "settings": {"m": {"env": "M"}}}).resolve(
        {"m": "y"}, {}), tmp_path, taken=["x.y"]) != "x.y", "a run never takes another agent's name"
    assert slug("a b/c::d") == "a-b-c-d" and slug("../x") == "x" and slug("///") == "-"


def test_an_agent_without_settings_keeps_its_definition_and_run():
    noop = load_agents(AGENTS)["noop"]
    assert "settings" not in noop.definition() and noop.resolve({"model": "m"}, {}).digest == noop.digest
    assert (noop.run, noop.label) == ("noop", "noop")


@pytest.mark.parametrize("settings, message", [
    ({"model": "AIDER_MODEL"}, "must be { env = \"VAR\" }"),
    ({"model": {"env": "OPENAI_API_KEY"}}, "OPENAI_API_KEY looks like a secret"),
    ({"model": {"env": "M", "secret": True}}, "unknown field(s) secret; known: env, default"),
    ({"agent": {"env": "M"}}, "not one of lab's own variables"),
    ({"Model": {"env": "M"}}, "lower-case letters"),
    ({"model": {"env": "TOMO_BASE"}}, "TOMO_BASE is also listed in env/env_optional"),
])
def test_a_bad_setting_is_named(settings, message):
    with pytest.raises(AgentError) as err:
        parse_agent("tomo", {**TOMO, "settings": settings}, "agents.toml")
    assert "agents.toml [tomo] settings" in str(err.value) and message in str(err.value)


def test_with_values_refuses_unknown_settings():
    agent = parse_agent("tomo", TOMO)
    assert agent.with_values({"model": "m"}).values == (("model", "m"), ("temperature", "0"))
    with pytest.raises(AgentError, match="has no setting\\(s\\) modle; its settings: model, temperature"):
        agent.with_values({"modle": "m"})


def test_unknown_variables_are_named_with_the_known_ones(tmp_path):
    home = _home(tmp_path)
    for bad in ("lang=go", "agnet=noop"):
        res = run_doit(home, "list", bad, timeout=120)
        name = bad.split("=")[0]
        assert res.code != 0 and f"unknown variable(s) {name}=; lab knows agent=, agents=, all=" in res.stderr, res.stderr
        assert "model=" in res.stderr and "langs=" in res.stderr
    assert run_doit(home, "list", "langs=go", "model=x", timeout=120).code == 0
    res = run_doit(home, "list", "agent=noop", "agent=aider", timeout=120)
    assert res.code != 0 and "agent= is given 2 times ('noop', 'aider'); give it once" in res.stderr, res.stderr


def test_a_variable_given_twice_stops_the_command():
    from rules.cli import check_repeated

    check_repeated(["run", "agent=noop", "langs=go,python", "--verbosity=2"])
    with pytest.raises(SystemExit, match="langs= is given 2 times \\('go', 'python'\\)"):
        check_repeated(["gen:aider", "langs=go", "limit=3", "langs=python"])


def test_eval_of_an_unknown_agent_names_the_known_ones_and_settings_make_the_run(tmp_path):
    home = _home(tmp_path)
    res = run_doit(home, "eval:nope", timeout=120)
    assert res.code != 0 and "Invalid parameter" not in res.stderr
    assert "eval:nope: unknown agent or run 'nope'; agents (evals/agents.toml): aider, aider-local, mini-swe-agent, noop" in res.stdout
    res = run_doit(home, "list", "--all", "eval", "model=openai/gpt-4o", timeout=120)
    listed = {line.split()[0] for line in res.stdout.splitlines() if line.strip()}
    assert {"eval:aider", "eval:aider.openai-gpt-4o", "eval:noop"} <= listed, res.stdout
    res = run_doit(home, "eval:aider", "repeat=two", timeout=120)
    assert res.code != 0 and "repeat=two: give a whole number, 1 or more; nothing was run" in res.stderr


def test_one_trial_named_with_repeat_is_refused_unless_its_repeats_are_named_too(tmp_path):
    """`doit eval:noop/python-hello repeat=3` ran the trial's repeat 1 alone and dropped repeat=3 without a word
    (seen by a newcomer): the trial is refused in one line naming its other repeats and the whole run's command."""
    home = _home(tmp_path)
    (home / "evals" / "aider" / "tasks" / "python-hello").mkdir(parents=True)
    (home / "evals" / "aider" / "tasks" / "python-hello" / "task.json").write_text("{}")
    (home / "evals" / "aider" / "manifest.json").write_text(json.dumps(
        {"tier": "aider", "tasks": [{"task": "python-hello", "status": "kept"}]}))
    res = run_doit(home, "eval:noop/python-hello", "repeat=3", timeout=120)
    said = res.stdout + res.stderr
    assert res.code != 0 and ("eval:noop/python-hello repeat=3: eval:noop/python-hello is that trial's repeat 1 "
                              "alone; name its other repeats too (eval:noop/python-hello@2 eval:noop/python-hello@3) "
                              "or run every trial of the run 3 times (eval:noop repeat=3); the trial was not run") in said, said
    assert not (home / "evals" / "aider" / "runs" / "noop" / "python-hello").exists()
    listed = run_doit(home, "list", "--all", "eval", "repeat=3", timeout=120)
    assert "eval:noop/python-hello@3" in listed.stdout, listed.stdout  # each repeat is a trial of its own


def test_repeats_left_out_names_only_a_trial_asked_without_its_repeats():
    from rules.cli import repeats_left_out

    steps = {"noop", "noop/a", "noop/a@2", "noop/a@3", "noop/b", "noop/b@2", "noop/b@3"}
    assert repeats_left_out(["noop/a"], steps, 1) == {}  # repeat=1: the trial is the whole ask
    assert repeats_left_out(["noop", "noop/a@2", "noop/x"], steps, 3) == {}  # a run, one repeat, an unknown trial
    assert repeats_left_out(["noop/a", "noop/a@2", "noop/a@3"], steps, 3) == {}  # every repeat named
    refused = repeats_left_out(["noop/a", "noop/a@3", "noop/b"], steps, 3)
    assert set(refused) == {"noop/a", "noop/b"} and "(eval:noop/a@2)" in refused["noop/a"], refused


def test_ci_runs_exactly_the_readme_test_command_in_the_projects_virtual_environment():
    readme = (PROJECT / "README.md").read_text()
    ci, setup = (PROJECT / ".ci" / "run").read_text(), (PROJECT / ".ci" / "setup").read_text()
    assert "\n    bash .ci/setup && .venv/bin/doit gen:aider && .venv/bin/doit run agent=noop\n" in readme
    command = "\n    .venv/bin/python -m pytest\n"
    assert command in readme and f"\n{command.strip()}\n" in ci, "README's test command is the one CI runs"
    assert '"$rc" -eq 5' in ci and "exit 1" in ci, "collecting no tests is a failure"
    assert "python3 -m venv" in setup and ".venv/bin/python -m pip install" in setup and "python3-venv" in setup
    assert ".venv/" in (PROJECT / ".gitignore").read_text().split()


def test_every_passed_through_variable_is_kept_out_of_logs_whatever_its_name():
    """README: variables passed through from the shell (``env``, ``env_optional``) are never written to disk.
    Redaction went by the name (KEY, TOKEN, ...) only, so ``HF_ACCESS`` or ``MODEL_SK`` reached agent-1.log."""
    from rules.agents import Agent
    from rules.trial import _redact, secret_env

    agent = Agent(name="tomo", image="noop", command=("true",), env=("HF_ACCESS",), env_optional=("MODEL_SK",),
                  env_set=(("MODEL", "gpt-4o"),))
    env = {"HF_ACCESS": "hf_abcdefgh1234", "MODEL_SK": "sk-zzzz9999", "MODEL": "gpt-4o", "OTHER_TOKEN": "tok-1234",
           "SHORT": "ab"}
    hidden = secret_env(agent, env)
    assert set(hidden) == {"HF_ACCESS", "MODEL_SK", "OTHER_TOKEN"}  # env_set values (a model's name) are kept
    text = _redact("value is hf_abcdefgh1234 sk-zzzz9999 tok-1234 on gpt-4o", hidden)
    assert text == "value is *** *** *** on gpt-4o"


def test_no_test_reads_the_users_own_agents_toml():
    """A newcomer who added a `tomo` table to evals/agents.toml (README, Adding an agent) saw this file's tests
    fail: they read that file. Tests read tests/agents.toml, lab's shipped agents."""
    here = Path(__file__).resolve().parent
    needle = " / ".join(["PROJECT", '"evals"', '"agents.toml"'])  # spelled so that this file does not hold it
    readers = [p.name for p in sorted(here.glob("*.py")) if needle in p.read_text()]
    assert readers == [], f"these read the user's evals/agents.toml: {readers}"
    assert {"noop", "aider", "aider-local"} <= set(load_agents(AGENTS))


def test_a_badly_defined_agent_stops_only_itself(tmp_path):
    home = _home(tmp_path)
    with open(home / "evals" / "agents.toml", "a") as f:
        f.write('\n[tomo]\nimage = "noop"\ncommand = "not a list"\n')
    listed = run_doit(home, "list", "--all", timeout=120)
    lines = listed.stdout.splitlines()
    assert listed.code == 0 and any(x.startswith("eval:noop ") for x in lines), listed.stdout[-2000:]
    assert any(x.startswith("agent_image:aider ") for x in lines), "the other agents are still listed"
    warned = [x for x in listed.stderr.splitlines() if x.startswith("lab: agent 'tomo' cannot run")]
    assert len(warned) == 1 and "[tomo] command: must be a list of strings" in warned[0], listed.stderr
    res = run_doit(home, "agent=tomo", timeout=120)
    said = res.stdout + res.stderr
    assert res.code != 0 and "agent=tomo: " in said and "[tomo] command: must be a list of strings" in said, said
    assert "unknown agent" not in said and not res.executed("eval:")


def test_an_agent_with_none_of_its_keys_or_base_urls_stops_before_its_first_trial(tmp_path, monkeypatch):
    raw = {"image": "noop", "command": ["tomo"], "env_optional": ["TOMO_KEY", "TOMO_BASE"],
           "env_any": ["TOMO_KEY", "TOMO_BASE"]}
    agent = parse_agent("tomo", raw)
    assert agent.missing_env({}) == ["one of TOMO_KEY, TOMO_BASE"]
    assert agent.missing_env({"TOMO_BASE": "http://127.0.0.1:4000"}) == []
    assert "env_any" not in agent.definition(), "what must be set changes no trial: results stay valid"
    with pytest.raises(AgentError, match=r"env_any names TOMO_URL, which env_optional does not list"):
        parse_agent("tomo", {**raw, "env_any": ["TOMO_URL"]})
    home = _home(tmp_path)
    with open(home / "evals" / "agents.toml", "a") as f:
        f.write('\n[tomo]\nimage = "noop"\ncommand = ["true"]\nenv_optional = ["TOMO_KEY", "TOMO_BASE"]\n'
                'env_any = ["TOMO_KEY", "TOMO_BASE"]\n')
    monkeypatch.delenv("TOMO_KEY", raising=False)
    monkeypatch.delenv("TOMO_BASE", raising=False)
    res = run_doit(home, "agent=tomo", timeout=120)
    said = res.stdout + res.stderr
    assert res.code != 0 and "needs the environment variable(s) one of TOMO_KEY, TOMO_BASE" in said, said
    assert not res.executed("eval:")


def test_opencode_config_is_valid_json_whatever_the_models_name(tmp_path):
    import tomllib

    shipped = tomllib.loads(PROJECT.joinpath("evals", "agents.toml").read_text())  # its opencode table alone
    command = parse_agent("opencode", shipped["opencode"]).command[2]
    config_part = command.split("\nexec ")[0]  # everything before the agent starts: it only writes the config
    for model in ("gpt-4o", 'a"b\\c', "ollama/qwen2.5-coder:7b"):
        env = {"HOME": str(tmp_path), "OPENCODE_MODEL": model, "PATH": os.environ["PATH"]}
        subprocess.run(["sh", "-c", config_part], env=env, check=True, timeout=30)
        config = json.loads((tmp_path / ".config" / "opencode" / "opencode.json").read_text())
        assert list(config["provider"]["lab"]["models"]) == [model] and config["$schema"].startswith("https://")


def test_get_agent_loads_its_own_table_whatever_another_table_holds(tmp_path):
    """A trial loads its agent by name (rules.runs: get_agent): another agent's bad table must not stop it (the
    newcomer's finding: every noop trial failed with broken's error); its own bad table is its error."""
    from rules.agents import get_agent

    path = tmp_path / "agents.toml"
    path.write_text('[noop]\nimage = "noop"\ncommand = ["true"]\n[broken]\nimage = "noop"\ncommand = "true"\n')
    assert list(get_agent("noop", path).command) == ["true"]
    with pytest.raises(AgentError, match=r"\[broken\] command: must be a list of strings"):
        get_agent("broken", path)
    with pytest.raises(AgentError, match="unknown agent 'nosuch'"):
        get_agent("nosuch", path)


def test_gen_with_an_unknown_language_names_the_tier_s_and_that_nothing_ran(lab_home):
    """A newcomer got a Python list (`['cobol']`) and no word on whether anything had been proven."""
    res = run_doit(lab_home, "gen:aider", "langs=cobol,python", timeout=120)
    said = res.stdout + res.stderr
    assert res.code != 0, said
    assert ("langs=: unknown language(s) cobol; this tier has go,javascript,python,rust (for example "
            "langs=go,javascript); nothing was proven or run") in said, said
    assert not res.executed("prove"), res.ran
    assert "['" not in said and not (lab_home / ".lab" / "build" / "aider" / "manifest.json").exists()



@pytest.mark.parametrize("value", ["", ","])
def test_gen_with_an_empty_langs_selects_nothing_and_says_so(lab_home, value):
    """`langs=` with no track in it would publish nothing, and so unpublish every task proven so far."""
    res = run_doit(lab_home, "gen:aider", f"langs={value}", timeout=120)
    said = res.stdout + res.stderr
    assert res.code != 0, said
    assert f"langs={value}: name at least one track (for example langs=go,javascript)" in said, said
    assert not res.executed("prove"), res.ran

def test_run_before_any_gen_refuses_in_one_line_and_says_gen_first(lab_home):
    """A newcomer's `doit run agent=noop` before `doit gen:aider` exited 0 with a report whose one hint was to
    run `doit run agent=noop` again."""
    res = run_doit(lab_home, "run", "agent=noop", timeout=120)
    said = res.stdout + res.stderr
    assert res.code != 0, said
    assert ("no published tasks in evals/aider/manifest.json: run `doit gen:aider` first, which proves and "
            "publishes them; nothing was run") in said, said
    assert not res.executed("eval"), res.ran
    report = run_doit(lab_home, "report", timeout=120)
    assert report.code == 0 and "No published tasks yet: `doit gen:aider` proves and publishes them" in report.stdout
    assert "No results yet" not in report.stdout


def test_eval_of_a_broken_agent_or_a_run_of_settings_says_what_is_true(tmp_path):
    """``doit eval:broke/<task>`` for a broken table said "unknown agent or run 'broke'" after printing its
    problems; ``doit eval:tomo.m1/<task>`` without model= said unknown while listing tomo.m1 under other runs."""
    import json

    from rules.cli import unknown_eval

    runs_dir = tmp_path / "runs"
    (runs_dir / "tomo.m1").mkdir(parents=True)
    (runs_dir / "tomo.m1" / "run.json").write_text(json.dumps({"agent": "tomo", "settings": {"model": "m1"}}))
    agents = {"tomo": object(), "noop": object()}
    runs = {"broke": "agent 'broke' (evals/agents.toml): container: must be one of ..."}
    said = unknown_eval("broke/t-1", agents, runs, None, ["t-1"], runs_dir)
    assert said.startswith("eval:broke/t-1: the agent 'broke' cannot run: agent 'broke' (evals/agents.toml)"), said
    assert "unknown" not in said and said.endswith("fix its table in evals/agents.toml")
    said = unknown_eval("tomo.m1/t-1", agents, runs, None, ["t-1"], runs_dir)
    assert said == ("eval:tomo.m1/t-1: 'tomo.m1' is the run of agent 'tomo' with model=m1; name the agent and give "
                    "its settings: `doit eval:tomo/t-1 model=m1`"), said
    assert "unknown agent or run 'nope'" in unknown_eval("nope", agents, runs, None, ["t-1"], runs_dir)


def test_an_image_path_is_relative_to_the_lab_home_as_agents_toml_says(tmp_path):
    """evals/agents.toml's header said a path with "/" is relative to the project root; it is the lab home's."""
    assert 'is relative to the lab home (LAB_HOME when set' in PROJECT.joinpath("evals", "agents.toml").read_text()
    (tmp_path / "mine").mkdir()
    (tmp_path / "mine" / "x.Dockerfile.j2").write_text("FROM {{ grader }}\n")
    code = ("from rules.agents import parse_agent; "
            "print(parse_agent('x', {'image': 'mine/x.Dockerfile.j2', 'command': ['true']}, 'a.toml').template_path())")
    out = subprocess.run([sys.executable, "-c", code], cwd=PROJECT, capture_output=True, text=True,
                         env={**os.environ, "LAB_HOME": str(tmp_path)})
    assert out.stdout.strip() == str(tmp_path.resolve() / "mine" / "x.Dockerfile.j2"), out.stderr
