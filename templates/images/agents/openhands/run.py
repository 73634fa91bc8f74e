"""lab's headless run of OpenHands: its default agent (``openhands.tools.preset.default.get_default_agent`` in
CLI mode: terminal, file editor, task tracker; no browser), the one OpenHands' own app server builds, on one
task in the work tree, with every action allowed (no confirmation), in this container (no Docker sandbox).

    python -E run.py PROMPT_FILE WORK OUT

The model from ``LLM_MODEL`` (litellm's spelling, e.g. ``openai/gpt-4o``), its key ``LLM_API_KEY``, its base
URL ``LLM_BASE_URL`` (optional), ``LLM_NUM_RETRIES`` (optional: how often the SDK retries a rate limit, a timeout, an
unreachable or failing server; its default 5, with waits of 8 to 64 s). Writes ``OUT/openhands-events.json`` (the conversation's events, as the SDK
serialises them) and ``OUT/openhands-metrics.json`` (``{"combined": Metrics, "by_usage": {usage_id: Metrics}, "model", "versions":
{package: version}}``, openhands.sdk.llm.utils.metrics) whether the run ends or fails; a failed run prints
``openhands: run failed: <exception chain>`` on stderr and exits 1. OpenHands 1.x has no headless command of its
own (openhands-ai is its web app server; ``openhands.core.main`` was its 0.x one): this file stands in for it.
"""
import json
import os
import sys
from importlib.metadata import version
from pathlib import Path


def _chain(exc: BaseException) -> str:
    """``Name: message`` of ``exc`` and of each exception it was raised from, joined by `` <- ``."""
    parts = []
    while exc is not None and len(parts) < 5:
        parts.append(f"{type(exc).__name__}: {' '.join(str(exc).split())[:600]}")
        exc = exc.__cause__ or exc.__context__
    return " <- ".join(parts)


def _write(path: Path, value) -> None:
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(value, ensure_ascii=False, default=str), encoding="utf-8")
    tmp.replace(path)


def main(prompt_file: str, work: str, out: str) -> int:
    from openhands.sdk import LLM, Conversation
    from openhands.tools.preset.default import get_default_agent

    out_dir = Path(out)
    llm = LLM(model=os.environ["LLM_MODEL"], api_key=os.environ.get("LLM_API_KEY") or None,
              base_url=os.environ.get("LLM_BASE_URL") or None, usage_id="agent",
              **({"num_retries": int(os.environ["LLM_NUM_RETRIES"])} if os.environ.get("LLM_NUM_RETRIES") else {}))
    # no persistence_dir: the SDK would keep each event as a file of its own in OUT (a trial keeps 20 files of
    # OUT); the events file below holds them all
    conversation = Conversation(agent=get_default_agent(llm, cli_mode=True), workspace=work)
    status = 0
    try:
        conversation.send_message(Path(prompt_file).read_text(encoding="utf-8"))
        conversation.run()
    except Exception as exc:  # the SDK wraps the provider's error (ConversationRunError from litellm's)
        print(f"openhands: run failed: {_chain(exc)}", file=sys.stderr, flush=True)
        status = 1
    finally:
        state = conversation.state
        _write(out_dir / "openhands-events.json", [e.model_dump(mode="json") for e in state.events])
        stats = state.stats
        _write(out_dir / "openhands-metrics.json",
               {"combined": stats.get_combined_metrics().model_dump(mode="json"),
                "by_usage": {k: m.model_dump(mode="json") for k, m in stats.usage_to_metrics.items()},
                "model": llm.model, "execution_status": str(getattr(state, "execution_status", "")),
                "versions": {p: version(p) for p in ("openhands-sdk", "openhands-tools")}})
    return status


if __name__ == "__main__":
    if len(sys.argv) != 4:
        sys.exit("usage: run.py PROMPT_FILE WORK OUT")
    sys.exit(main(*sys.argv[1:]))
