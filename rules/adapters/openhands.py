"""OpenHands (its agent from PyPI ``openhands-sdk`` and ``openhands-tools``, run headless by lab's
``templates/images/agents/openhands/run.py``): tokens and cost from the metrics that run writes
(``{out}/openhands-metrics.json``), provider errors from the line it prints when the run fails, and the
conversation's events (``{out}/openhands-events.json``) as steps.

Shapes (openhands-sdk 1.34.0, ``openhands/sdk/llm/utils/metrics.py``, ``openhands/sdk/event/``): the metrics
file is ``{"combined": M, "by_usage": {usage_id: M}, "model", "versions": {package: version}}`` with ``M = {"accumulated_cost", "costs": [...],
"accumulated_token_usage": {"prompt_tokens", "completion_tokens", "cache_read_tokens", ...}, "token_usages":
[{"response_id", "prompt_tokens", ...}]}`` (``combined`` adds the agent's model and its condenser's); the events
file is a list of events with a ``kind``: ``SystemPromptEvent``, ``MessageEvent`` (``source`` user or agent,
``llm_message.content`` parts), ``ActionEvent`` (``tool_call {id, name, arguments}``, ``thought`` parts,
``llm_response_id``), ``ObservationEvent`` (``tool_call_id``, ``observation.content`` parts),
``AgentErrorEvent`` (``tool_call_id``, ``error``) and others."""
from __future__ import annotations

import json
from pathlib import Path

from rules.adapters._jsonl import text

METRICS = "openhands-metrics.json"
EVENTS = "openhands-events.json"


