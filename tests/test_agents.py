"""Agent definitions: parsing, clear errors, command placeholders, environment and usage (no Docker needed)."""
from __future__ import annotations

import shutil
import sys
from pathlib import Path

import pytest

from rules.agents import (AgentError, add_usage, aider_usage, get_agent, load_agents, parse_agent,
                          read_usage_file)

sys.path.insert(0, str(Path(__file__).resolve().parent))
from conftest import PROJECT, run_doit  # noqa: E402


def test_builtin_agents_are_noop_and_aider():
    agents = load_agents(PROJECT / "evals" / "agents.toml")
    assert {"noop", "aider"} <= set(agents)
    assert agents["noop"].network == "none" and agents["noop"].command == ("true",)
    aider = agents["aider"]
    assert "AIDER_MODEL" in aider.env and "--no-check-update" in aider.command and aider.usage == "aider"
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
    ({"image": "noop", "command": ["x"], "netwrk": "none"}, "unknown field(s) netwrk; known: image, command"),
    ({"image": "noop", "command": "x"}, "command: must be a list of strings"),
    ({"image": "noop", "command": ["x"], "network": "wifi"}, "network 'wifi' is not one of none, bridge, host"),
    ({"image": "noop", "command": ["x"], "env": ["API KEY"]}, "not environment variable names: API KEY"),
    ({"image": "noop", "command": ["x"], "usage": "magic"}, "usage 'magic' is unknown; known: aider"),
    ({"image": "noop", "command": ["x"], "limits": {"gpus": 1}}, "unknown limit(s) ['gpus']"),
    ({"image": "noop", "command": ["x"], "limits": {"timeout": 0}}, "must be positive"),
])
def test_a_bad_field_names_the_agent_the_field_and_what_is_allowed(raw, message):
    with pytest.raises(AgentError) as err:
        parse_agent("tomo", raw, "agents.toml")
    assert "agents.toml [tomo]" in str(err.value) and message in str(err.value)


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
    assert aider_usage(out) == {"tokens_sent": 3400, "tokens_received": 200, "cost": 0.03}
    assert aider_usage("Tokens: 500 sent, 20 received.\n") == {"tokens_sent": 500, "tokens_received": 20, "cost": None}
    assert aider_usage("no usage here") is None


def test_usage_file_and_sums(tmp_path):
    f = tmp_path / "usage.json"
    f.write_text('{"tokens_sent": 10, "tokens_received": 2, "cost": "free"}')
    assert read_usage_file(f) == {"tokens_sent": 10, "tokens_received": 2, "cost": None}
    f.write_text("[1]")
    assert read_usage_file(f) is None and read_usage_file(tmp_path / "none.json") is None
    total = add_usage(None, {"tokens_sent": 10, "tokens_received": 2, "cost": None})
    total = add_usage(total, {"tokens_sent": 5, "tokens_received": None, "cost": 0.5})
    assert total == {"tokens_sent": 15, "tokens_received": 2, "cost": 0.5}


def _home(tmp_path: Path) -> Path:
    home = tmp_path / "home"
    (home / "evals" / "aider").mkdir(parents=True)
    (home / "evals" / "aider" / "suite.toml").write_text('upstream = "x"\nref = "main"\nlanguages = ["python"]\n')
    shutil.copy(PROJECT / "evals" / "agents.toml", home / "evals" / "agents.toml")
    return home


def test_doit_run_with_an_unknown_agent_or_a_missing_variable_says_what_is_needed(tmp_path, monkeypatch):
    home = _home(tmp_path)
    res = run_doit(home, "agent=tomo", timeout=120)  # doit's `run` command is the default one
    assert res.code != 0 and "unknown agent 'tomo'; agents defined in evals/agents.toml: aider, aider-local, noop" in res.stdout + res.stderr
    monkeypatch.delenv("AIDER_MODEL", raising=False)
    res = run_doit(home, "agent=aider", timeout=120)
    assert res.code != 0 and "agent 'aider' needs the environment variable(s) AIDER_MODEL" in res.stdout + res.stderr
    assert not res.executed("eval:"), "nothing runs before the error"
