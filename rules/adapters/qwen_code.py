"""Qwen Code (npm ``@qwen-code/qwen-code``): ``--output-format json`` prints the session as JSON messages
(``system``, ``assistant`` and ``user`` messages with content blocks, then a ``result`` with the usage), in the
shape of Claude Code's stream JSON; tokens come from the ``result``, the trajectory from the messages."""
from __future__ import annotations

from pathlib import Path

from rules.adapters._jsonl import events, text


def usage(output: str, out_dir: Path | None = None) -> dict | None:
    """Tokens from the last ``result`` message's ``usage`` (``input_tokens``, ``output_tokens``,
    ``cache_read_input_tokens``). Cost None: Qwen Code's ``total_cost_usd`` is not a provider's price. None
    when there is no ``result`` with usage."""
    results = [e for e in events(output) if e.get("type") == "result" and isinstance(e.get("usage"), dict)]
    if not results:
        return None
    u = results[-1]["usage"]
    return {"tokens_sent": int(u.get("input_tokens") or 0), "tokens_received": int(u.get("output_tokens") or 0),
            "tokens_cached": u.get("cache_read_input_tokens"), "cost": None}


# Qwen Code prints the OpenAI client's error: "[API Error: 401 ...]" / "Error: 401 ..." status lines, and a
# refused connection as "Connection error." (openai-node's APIConnectionError).
ERRORS = (
    ("auth", r"\b401\b.*(?:[Ii]ncorrect|[Ii]nvalid|[Uu]nauthori[sz]ed|API key|status code)|API Error: 40[13]\b"
             r"|\b(?:401|403) status code"),
    ("quota", r"insufficient_quota|exceeded your current quota"),
    ("rate_limit", r"\b429\b|[Rr]ate limit"),
    ("connection", r"Connection error|ECONNREFUSED|fetch failed|Request timed out"),
    ("unavailable", r"API Error: 5\d\d\b|\b5\d\d status code"),
    ("model", r"context_length_exceeded|maximum context length|API Error: 404\b|\b404 status code"),
)


def _blocks(message) -> list:
    content = (message or {}).get("content") if isinstance(message, dict) else None
    return content if isinstance(content, list) else [{"type": "text", "text": content}] if content else []


def trajectory(output: str, out_dir: Path) -> dict | None:
    """Each ``assistant`` message a step (its text, its ``tool_use`` blocks as tool calls); the ``tool_result``
    blocks of the ``user`` message after it are that step's observation. None when there are none."""
    steps: list[dict] = []
    for event in events(output):
        blocks = _blocks(event.get("message"))
        if event.get("type") == "assistant":
            calls = [{"tool_call_id": b.get("id", ""), "function_name": b.get("name", ""),
                      "arguments": b.get("input") or {}} for b in blocks if b.get("type") == "tool_use"]
            step = {"source": "agent", "message": "\n".join(b.get("text", "") for b in blocks if b.get("type") == "text")}
            if calls:
                step["tool_calls"] = calls
            steps.append(step)
        elif event.get("type") == "user" and steps:
            results = [{"source_call_id": b.get("tool_use_id", ""), "content": text(b.get("content", ""))}
                       for b in blocks if b.get("type") == "tool_result"]
            if results:
                steps[-1].setdefault("observation", {"results": []})["results"].extend(results)
    for i, step in enumerate(steps, 1):
        step["step_id"] = i
    return {"agent": {"name": "qwen-code"}, "steps": steps} if steps else None
