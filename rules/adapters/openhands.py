# UNVERIFIED: written from OpenHands' event format (openhands/events/serialization), not from captured output;
# no agent table uses it yet (templates/images/agents/openhands.Dockerfile.j2 says why).
"""OpenHands (PyPI ``openhands-ai``, headless ``python -m openhands.core.main``): tokens and cost from the
``llm_metrics`` its events carry (``SAVE_TRAJECTORY_PATH={out}/trajectory.json``: a JSON list of events),
provider errors from the litellm exceptions it logs, and its events as steps (actions with their tool calls,
observations answering them by ``cause``)."""
from __future__ import annotations

import json
from pathlib import Path

TRAJECTORY = "trajectory.json"


def _events(out_dir: Path) -> list[dict] | None:
    try:
        found = json.loads((Path(out_dir) / TRAJECTORY).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return [e for e in found if isinstance(e, dict)] if isinstance(found, list) else None


def _last_metrics(events: list[dict]) -> dict | None:
    """The last event's ``llm_metrics`` (OpenHands accumulates them over the run)."""
    for event in reversed(events):
        if isinstance(event.get("llm_metrics"), dict):
            return event["llm_metrics"]
    return None


def usage(output: str, out_dir: Path) -> dict | None:
    """Tokens and cost from the run's accumulated metrics (the last ``llm_metrics`` in its events):
    ``accumulated_token_usage`` prompt, completion and cache-read tokens, ``accumulated_cost`` (USD; litellm's
    price, 0 for a model it has no price for, so 0 is unknown: None). None when there are no events or no
    metrics (openhands/llm/metrics.py)."""
    events = _events(out_dir)
    metrics = _last_metrics(events) if events else None
    if metrics is None:
        return None
    tokens = metrics.get("accumulated_token_usage") or {}
    cost = metrics.get("accumulated_cost") or 0
    return {"tokens_sent": tokens.get("prompt_tokens") or 0, "tokens_received": tokens.get("completion_tokens") or 0,
            "tokens_cached": tokens.get("cache_read_tokens"), "cost": float(cost) if cost > 0 else None}


# OpenHands logs litellm's exceptions by name (``litellm.AuthenticationError: ...``) and ends the run in its
# error state; the patterns are litellm's exception names, as for aider and mini-swe-agent.
ERRORS = (
    ("auth", r"litellm\.AuthenticationError|litellm\.PermissionDeniedError"),
    ("rate_limit", r"litellm\.RateLimitError"),
    ("quota", r"litellm\.BudgetExceededError"),
    ("connection", r"litellm\.(?:APIConnectionError|Timeout)\b|Exception - Connection error"),
    ("unavailable", r"litellm\.(?:InternalServerError|ServiceUnavailableError|BadGatewayError)"),
    ("model", r"litellm\.(?:NotFoundError|BadRequestError|UnsupportedParamsError)"),
    ("provider", r"litellm\.(?:APIError|OpenAIError|APIResponseValidationError)\b"),
)


def _tool_call(event: dict) -> list[dict]:
    meta = event.get("tool_call_metadata") or {}
    if not meta.get("function_name"):
        return []
    return [{"tool_call_id": meta.get("tool_call_id") or str(event.get("id")),
             "function_name": meta["function_name"], "arguments": event.get("args") or {}}]


def _step(event: dict) -> dict:
    source = {"user": "user", "agent": "agent"}.get(event.get("source"), "system")
    step = {"source": source, "message": event.get("message") or event.get("content") or ""}
    if event.get("action") and source == "agent":
        step["tool_calls"] = _tool_call(event)
    return step


def trajectory(output: str, out_dir: Path) -> dict | None:
    """The events as steps: an action is a step (an agent's with its tool call: the function and its
    arguments); an observation whose ``cause`` is an action's id becomes that step's observation. None when
    there are no events."""
    events = _events(out_dir)
    if not events:
        return None
    steps, by_id = [], {}
    for event in events:
        cause = by_id.get(event.get("cause"))
        if event.get("observation") and cause is not None:
            call = (cause.get("tool_calls") or [{}])[0].get("tool_call_id") or str(event.get("cause"))
            cause.setdefault("observation", {"results": []})["results"].append(
                {"source_call_id": call, "content": event.get("content") or event.get("message") or ""})
            continue
        step = _step(event)
        steps.append(step)
        by_id[event.get("id")] = step
    for i, step in enumerate(steps, 1):
        step["step_id"] = i
    metrics = _last_metrics(events) or {}
    cost = metrics.get("accumulated_cost") or 0
    return {"agent": {"name": "openhands"}, "steps": steps,
            "final_metrics": {"total_steps": len(steps), **({"total_cost_usd": cost} if cost > 0 else {})}}
