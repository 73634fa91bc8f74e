"""Gemini CLI (npm ``@google/gemini-cli``, run with ``--output-format stream-json``; it speaks the Gemini API):
tokens from the stream's ``result`` event's ``stats``, provider errors from what it prints when a request
fails, and the stream's messages, ``tool_use`` and ``tool_result`` events as a trajectory. Gemini CLI reports
no cost: cost is unknown."""
from __future__ import annotations

from pathlib import Path

from rules.adapters._jsonl import events, text


def usage(output: str, out_dir: Path | None = None) -> dict | None:
    """``stats.input_tokens`` (sent, cached ones included), ``stats.output_tokens``, ``stats.cached`` of the
    last ``result`` event; cost None. None when there is no result event, or it counted no token (a request
    that failed)."""
    results = [e for e in events(output) if e.get("type") == "result" and isinstance(e.get("stats"), dict)]
    if not results:
        return None
    stats = results[-1]["stats"]
    sent, received = int(stats.get("input_tokens") or 0), int(stats.get("output_tokens") or 0)
    if not sent and not received:
        return None
    return {"tokens_sent": sent, "tokens_received": received, "tokens_cached": int(stats.get("cached") or 0),
            "cost": None}


# Gemini CLI 0.61.0 prints "Error when talking to Gemini API ... _ApiError: {...}" then "  status: 401", and a
# result event {"type":"result","status":"error","error":{...,"message":"[API Error: ...]"}}; for 429 "Attempt 1
# failed with status 429. Retrying with backoff..." (captured against a stub answering 401 / 429).
ERRORS = (
    ("auth", r"^\s*status: 40[13]\s*$|API_KEY_INVALID|API key not valid"),
    ("quota", r"RESOURCE_EXHAUSTED.*quota|Quota exceeded"),
    ("rate_limit", r"failed with status 429|^\s*status: 429\s*$"),
    ("connection", r"fetch failed|ECONNREFUSED|ENOTFOUND"),
    ("unavailable", r"^\s*status: 5\d\d\s*$|failed with status 5\d\d"),
    ("model", r"^\s*status: 404\s*$"),
)


def trajectory(output: str, out_dir: Path) -> dict | None:
    """The stream's ``message`` events (assistant deltas joined into one step), each ``tool_use`` as a tool
    call of the current agent step and each ``tool_result`` as its observation. None when there is none."""
    steps: list[dict] = []
    for event in events(output):
        kind = event.get("type")
        if kind == "message":
            source = "agent" if event.get("role") == "assistant" else "user"
            if source == "agent" and steps and steps[-1]["source"] == "agent" and "tool_calls" not in steps[-1]:
                steps[-1]["message"] += text(event.get("content", ""))
            else:
                steps.append({"source": source, "message": text(event.get("content", ""))})
        elif kind == "tool_use":
            if not steps or steps[-1]["source"] != "agent":
                steps.append({"source": "agent", "message": ""})
            steps[-1].setdefault("tool_calls", []).append({"tool_call_id": event.get("tool_id"),
                                                           "function_name": event.get("tool_name"),
                                                           "arguments": event.get("parameters", {})})
        elif kind == "tool_result" and steps:
            steps[-1].setdefault("observation", {"results": []})["results"].append(
                {"source_call_id": event.get("tool_id"), "content": text(event.get("output", event.get("error", "")))})
    if not steps:
        return None
    for i, step in enumerate(steps, 1):
        step["step_id"] = i
    return {"agent": {"name": "gemini-cli"}, "steps": steps}
