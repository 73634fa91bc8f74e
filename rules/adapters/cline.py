"""Cline CLI 3 (npm ``cline``, on its ``@cline/sdk``): ``--json`` prints one JSON object a line:
``agent_event`` lines (``iteration_start``, ``content_start``/``content_end`` with the text, ``usage`` with the
request's and running tokens and cost, ``error``), then a ``run_result`` with ``aggregateUsage`` and
``finishReason``."""
from __future__ import annotations

from pathlib import Path

from rules.adapters._jsonl import events, text


def _agent_events(output: str) -> list[dict]:
    return [e["event"] for e in events(output) if e.get("type") == "agent_event" and isinstance(e.get("event"), dict)]


def usage(output: str, out_dir: Path | None = None) -> dict | None:
    """Tokens from the last ``run_result``'s ``aggregateUsage`` (``inputTokens``, ``outputTokens``,
    ``cacheReadTokens``, ``totalCost``), else summed over the ``usage`` agent events (a run cut off by its
    timeout has no ``run_result``). Cost only when above 0: Cline reports 0 for a model it has no price for.
    None when there is neither."""
    results = [e.get("aggregateUsage") or e.get("usage") for e in events(output) if e.get("type") == "run_result"]
    rows = [r for r in results if isinstance(r, dict)][-1:] or [e for e in _agent_events(output) if e.get("type") == "usage"]
    if not rows:
        return None
    cost = sum(float(r.get("totalCost") or 0) for r in rows) if results else float(rows[-1].get("totalCost") or 0)
    return {"tokens_sent": sum(int(r.get("inputTokens") or 0) for r in rows),
            "tokens_received": sum(int(r.get("outputTokens") or 0) for r in rows),
            "tokens_cached": sum(int(r.get("cacheReadTokens") or 0) for r in rows),
            "cost": cost if cost > 0 else None}


# Cline 3.0.65 prints a refused request as an ``error`` agent event and a final ``{"type":"error","message":...}``
# line carrying the provider's message only (no status code): "Incorrect API key provided: ...".
ERRORS = (
    ("auth", r"Incorrect API key|Invalid API key|[Uu]nauthori[sz]ed|\b401\b.*(?:key|auth)"),
    ("quota", r"insufficient_quota|exceeded your current quota"),
    ("rate_limit", r"[Rr]ate limit|\b429\b"),
    ("connection", r"Connection error|ECONNREFUSED|Unable to connect|fetch failed"),
    ("model", r"context_length_exceeded|maximum context length|context window"),
)


def trajectory(output: str, out_dir: Path) -> dict | None:
    """Each iteration's text (``content_end`` of type text) an agent step; tool content (``content_end`` of
    another type with a ``toolName``) a tool call with its ``output``, and its arguments from the ``input`` of
    the ``content_start`` of the same ``toolCallId`` (Cline 3.0.65 gives the input there only); each ``usage``
    event's tokens on the step before it. None when there are no such events."""
    steps: list[dict] = []
    inputs: dict[str, dict] = {}  # toolCallId -> the input its content_start gave
    for event in _agent_events(output):
        kind = event.get("type")
        if kind == "content_start" and event.get("toolName") and isinstance(event.get("input"), dict):
            inputs[str(event.get("toolCallId"))] = event["input"]
        elif kind == "content_end" and event.get("contentType") == "text" and event.get("text"):
            steps.append({"source": "agent", "message": event["text"]})
        elif kind == "content_end" and event.get("toolName"):
            call = str(event.get("toolCallId") or f"call-{len(steps) + 1}")
            steps.append({"source": "agent", "message": "",
                          "tool_calls": [{"tool_call_id": call, "function_name": event["toolName"],
                                          "arguments": event.get("input") or inputs.get(call) or {}}],
                          "observation": {"results": [{"source_call_id": call, "content": text(event.get("output", ""))}]}})
        elif kind == "usage" and steps:
            steps[-1]["metrics"] = {"prompt_tokens": event.get("inputTokens", 0),
                                    "completion_tokens": event.get("outputTokens", 0)}
    for i, step in enumerate(steps, 1):
        step["step_id"] = i
    return {"agent": {"name": "cline"}, "steps": steps} if steps else None
