"""OpenHands' adapter (rules/adapters/openhands.py) on its real outputs (tests/adapters_data/openhands/): from
lab's openhands image (openhands-sdk 1.34.0 run by templates/images/agents/openhands/run.py, network none)
against the scripted model fixture in its container, which called its file_editor and finish tools (ok) or
answered 401; and its console, from the same packages and run.py on the host's Python 3.13, when a stub answered
429 or no server was there (refused), with LLM_NUM_RETRIES=0."""
from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from rules import adapters

DATA = Path(__file__).resolve().parent / "adapters_data" / "openhands"


def out_with(tmp_path: Path, case: str) -> Path:
    for name in ("events", "metrics"):
        shutil.copy(DATA / f"{name}-{case}.json", tmp_path / f"openhands-{name}.json")
    return tmp_path


def test_usage_sums_every_call_and_an_unpriced_model_has_no_cost(tmp_path):
    metrics = json.loads((DATA / "metrics-ok.json").read_text())["combined"]
    calls = metrics["token_usages"]
    found = adapters.usage("openhands", "", out_with(tmp_path, "ok"))
    assert len(calls) == 2 and found == {"tokens_sent": sum(c["prompt_tokens"] for c in calls),
                                         "tokens_received": sum(c["completion_tokens"] for c in calls),
                                         "tokens_cached": 0, "cost": None}
    assert found["tokens_sent"] > 0 and metrics["accumulated_cost"] == 0.0, "0 recorded: unknown, not free"


def test_a_priced_model_keeps_its_cost(tmp_path):
    data = json.loads((DATA / "metrics-ok.json").read_text())
    data["combined"]["accumulated_cost"] = 0.0123
    data["combined"]["costs"] = [{"model": "openai/gpt-4o", "cost": 0.0123, "timestamp": 0}]
    out_with(tmp_path, "ok")
    (tmp_path / "openhands-metrics.json").write_text(json.dumps(data))
    assert adapters.usage("openhands", "", tmp_path)["cost"] == 0.0123


def test_no_call_or_no_metrics_is_no_usage(tmp_path):
    assert adapters.usage("openhands", "", tmp_path) is None
    assert adapters.usage("openhands", "", out_with(tmp_path, "401")) is None


@pytest.mark.parametrize("capture, kind", [("console-401.txt", "auth"), ("console-429.txt", "rate_limit"),
                                           ("console-refused.txt", "connection")])
def test_captured_provider_errors(capture, kind):
    found = adapters.provider_error("openhands", (DATA / capture).read_text())
    assert found and found["kind"] == kind, found


def test_a_line_of_the_agents_own_output_is_no_provider_error():
    """Only run.py's failure line counts: a command's output naming litellm's error is the agent's work."""
    assert adapters.provider_error("openhands", "$ grep -r litellm.AuthenticationError src/\n") is None


def test_trajectory_has_the_file_editor_call_its_result_and_each_replys_tokens(tmp_path):
    found = adapters.trajectory("openhands", "", out_with(tmp_path, "ok"))
    assert found["schema_version"] == "ATIF-v1.7"
    assert found["agent"] == {"name": "openhands", "version": "1.34.0", "model_name": "openai/scripted"}
    assert [s["source"] for s in found["steps"]] == ["system", "user", "agent", "agent"]
    edit, finish = found["steps"][2], found["steps"][3]
    call = edit["tool_calls"][0]
    assert call["function_name"] == "file_editor" and call["arguments"]["path"] == "/work/twice.py"
    assert call["arguments"]["command"] == "str_replace" and "number * 2" in call["arguments"]["new_str"]
    assert edit["observation"]["results"][0]["source_call_id"] == call["tool_call_id"]
    assert "edited" in edit["observation"]["results"][0]["content"], edit["observation"]
    assert edit["metrics"]["prompt_tokens"] > 0 and finish["tool_calls"][0]["function_name"] == "finish"
    assert found["final_metrics"]["total_prompt_tokens"] == sum(s["metrics"]["prompt_tokens"] for s in found["steps"][2:])


def test_a_refused_run_ends_in_a_system_step_saying_why(tmp_path):
    steps = adapters.trajectory("openhands", "", out_with(tmp_path, "401"))["steps"]
    assert steps[-1]["source"] == "system" and "AuthenticationError" in steps[-1]["message"], steps[-1]
