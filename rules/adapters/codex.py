"""Codex CLI (npm ``@openai/codex``, run as ``codex exec --json``; it speaks the OpenAI Responses API only):
tokens from its ``turn.completed`` events, provider errors from its ``error`` events, and its ``item.completed``
events (messages, commands, file changes, tool calls) as a trajectory. Codex reports no cost: cost is unknown."""
from __future__ import annotations

from pathlib import Path

from rules.adapters._jsonl import events


def usage(output: str, out_dir: Path | None = None) -> dict | None:
    """Tokens summed over the ``turn.completed`` events' ``usage`` (``input_tokens`` includes
    ``cached_input_tokens``, which is the cached count); cost None. None when no turn completed."""
    turns = [e["usage"] for e in events(output) if e.get("type") == "turn.completed" and isinstance(e.get("usage"), dict)]
    if not turns:
        return None
    total = {key: sum(int(u.get(key) or 0) for u in turns)
             for key in ("input_tokens", "cached_input_tokens", "output_tokens")}
    return {"tokens_sent": total["input_tokens"], "tokens_received": total["output_tokens"],
            "tokens_cached": total["cached_input_tokens"], "cost": None}


# Codex 0.171.0 prints {"type":"error","message":"Reconnecting... 1/5 (unexpected status 401 Unauthorized: ...)"}
# and finally {"type":"turn.failed",...}; for 429 "exceeded retry limit, last status: 429 Too Many Requests"; with
# no server "Reconnecting... waiting for network (Connection failed: error sending request)" (it keeps waiting:
# the try's timeout ends it). Captured against a stub answering 401 / 429 / a closed port.
ERRORS = (
    ("auth", r"unexpected status 40[13] (?:Unauthorized|Forbidden)"),
    ("quota", r"insufficient_quota|Quota exceeded|usage limit"),
    ("rate_limit", r"status:? 429 Too Many Requests"),
    ("connection", r"Connection failed: error sending request|waiting for network|stream disconnected before completion"),
    ("unavailable", r"status:? 5\d\d "),
    ("model", r"unexpected status 404 Not Found"),
)

_TOOLS = {  # item type -> (function name, its arguments, its observation)
    "command_execution": ("shell", lambda i: {"command": i.get("command")}, lambda i: i.get("aggregated_output", "")),
    "file_change": ("apply_patch", lambda i: {"changes": i.get("changes", [])}, lambda i: i.get("status", "")),
    "mcp_tool_call": ("mcp", lambda i: {"server": i.get("server"), "tool": i.get("tool"),
                                        "arguments": i.get("arguments")}, lambda i: str(i.get("result", ""))),
    "web_search": ("web_search", lambda i: {"query": i.get("query")}, lambda i: ""),
}


def _step(item: dict) -> dict | None:
    kind = item.get("type")
    if kind in ("agent_message", "reasoning"):
        key = "message" if kind == "agent_message" else "reasoning_content"
        return {"source": "agent", key: item.get("text", "")}
    if kind in _TOOLS:
        name, arguments, observation = _TOOLS[kind]
        call = item.get("id")
        return {"source": "agent", "message": "", "tool_calls": [{"tool_call_id": call, "function_name": name,
                                                               "arguments": arguments(item)}],
                "observation": {"results": [{"source_call_id": call, "content": observation(item)}]}}
    return None


def trajectory(output: str, out_dir: Path) -> dict | None:
    """One step per ``item.completed`` event: an agent message or reasoning, or a tool call (a command with
    its output, a file change, an MCP call) with its observation. None when there is none."""
    items = [e["item"] for e in events(output) if e.get("type") == "item.completed" and isinstance(e.get("item"), dict)]
    steps = [s for s in map(_step, items) if s]
    if not steps:
        return None
    for i, step in enumerate(steps, 1):
        step["step_id"] = i
    found = {"agent": {"name": "codex"}, "steps": steps}
    return found
