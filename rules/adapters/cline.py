"""Cline CLI (npm ``cline``): ``--json`` prints one JSON message a line (``say``/``ask`` messages of its task,
as in the extension's ClineMessage); each ``api_req_started`` message carries the request's tokens and cost as
JSON in its ``text``; tool uses are ``tool`` messages (JSON in ``text``)."""
from __future__ import annotations

import json
from pathlib import Path

from rules.adapters._jsonl import events, text


def _inner(event: dict) -> dict:
    try:
        value = json.loads(event.get("text") or "")
    except (TypeError, ValueError):
        return {}
    return value if isinstance(value, dict) else {}


def _requests(output: str) -> list[dict]:
    return [_inner(e) for e in events(output) if e.get("say") == "api_req_started"]


def usage(output: str, out_dir: Path | None = None) -> dict | None:
    """Tokens summed over the ``api_req_started`` messages (``tokensIn``, ``tokensOut``, ``cacheReads``);
    cost their summed ``cost`` (USD) when above 0 (Cline prices only models it knows). None when there are
    no such messages with tokens."""
    reqs = [r for r in _requests(output) if "tokensIn" in r or "tokensOut" in r]
    if not reqs:
        return None
    cost = sum(float(r.get("cost") or 0) for r in reqs)
    return {"tokens_sent": sum(int(r.get("tokensIn") or 0) for r in reqs),
            "tokens_received": sum(int(r.get("tokensOut") or 0) for r in reqs),
            "tokens_cached": sum(int(r.get("cacheReads") or 0) for r in reqs),
            "cost": cost if cost > 0 else None}


# Cline reports a failed request in the ``api_req_started`` message's ``streamingFailedMessage`` / an
# ``api_req_failed`` ask or an ``error`` say, with the OpenAI client's text: "401 Incorrect API key ...",
# "429 ...", "Connection error.".
ERRORS = (
    ("auth", r"\b40[13]\b[^0-9]{0,40}(?:[Ii]ncorrect|[Ii]nvalid|[Uu]nauthori[sz]ed|API key|status code)"),
    ("quota", r"insufficient_quota|exceeded your current quota"),
    ("rate_limit", r"\b429\b|[Rr]ate limit"),
    ("connection", r"Connection error|ECONNREFUSED|fetch failed"),
    ("model", r"context_length_exceeded|maximum context length|context window"),
    ("provider", r'"ask":\s*"api_req_failed"'),
)


def trajectory(output: str, out_dir: Path) -> dict | None:
    """``say: text`` messages as agent messages, each ``tool`` message (``ask`` or ``say``) as an agent step
    with one tool call (its JSON's ``tool`` and the rest as arguments), ``api_req_started`` tokens on the step
    before. None when there are none."""
    steps: list[dict] = []
    for n, event in enumerate(events(output)):
        kind = event.get("say") or event.get("ask")
        if kind == "text" and event.get("text"):
            steps.append({"source": "agent", "message": event["text"]})
        elif kind == "tool":
            inner = _inner(event)
            call = f"call-{n}"
            steps.append({"source": "agent", "message": "",
                          "tool_calls": [{"tool_call_id": call, "function_name": inner.pop("tool", "tool"),
                                          "arguments": inner}],
                          "observation": {"results": [{"source_call_id": call, "content": text(inner.get("content", ""))}]}})
        elif kind == "api_req_started" and steps:
            r = _inner(event)
            steps[-1]["metrics"] = {"prompt_tokens": r.get("tokensIn", 0), "completion_tokens": r.get("tokensOut", 0)}
    for i, step in enumerate(steps, 1):
        step["step_id"] = i
    return {"agent": {"name": "cline"}, "steps": steps} if steps else None
