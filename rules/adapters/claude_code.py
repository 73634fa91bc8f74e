"""Claude Code (npm ``@anthropic-ai/claude-code``, run with ``--print --output-format=stream-json --verbose``):
tokens from its stream's ``result`` event, provider errors from its ``api_retry`` events, and the stream's
assistant and user events as a trajectory.

Cost: Claude Code prints ``total_cost_usd`` for every model, priced from its own table; for a model it does not
know (any model behind a gateway, a local one) the figure is a guess at Claude prices, not a cost, so lab records
cost only when the stream's model is a Claude model name (``claude-...``) and unknown otherwise.
"""
from __future__ import annotations

from pathlib import Path

from rules.adapters._jsonl import events, text


def _result(output: str) -> dict | None:
    found = [e for e in events(output) if e.get("type") == "result"]
    return found[-1] if found else None


def _model(output: str) -> str:
    init = [e for e in events(output) if e.get("type") == "system" and e.get("subtype") == "init"]
    return str(init[0].get("model", "")) if init else ""


def usage(output: str, out_dir: Path | None = None) -> dict | None:
    """``{"tokens_sent", "tokens_received", "tokens_cached", "cost"}`` from the ``result`` event's ``usage``
    (sent = input + cache creation + cache read tokens; cached = cache read); cost its ``total_cost_usd`` for a
    ``claude-`` model only (see the module's docstring). None when the stream has no result event."""
    result = _result(output)
    if result is None or not isinstance(result.get("usage"), dict):
        return None
    u = result["usage"]
    cached = int(u.get("cache_read_input_tokens") or 0)
    sent = int(u.get("input_tokens") or 0) + int(u.get("cache_creation_input_tokens") or 0) + cached
    cost = result.get("total_cost_usd") if _model(output).startswith("claude-") else None
    return {"tokens_sent": sent, "tokens_received": int(u.get("output_tokens") or 0), "tokens_cached": cached,
            "cost": cost}


# Claude Code 2.1.332 retries a failed request up to 10 times, printing each as a stream event
# {"type":"system","subtype":"api_retry","error_status":401,"error":"authentication_failed",...}
# (captured against a stub answering 401 / 429 / a closed port); the error words are its own.
ERRORS = (
    ("auth", r'"subtype":"api_retry".*"error":"authentication_failed"|Invalid API key|"error_status":40[13]\b'),
    ("rate_limit", r'"subtype":"api_retry".*"error":"rate_limit"|"error_status":429\b'),
    ("quota", r"Credit balance is too low|usage limit reached"),
    ("connection", r'"subtype":"api_retry".*"error":"unknown".*|Unable to connect to API|ECONNREFUSED'),
    ("unavailable", r'"error_status":(?:500|502|503|529)\b|"error":"(?:overloaded|server_error)"'),
    ("model", r'"error_status":404\b|model: .* not found'),
)


def _steps(output: str) -> list[dict]:
    steps: list[dict] = []
    for event in events(output):
        message = event.get("message") if isinstance(event.get("message"), dict) else {}
        content = message.get("content")
        parts = content if isinstance(content, list) else [{"type": "text", "text": content or ""}]
        if event.get("type") == "assistant":
            step = {"source": "agent", "message": "\n".join(p.get("text", "") for p in parts if p.get("type") == "text"),
                    "tool_calls": [{"tool_call_id": p.get("id"), "function_name": p.get("name"),
                                    "arguments": p.get("input", {})} for p in parts if p.get("type") == "tool_use"]}
            u = message.get("usage") or {}
            step["metrics"] = {"prompt_tokens": u.get("input_tokens"), "completion_tokens": u.get("output_tokens"),
                               "cached_tokens": u.get("cache_read_input_tokens")}
            steps.append(step)
        elif event.get("type") == "user":
            results = [{"source_call_id": p.get("tool_use_id"), "content": text(p.get("content", ""))}
                       for p in parts if p.get("type") == "tool_result"]
            if results and steps and steps[-1]["source"] == "agent":
                steps[-1].setdefault("observation", {"results": []})["results"].extend(results)
            elif not results:
                steps.append({"source": "user", "message": "\n".join(p.get("text", "") for p in parts)})
    return steps


def trajectory(output: str, out_dir: Path) -> dict | None:
    """The stream's ``assistant`` events as agent steps (text, ``tool_use`` parts as tool calls, per-message
    usage as metrics) and the ``tool_result`` parts of the ``user`` events that follow as their observations.
    None when the stream has no such event."""
    steps = _steps(output)
    if not steps:
        return None
    for i, step in enumerate(steps, 1):
        step["step_id"] = i
        if not step.get("tool_calls"):
            step.pop("tool_calls", None)
    found = {"agent": {"name": "claude-code", "model_name": _model(output) or None}, "steps": steps}
    return found
