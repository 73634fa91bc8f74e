"""The adapters of Claude Code, Codex and Gemini CLI on their real outputs: provider errors captured against a
stub answering 401 / 429 / a closed port (tests/data/agent_outputs/), usage and trajectories on the event
shapes of their JSON streams."""
import json
from pathlib import Path

import pytest

from rules import adapters

DATA = Path(__file__).parent / "data" / "agent_outputs"


@pytest.mark.parametrize("agent, capture, kind", [
    ("claude-code", "cc-401", "auth"), ("claude-code", "cc-429", "rate_limit"), ("claude-code", "cc-conn", "connection"),
    ("codex", "cx-401", "auth"), ("codex", "cx-429", "rate_limit"), ("codex", "cx-conn", "connection"),
    ("gemini-cli", "gm-401", "auth"), ("gemini-cli", "gm-429", "rate_limit"),
])
def test_captured_provider_errors(agent, capture, kind, tmp_path):
    output = (DATA / f"{capture}.txt").read_text()
    assert adapters.provider_error(agent, output)["kind"] == kind
    assert adapters.usage(agent, output, tmp_path) is None  # a refused request counted no token


def lines(*events):
    return "log line\n" + "\n".join(json.dumps(e) for e in events) + "\n"


CLAUDE = lines(
    {"type": "system", "subtype": "init", "model": "scripted"},
    {"type": "assistant", "message": {"id": "m1", "content": [{"type": "text", "text": "writing"}, {
        "type": "tool_use", "id": "t1", "name": "Write", "input": {"file_path": "/work/a.txt", "content": "hi"}}],
        "usage": {"input_tokens": 10, "output_tokens": 5, "cache_read_input_tokens": 2}}},
    {"type": "user", "message": {"content": [{"type": "tool_result", "tool_use_id": "t1", "content": "ok"}]}},
    {"type": "result", "total_cost_usd": 0.5, "usage": {"input_tokens": 20, "cache_creation_input_tokens": 3,
                                                        "cache_read_input_tokens": 4, "output_tokens": 9}})


def test_claude_code_usage_and_unknown_cost(tmp_path):
    assert adapters.usage("claude-code", CLAUDE, tmp_path) == {
        "tokens_sent": 27, "tokens_received": 9, "tokens_cached": 4, "cost": None}
    priced = CLAUDE.replace('"model": "scripted"', '"model": "claude-sonnet-4-5"')
    assert adapters.usage("claude-code", priced, tmp_path)["cost"] == 0.5


def test_claude_code_trajectory(tmp_path):
    steps = adapters.trajectory("claude-code", CLAUDE, tmp_path)["steps"]
    assert steps[0]["tool_calls"][0]["function_name"] == "Write"
    assert steps[0]["observation"]["results"] == [{"source_call_id": "t1", "content": "ok"}]


CODEX = lines(
    {"type": "item.completed", "item": {"id": "i1", "type": "command_execution", "command": "echo hi > a.txt",
                                        "aggregated_output": "", "exit_code": 0}},
    {"type": "item.completed", "item": {"id": "i2", "type": "agent_message", "text": "done"}},
    {"type": "turn.completed", "usage": {"input_tokens": 100, "cached_input_tokens": 40, "output_tokens": 7}})


def test_codex_usage_and_trajectory(tmp_path):
    assert adapters.usage("codex", CODEX, tmp_path) == {
        "tokens_sent": 100, "tokens_received": 7, "tokens_cached": 40, "cost": None}
    steps = adapters.trajectory("codex", CODEX, tmp_path)["steps"]
    assert steps[0]["tool_calls"][0]["arguments"] == {"command": "echo hi > a.txt"}
    assert steps[1]["message"] == "done"


GEMINI = lines(
    {"type": "message", "role": "user", "content": "write"},
    {"type": "message", "role": "assistant", "content": "ok", "delta": True},
    {"type": "tool_use", "tool_name": "write_file", "tool_id": "w1", "parameters": {"file_path": "a.txt"}},
    {"type": "tool_result", "tool_id": "w1", "status": "success", "output": "written"},
    {"type": "result", "status": "success", "stats": {"input_tokens": 50, "output_tokens": 6, "cached": 0}})


def test_gemini_cli_usage_and_trajectory(tmp_path):
    assert adapters.usage("gemini-cli", GEMINI, tmp_path) == {
        "tokens_sent": 50, "tokens_received": 6, "tokens_cached": 0, "cost": None}
    steps = adapters.trajectory("gemini-cli", GEMINI, tmp_path)["steps"]
    assert steps[1]["tool_calls"][0]["function_name"] == "write_file"
    assert steps[1]["observation"]["results"][0]["content"] == "written"
