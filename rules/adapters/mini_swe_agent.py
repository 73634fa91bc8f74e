"""mini-swe-agent (PyPI ``mini-swe-agent``): tokens and cost from its trajectory (``--output
{out}/trajectory.json``, format ``mini-swe-agent-1.1``), provider errors from the litellm exceptions it prints,
and the trajectory's messages as steps (its bash tool calls, or in the text-based config its bash blocks)."""
from __future__ import annotations

import json
from pathlib import Path

TRAJECTORY = "trajectory.json"


def _read(out_dir: Path) -> dict | None:
    try:
        found = json.loads((Path(out_dir) / TRAJECTORY).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return found if isinstance(found, dict) else None


def _usage_of(message: dict) -> dict:
    """The litellm response's ``usage`` kept in a message's ``extra.response`` ({} when none): an assistant
    message's, or a format error's (a reply holding no command, or more than one, is kept only in the user
    message that answers it: ``extra.interrupt_type`` "FormatError", mini-swe-agent 2.4.6's
    agents/default.py)."""
    usage = _response(message).get("usage") or {}
    return usage if isinstance(usage, dict) else {}


def _response(message: dict) -> dict:
    response = (message.get("extra") or {}).get("response") if isinstance(message, dict) else None
    return response if isinstance(response, dict) else {}


def _responses(found: dict) -> list[dict]:
    """The messages that keep a model response, each response once (by its id): the assistant messages and
    the format errors that answered a reply the agent could not use."""
    seen, out = set(), []
    for message in found.get("messages", []):
        response = _response(message)
        if not response or (response.get("id") and response["id"] in seen):
            continue
        seen.add(response.get("id"))
        out.append(message)
    return out


def _cached(usage: dict) -> int | None:
    details = usage.get("prompt_tokens_details") or {}
    return details.get("cached_tokens") if isinstance(details, dict) else None


def usage(output: str, out_dir: Path) -> dict | None:
    """Tokens summed over the trajectory's model responses (``messages[].extra.response.usage``: prompt,
    completion, cached prompt tokens; a format error's reply counted too: ``_usage_of``), cost
    ``info.model_stats.instance_cost`` (USD). mini-swe-agent records
    0.0 for a model litellm has no price for (``MSWEA_COST_TRACKING=ignore_errors``) and refuses to run an
    unpriced model otherwise, so 0 means unknown: None. None when there is no trajectory or no call was made
    (minisweagent/models/litellm_model.py, run/mini.py in mini-swe-agent 2.4.6)."""
    found = _read(out_dir)
    if found is None:
        return None
    usages = [u for u in map(_usage_of, _responses(found)) if u]
    if not usages:
        return None
    cached = [c for c in map(_cached, usages) if c is not None]
    cost = ((found.get("info") or {}).get("model_stats") or {}).get("instance_cost") or 0
    return {"tokens_sent": sum(u.get("prompt_tokens") or 0 for u in usages),
            "tokens_received": sum(u.get("completion_tokens") or 0 for u in usages),
            "tokens_cached": sum(cached) if cached else None, "cost": float(cost) if cost > 0 else None}


# mini-swe-agent 2.4.6 retries litellm's exceptions (MSWEA_MODEL_RETRY_STOP_AFTER_ATTEMPT, 10 by default), then
# exits 1 printing the exception as ``<Name>: litellm.<Name>: ...`` (captured against a stub answering 401
# and 429, and with no server: tests/adapters_data/mini_swe_agent/). ContextWindowExceededError is not listed:
# the task was too big for the model, the agent had its chance.
ERRORS = (
    ("auth", r"litellm\.AuthenticationError|litellm\.PermissionDeniedError"),
    ("rate_limit", r"litellm\.RateLimitError"),
    ("quota", r"litellm\.BudgetExceededError"),
    ("connection", r"litellm\.(?:APIConnectionError|Timeout)\b|OpenAIException - Connection error"),
    ("unavailable", r"litellm\.(?:InternalServerError|ServiceUnavailableError|BadGatewayError)"),
    ("model", r"litellm\.(?:NotFoundError|BadRequestError|UnsupportedParamsError)"),
    ("provider", r"litellm\.(?:APIError|OpenAIError|APIResponseValidationError)\b"),
)

_SOURCES = {"system": "system", "user": "user", "assistant": "agent", "exit": "system"}


def _tool_calls(message: dict) -> list[dict]:
    calls = [{"tool_call_id": c.get("id") or "", "function_name": (c.get("function") or {}).get("name") or "",
              "arguments": _arguments((c.get("function") or {}).get("arguments"))}
             for c in message.get("tool_calls") or []]
    if calls:
        return calls
    # the text-based config: the commands it parsed out of the reply's bash blocks
    return [{"tool_call_id": a.get("tool_call_id") or f"action-{i}", "function_name": "bash",
             "arguments": {"command": a.get("command", "")}}
            for i, a in enumerate((message.get("extra") or {}).get("actions") or [], 1)]


def _arguments(text) -> dict:
    try:
        found = json.loads(text) if isinstance(text, str) else text
    except ValueError:
        return {"raw": text}
    return found if isinstance(found, dict) else {"raw": found}


def _metrics(message: dict) -> dict:
    usage = _usage_of(message)
    return {k: v for k, v in (("prompt_tokens", usage.get("prompt_tokens")),
                              ("completion_tokens", usage.get("completion_tokens")),
                              ("cached_tokens", _cached(usage))) if v is not None}


def _step(message: dict) -> dict:
    step = {"source": _SOURCES.get(message.get("role"), "system"), "message": message.get("content") or ""}
    if message.get("role") == "assistant":
        step["tool_calls"] = _tool_calls(message)
        step["metrics"] = _metrics(message)
    return step


def _rejected_reply(message: dict) -> dict | None:
    """The agent step of a reply kept only in the format error that answered it (its text, no tool call, its
    tokens), or None for any other message."""
    if message.get("role") == "assistant" or (message.get("extra") or {}).get("interrupt_type") != "FormatError":
        return None
    choices = _response(message).get("choices") or [{}]
    reply = (choices[0] if isinstance(choices[0], dict) else {}).get("message") or {}
    return {"source": "agent", "message": reply.get("content") or "", "tool_calls": [], "metrics": _metrics(message)}


def trajectory(output: str, out_dir: Path) -> dict | None:
    """The trajectory's messages as steps: an assistant message is an agent step with its tool calls (bash
    commands) and tokens; a reply kept only in the format error that answered it, an agent step with no tool
    call before that error's user step; the tool messages that answer it become its observation; the exit message (the
    exit status, or the exception that ended the run) a system step. None when there is no trajectory."""
    found = _read(out_dir)
    if found is None:
        return None
    steps: list[dict] = []
    for message in found.get("messages", []):
        if message.get("role") == "tool" and steps and steps[-1]["source"] == "agent":
            results = steps[-1].setdefault("observation", {"results": []})["results"]
            results.append({"source_call_id": message.get("tool_call_id") or "", "content": message.get("content") or ""})
        else:
            rejected = _rejected_reply(message)
            steps += ([rejected] if rejected else []) + [_step(message)]
    for i, step in enumerate(steps, 1):
        step["step_id"] = i
    info = found.get("info") or {}
    cost = (info.get("model_stats") or {}).get("instance_cost") or 0
    final = {"total_steps": len(steps), **({"total_cost_usd": cost} if cost > 0 else {})}
    agent = {"name": "mini-swe-agent", **({"version": info["mini_version"]} if info.get("mini_version") else {})}
    return {"agent": agent,
            "steps": steps, "final_metrics": final} if steps else None