def _read(out_dir: Path, name: str):
    try:
        return json.loads((Path(out_dir) / name).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


def _combined(out_dir: Path) -> dict | None:
    found = _read(out_dir, METRICS)
    combined = found.get("combined") if isinstance(found, dict) else None
    return combined if isinstance(combined, dict) else None


def _cost(metrics: dict) -> float | None:
    """The run's cost in USD, or None: the SDK records a cost per call only for a model litellm has a price for
    (``costs``); with none, ``accumulated_cost`` is 0 and means unknown."""
    cost = metrics.get("accumulated_cost") or 0
    return float(cost) if metrics.get("costs") and cost > 0 else None


def usage(output: str, out_dir: Path) -> dict | None:
    """Tokens summed over every model call of the run (the agent's and its condenser's:
    ``combined.accumulated_token_usage``), cost from ``combined`` (None unless priced). None when the run
    wrote no metrics or made no call that returned."""
    metrics = _combined(out_dir)
    if metrics is None or not metrics.get("token_usages"):
        return None
    tokens = metrics.get("accumulated_token_usage") or {}
    return {"tokens_sent": tokens.get("prompt_tokens") or 0, "tokens_received": tokens.get("completion_tokens") or 0,
            "tokens_cached": tokens.get("cache_read_tokens"), "cost": _cost(metrics)}


# run.py prints one line when the run fails: "openhands: run failed: " and the exception chain, the SDK's own
# type first (openhands/sdk/llm/exceptions/mapping.py maps litellm's), then litellm's (captured against the
# scripted model answering 401: tests/adapters_data/openhands/). The SDK retries rate limits, timeouts and
# unavailable servers itself (LLM.num_retries, 5 by default) before it gives up. A context overflow the SDK's
# condenser could not cure ends the run too: "model", as for the other agents.
_FAILED = r"openhands: run failed: .*"
ERRORS = (
    ("auth", _FAILED + r"(?:LLMAuthenticationError|litellm\.AuthenticationError|litellm\.PermissionDeniedError)"),
    ("quota", _FAILED + r"(?:litellm\.BudgetExceededError|insufficient_quota|exceeded your current quota)"),
    ("rate_limit", _FAILED + r"(?:LLMRateLimitError|litellm\.RateLimitError)"),
    ("connection", _FAILED + r"(?:litellm\.(?:APIConnectionError|Timeout)\b|LLMTimeoutError|Connection error)"),
    ("unavailable", _FAILED + r"(?:LLMServiceUnavailableError|litellm\.(?:InternalServerError|ServiceUnavailableError))"),
    ("model", _FAILED + r"(?:LLMContextWindow\w*Error|LLMBadRequestError|litellm\.(?:NotFoundError|BadRequestError))"),
    ("provider", _FAILED + r"(?:LLMNoResponseError|litellm\.(?:APIError|OpenAIError)\b)"),
)


def _arguments(value) -> dict:
    try:
        found = json.loads(value) if isinstance(value, str) else value
    except ValueError:
        return {"raw": value}
    return found if isinstance(found, dict) else {"raw": found}


def _message(event: dict) -> str:
    kind = event.get("kind")
    if kind == "MessageEvent":
        return text((event.get("llm_message") or {}).get("content") or "")
    if kind == "SystemPromptEvent":
        return text((event.get("system_prompt") or {}).get("text") or event.get("system_prompt") or "")
    if kind == "ActionEvent":
        return text(event.get("thought") or "")
    return text(event.get("error") or event.get("reason") or event.get("detail") or "")


def _step_tokens(metrics: dict | None) -> dict[str, dict]:
    """Each model call's tokens by its response id (the ``llm_response_id`` of the events it produced)."""
    found: dict[str, dict] = {}
    for u in (metrics or {}).get("token_usages") or []:
        if u.get("response_id"):
            found[u["response_id"]] = {k: v for k, v in (("prompt_tokens", u.get("prompt_tokens")),
                                                         ("completion_tokens", u.get("completion_tokens")),
                                                         ("cached_tokens", u.get("cache_read_tokens"))) if v is not None}
    return found


def trajectory(output: str, out_dir: Path) -> dict | None:
    """The events as steps: the system prompt and the user's message; each model reply one agent step (its
    thought, its tool calls: the actions sharing the reply's ``llm_response_id``, with the reply's tokens);
    each observation (or tool error) the result of the call it answers, by ``tool_call_id``; other events
    (errors, state changes) system steps. None when the run wrote no events."""
    events = _read(out_dir, EVENTS)
    if not isinstance(events, list) or not events:
        return None
    tokens = _step_tokens(_combined(out_dir))
    steps: list[dict] = []
    by_reply: dict[str, dict] = {}
    by_call: dict[str, dict] = {}
    for event in (e for e in events if isinstance(e, dict)):
        kind, reply = event.get("kind"), event.get("llm_response_id")
        call_id = event.get("tool_call_id")
        if kind in ("ObservationEvent", "AgentErrorEvent", "UserRejectObservation") and call_id in by_call:
            content = event.get("error") if kind == "AgentErrorEvent" else (event.get("observation") or {}).get("content")
            by_call[call_id].setdefault("observation", {"results": []})["results"].append(
                {"source_call_id": call_id, "content": text(content or event.get("rejection_reason") or "")})
            continue
        if kind == "ActionEvent" and reply and reply in by_reply:  # a further call of the same reply
            step = by_reply[reply]
        else:
            source = {"user": "user", "agent": "agent"}.get(event.get("source"), "system")
            step = {"source": "system" if kind == "SystemPromptEvent" else source, "message": _message(event)}
            steps.append(step)
            if reply and source == "agent":
                by_reply[reply] = step
                if reply in tokens:
                    step["metrics"] = tokens[reply]
        if kind == "ActionEvent":
            call = event.get("tool_call") or {}
            step.setdefault("tool_calls", []).append(
                {"tool_call_id": call.get("id") or call_id or "", "function_name": call.get("name") or event.get("tool_name") or "",
                 "arguments": _arguments(call.get("arguments"))})
            if call_id:
                by_call[call_id] = step
    for i, step in enumerate(steps, 1):
        step["step_id"] = i
    found = _read(out_dir, METRICS) or {}
    agent = {"name": "openhands", **{k: v for k, v in (("version", (found.get("versions") or {}).get("openhands-sdk")),
                                                       ("model_name", found.get("model"))) if v}}
    return {"agent": agent, "steps": steps} if steps else None
