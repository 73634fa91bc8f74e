"""aider (PyPI ``aider-chat``): tokens and cost from its console lines, provider errors from the litellm
exceptions it prints, and its chat history (``--chat-history-file {out}/chat.md``) as a trajectory."""
from __future__ import annotations

import re
from pathlib import Path

_TOKENS = re.compile(r"^Tokens: (.*)$", re.M)
_COUNT = re.compile(r"([\d.]+)([kKmM]?) (sent|cache write|cache hit|received)")
_SESSION_COST = re.compile(r"Cost: \$([\d.]+) message, \$([\d.]+) session")
_SCALE = {"": 1, "k": 1_000, "K": 1_000, "m": 1_000_000, "M": 1_000_000}


def usage(output: str, out_dir: Path | None = None) -> dict | None:
    """Tokens and cost from aider's output lines ``Tokens: 2.3k sent, 1.2k cache hit, 120 received. Cost:
    $0.01 message, $0.02 session.``: tokens summed over the lines (aider rounds them: 2.3k → 2300), cost the
    last session total (USD; aider prints one only for a model it has a price for). None when aider printed
    no such line (aider/coders/base_coder.py, show_usage_report, in aider-chat 0.86.2)."""
    lines = _TOKENS.findall(output)
    if not lines:
        return None
    counts = {"sent": 0, "received": 0, "cache hit": 0}
    cached = False
    for line in lines:
        for number, unit, kind in _COUNT.findall(line):
            if kind in counts:
                counts[kind] += round(float(number) * _SCALE[unit])
                cached = cached or kind == "cache hit"
    costs = _SESSION_COST.findall(output)
    return {"tokens_sent": counts["sent"], "tokens_received": counts["received"],
            "tokens_cached": counts["cache hit"] if cached else None,
            "cost": float(costs[-1][1]) if costs else None}


# aider 0.86.2 prints the litellm exception as ``litellm.<Name>: ...`` (aider/coders/base_coder.py,
# send_message: str(err)) and, for some, a friendly line from aider/exceptions.py (EXCEPTIONS); it then gives up
# (after its own retries of the retryable ones, ~1 min) and still exits 0. ``ContextWindowExceededError`` is not
# listed: the task was too big for the model, the agent had its chance.
ERRORS = (
    ("auth", r"litellm\.AuthenticationError|The API provider is not able to authenticate you"),
    ("rate_limit", r"litellm\.(?:RateLimitError|RouterRateLimitError)|The API provider has rate limited you"),
    ("quota", r"litellm\.BudgetExceededError|Insufficient credits with the API provider"),
    # no server at all shows as "litellm.InternalServerError: ... OpenAIException - Connection error."
    ("connection", r"litellm\.(?:APIConnectionError|Timeout)\b|Exception - Connection error|Exception - Connection\s*$"
                   r"|The API provider timed out without returning"),
    ("unavailable", r"litellm\.(?:InternalServerError|ServiceUnavailableError|BadGatewayError)"
                    r"|The API provider's servers are down or overloaded"),
    ("model", r"litellm\.(?:NotFoundError|BadRequestError|UnsupportedParamsError)"),
    ("provider", r"litellm\.(?:APIError|OpenAIError|APIResponseValidationError|AzureOpenAIError)\b"),
)


def trajectory(output: str, out_dir: Path) -> dict | None:
    """aider's chat history ``chat.md`` as steps: a run of ``#### `` lines is the user's message, the text up
    to the next such run the agent's reply; aider's own notes (``> `` lines) go to the step as an observation.
    aider edits files through its replies, so edit blocks stay in the reply's message: none is split out as
    a tool call. None when there is no chat history."""
    try:
        text = (Path(out_dir) / "chat.md").read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None
    blocks: list[list] = []  # [source, lines]
    for line in text.splitlines():
        source = ("user" if line.startswith("#### ") else "system" if line.startswith(("> ", "# aider chat"))
                  else "agent")
        if source == "agent" and not line.strip() and (not blocks or blocks[-1][0] != "agent"):
            continue
        if not blocks or blocks[-1][0] != source:
            blocks.append([source, []])
        blocks[-1][1].append(line[5:] if source == "user" else line[2:] if line.startswith("> ") else line)
    steps = [{"step_id": i, "source": source, "message": "\n".join(lines).strip()}
             for i, (source, lines) in enumerate(((s, l) for s, l in blocks if "".join(l).strip()), 1)]
    return {"agent": {"name": "aider"}, "steps": steps} if steps else None
