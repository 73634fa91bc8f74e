"""mini-swe-agent's adapter (rules/adapters/mini_swe_agent.py) on its real outputs, captured from mini-swe-agent
2.4.6 in lab's image (COLUMNS=200, as its table sets, so that no error line is wrapped) against a throwaway stub on 127.0.0.1 that called its bash tool (ok), answered 401 or 429,
or was not there (refused): tests/adapters_data/mini_swe_agent/."""
from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from rules import adapters
from rules.agents import load_agents

DATA = Path(__file__).resolve().parent / "adapters_data" / "mini_swe_agent"
ROOT = Path(__file__).resolve().parents[1]


def out_with(tmp_path: Path, name: str) -> Path:
    shutil.copy(DATA / name, tmp_path / "trajectory.json")
    return tmp_path


def test_usage_sums_the_responses_tokens_and_an_unpriced_model_has_no_cost(tmp_path):
    found = adapters.usage("mini-swe-agent", "", out_with(tmp_path, "trajectory-ok.json"))
    assert found == {"tokens_sent": 101 + 102, "tokens_received": 40, "tokens_cached": None, "cost": None}


def test_a_priced_model_keeps_its_cost_and_cached_tokens(tmp_path):
    data = json.loads((DATA / "trajectory-ok.json").read_text())
    data["info"]["model_stats"]["instance_cost"] = 0.0123
    data["messages"][2]["extra"]["response"]["usage"]["prompt_tokens_details"] = {"cached_tokens": 64}
    (tmp_path / "trajectory.json").write_text(json.dumps(data))
    found = adapters.usage("mini-swe-agent", "", tmp_path)
    assert found["cost"] == 0.0123 and found["tokens_cached"] == 64


def test_no_call_or_no_trajectory_is_no_usage(tmp_path):
    assert adapters.usage("mini-swe-agent", "", tmp_path) is None
    assert adapters.usage("mini-swe-agent", "", out_with(tmp_path, "trajectory-401.json")) is None


@pytest.mark.parametrize("case, kind", [("401", "auth"), ("429", "rate_limit"), ("refused", "connection"),
                                        ("ok", None)])
def test_provider_errors_from_its_real_console(case, kind):
    found = adapters.provider_error("mini-swe-agent", (DATA / f"console-{case}.txt").read_text())
    assert (found or {}).get("kind") == kind


def test_trajectory_has_its_bash_tool_calls_with_their_observations_and_tokens(tmp_path):
    found = adapters.trajectory("mini-swe-agent", "", out_with(tmp_path, "trajectory-ok.json"))
    assert found["schema_version"] == adapters.TRAJECTORY_SCHEMA
    assert found["agent"] == {"name": "mini-swe-agent", "version": "2.4.6"}
    agent = [s for s in found["steps"] if s["source"] == "agent"]
    first = agent[0]
    assert first["tool_calls"][0]["function_name"] == "bash" and "calc.py" in first["tool_calls"][0]["arguments"]["command"]
    assert first["observation"]["results"][0]["source_call_id"] == first["tool_calls"][0]["tool_call_id"]
    assert "return a + b" in first["observation"]["results"][0]["content"]
    assert first["metrics"] == {"prompt_tokens": 101, "completion_tokens": 20}
    assert [s["step_id"] for s in found["steps"]] == list(range(1, len(found["steps"]) + 1))
    assert "total_cost_usd" not in found["final_metrics"]


def test_the_exception_that_ended_a_run_is_its_last_step(tmp_path):
    found = adapters.trajectory("mini-swe-agent", "", out_with(tmp_path, "trajectory-401.json"))
    assert "AuthenticationError" in found["steps"][-1]["message"] and found["steps"][-1]["source"] == "system"


def test_its_table_uses_the_adapter_and_pins_its_version():
    agent = load_agents(ROOT / "evals" / "agents.toml")["mini-swe-agent"]
    assert agent.usage == agent.errors == "mini-swe-agent"
    assert dict(agent.build)["mini_swe_agent_version"]
    text = agent.dockerfile("lab/grader:latest", "lab/base:bookworm")
    assert "COPY --from=mini-swe-agent-prefix /opt/lab/agents/mini-swe-agent" in text
    assert "mini-swe-agent==" + dict(agent.build)["mini_swe_agent_version"] in text


def _format_errors() -> dict:
    """A text-based run whose every reply held no bash block, in mini-swe-agent 2.4.6's shape (as a model=local run
    of SmolLM2 wrote it): no assistant message; each reply and its usage kept in the user message of its format
    error (``extra.interrupt_type`` "FormatError"), then the exit message."""
    def rejected(n: int, sent: int, received: int) -> dict:
        return {"role": "user", "content": "Format error: ... found 0 actions.", "extra": {
            "interrupt_type": "FormatError", "cost": 0.0, "response": {
                "id": f"chatcmpl-{n}", "model": "custom_openai/smollm2-135m", "object": "chat.completion",
                "choices": [{"finish_reason": "stop", "index": 0, "message": {
                    "content": f"reply {n} without a command", "role": "assistant", "tool_calls": None}}],
                "usage": {"completion_tokens": received, "prompt_tokens": sent, "total_tokens": sent + received}}}}
    return {"info": {"model_stats": {"instance_cost": 0.0, "api_calls": 2}, "mini_version": "2.4.6"},
            "trajectory_format": "mini-swe-agent-1.1",
            "messages": [{"role": "system", "content": "You are a helpful assistant"},
                         {"role": "user", "content": "Please solve this issue"},
                         rejected(1, 1200, 300), rejected(2, 1600, 34),
                         {"role": "exit", "content": "", "extra": {"exit_status": "RepeatedFormatError",
                                                                  "submission": ""}}]}


def test_replies_kept_only_in_format_errors_count_their_tokens_and_are_agent_steps(tmp_path):
    """A model that never wrote one bash block (SmolLM2 on model=local) made every call of the run a format
    error: the adapter read only assistant messages and reported no tokens (the gateway counted 3771 sent)."""
    (tmp_path / "trajectory.json").write_text(json.dumps(_format_errors()))
    assert adapters.usage("mini-swe-agent", "", tmp_path) == {
        "tokens_sent": 2800, "tokens_received": 334, "tokens_cached": None, "cost": None}
    steps = adapters.trajectory("mini-swe-agent", "", tmp_path)["steps"]
    assert [s["source"] for s in steps] == ["system", "user", "agent", "user", "agent", "user", "system"]
    assert steps[2]["message"] == "reply 1 without a command" and steps[2]["tool_calls"] == []
    assert steps[4]["metrics"] == {"prompt_tokens": 1600, "completion_tokens": 34}
    assert steps[3]["message"].startswith("Format error")
