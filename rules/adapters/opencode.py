"""OpenCode (npm ``opencode-ai``): ``opencode run --format json`` prints one JSON event a line (``step_start``,
``text``, ``tool_use``, ``step_finish``, ``error``); tokens and cost come from the ``step_finish`` events, the
trajectory from the text and tool events, provider errors from ``error`` events."""
from __future__ import annotations

from pathlib import Path

from rules.adapters._jsonl import events, text


def _part(event: dict) -> dict:
    part = event.get("part")
    return part if isinstance(part, dict) else {}


def usage(output: str, out_dir: Path | None = None) -> dict | None:
    """Tokens summed over the ``step_finish`` events' ``part.tokens`` (``input``, ``output`` with
    ``reasoning``, ``cache.read``); cost their summed ``part.cost`` (USD) when above 0: OpenCode prices only
    the models it knows and reports 0 for the rest. None when there is no ``step_finish`` event."""
    steps = [_part(e) for e in events(output) if e.get("type") == "step_finish"]
    if not steps:
        return None
    tokens = [s.get("tokens") or {} for s in steps]
    cost = sum(float(s.get("cost") or 0) for s in steps)
    return {"tokens_sent": sum(int(t.get("input") or 0) for t in tokens),
            "tokens_received": sum(int(t.get("output") or 0) + int(t.get("reasoning") or 0) for t in tokens),
            "tokens_cached": sum(int((t.get("cache") or {}).get("read") or 0) for t in tokens),
            "cost": cost if cost > 0 else None}


# OpenCode prints a failed model call as an ``error`` event whose ``error.data.message`` carries the provider's
# reply and ``statusCode`` (the AI SDK's APICallError), and a server it cannot reach as "Cannot connect to API"
# / "Unable to connect" (bun's fetch).
ERRORS = (
    ("auth", r'"statusCode":\s*40[13]\b|Incorrect API key|invalid.api.key|"name":\s*"ProviderAuthError"'),
    ("quota", r"insufficient_quota|exceeded your current quota"),
    ("rate_limit", r'"statusCode":\s*429\b|[Rr]ate limit'),
    ("connection", r"Cannot connect to API|Unable to connect|ECONNREFUSED|ConnectionRefused|fetch failed"),
    ("unavailable", r'"statusCode":\s*5\d\d\b'),
    ("model", r'"statusCode":\s*404\b|context_length_exceeded|maximum context length'),
    ("provider", r'"type":\s*"error"'),
)


def trajectory(output: str, out_dir: Path) -> dict | None:
    """The ``text`` events as agent messages and each ``tool_use`` event as an agent step with its tool call
    (``part.tool``, ``part.callID``, ``part.state.input``) and observation (``part.state.output`` or
    ``error``); each ``step_finish``'s tokens go to the step before it. None when there are no such events."""
    steps: list[dict] = []
    for event in events(output):
        part, kind = _part(event), event.get("type")
        if kind == "text" and part.get("text"):
            steps.append({"source": "agent", "message": part["text"]})
        elif kind == "tool_use":
            state = part.get("state") or {}
            call = part.get("callID") or part.get("id") or ""
            steps.append({"source": "agent", "message": "",
                          "tool_calls": [{"tool_call_id": call, "function_name": part.get("tool", ""),
                                          "arguments": state.get("input") or {}}],
                          "observation": {"results": [{"source_call_id": call,
                                                       "content": text(state.get("output", state.get("error", "")))}]}})
        elif kind == "step_finish" and steps:
            tokens = part.get("tokens") or {}
            steps[-1]["metrics"] = {"prompt_tokens": tokens.get("input", 0), "completion_tokens": tokens.get("output", 0),
                                    "cached_tokens": (tokens.get("cache") or {}).get("read", 0)}
    for i, step in enumerate(steps, 1):
        step["step_id"] = i
    return {"agent": {"name": "opencode"}, "steps": steps} if steps else None
