"""The opencode, qwen-code and cline adapters on outputs captured from the real agents (opencode 1.18.33,
qwen-code 0.24.4, cline 3.0.65) against a stub OpenAI chat server on 127.0.0.1 that answered a file-writing tool
call then "Done." (120 prompt and 12 completion tokens a request), or 401 for every request."""
from pathlib import Path

import pytest

from rules import adapters

DATA = Path(__file__).parent / "data" / "agent_outputs"
CASES = {  # adapter: (captured file stem, tokens sent, tokens received, tool calls in the trajectory)
    "opencode": ("opencode", 240, 24, 1),
    "qwen-code": ("qwen", 240, 24, 1),
    "cline": ("cline", 240, 24, 0),  # the stub offered cline no tool it knew: text replies only
}


def _read(stem: str) -> str:
    return (DATA / f"{stem}.txt").read_text()


@pytest.mark.parametrize("name", sorted(CASES))
def test_usage_counts_the_captured_tokens_with_no_cost_for_an_unpriced_model(name):
    stem, sent, received, _ = CASES[name]
    found = adapters.usage(name, _read(f"{stem}-ok"), Path("/nonexistent"))
    assert found == {"tokens_sent": sent, "tokens_received": received, "tokens_cached": 0, "cost": None}


@pytest.mark.parametrize("name", sorted(CASES))
def test_trajectory_has_the_captured_steps_and_tool_calls(name):
    stem, _, _, calls = CASES[name]
    traj = adapters.trajectory(name, _read(f"{stem}-ok"), Path("/nonexistent"))
    assert traj["schema_version"] == "ATIF-v1.7" and traj["steps"]
    tool_calls = [c for s in traj["steps"] for c in s.get("tool_calls", [])]
    assert len(tool_calls) == calls
    assert any(s["message"] == "Done." for s in traj["steps"])
    for call in tool_calls:
        assert "write" in call["function_name"] and call["arguments"]
        step = next(s for s in traj["steps"] if call in s.get("tool_calls", []))
        assert step["observation"]["results"][0]["source_call_id"] == call["tool_call_id"]


@pytest.mark.parametrize("name", sorted(CASES))
def test_a_refused_key_is_an_auth_error(name):
    stem = CASES[name][0]
    assert adapters.provider_error(name, _read(f"{stem}-401"))["kind"] == "auth"
    assert adapters.provider_error(name, _read(f"{stem}-ok")) is None


@pytest.mark.parametrize("name", sorted(CASES))
def test_nothing_reported_is_none(name):
    assert adapters.usage(name, "no json here\n", Path("/nonexistent")) is None
    assert adapters.trajectory(name, "", Path("/nonexistent")) is None


def test_a_cline_tool_call_takes_its_arguments_from_its_content_start():
    """Cline 3.0.65 gives a tool call's input on its ``content_start`` event only (``content_end`` has the
    output): events as the scripted end-to-end run captured them (tests/test_agents_scripted.py)."""
    import json

    call = "call_0c4678f88737"
    edit = {"path": "/work/twice.py", "new_text": "def double(number):\n    return number * 2\n",
            "old_text": "def double(number):\n    pass\n"}
    lines = [{"type": "agent_event", "event": {"type": "content_start", "contentType": "tool", "toolName": "editor",
                                               "toolCallId": call, "input": edit}},
             {"type": "agent_event", "event": {"type": "content_end", "contentType": "tool", "toolName": "editor",
                                               "toolCallId": call, "output": {"success": True}, "durationMs": 43}}]
    traj = adapters.trajectory("cline", "\n".join(json.dumps(x) for x in lines), Path("/nonexistent"))
    assert traj["steps"][0]["tool_calls"] == [{"tool_call_id": call, "function_name": "editor", "arguments": edit}]
