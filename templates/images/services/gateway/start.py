"""Start lab's model gateway: write litellm's proxy configuration from the command line, then run the proxy.

  start.py --port 4000 --upstream http://127.0.0.1:8080/v1 --model NAME [--requests N] [--tokens N]
           [--reply-tokens N] [--unstreamed-upstream]

Every model name an agent asks for is served by the upstream's model ``NAME`` (through litellm's
``custom_openai`` provider, which also turns Responses, Anthropic Messages and Gemini requests into chat
completions). The proxy listens on 127.0.0.1 only; its key is ``KEY``. ``--requests`` / ``--tokens``: the
per-try budget (0: none) that ``lab_usage`` enforces; ``--reply-tokens``: the most tokens one reply may have (0: no
cap); ``--unstreamed-upstream``: ask the upstream without streaming (its streams carry no usage) and stream its
answers on; ``STATE`` holds the try number lab writes and the usage log.
"""
import argparse
import json
import os
from pathlib import Path

HERE = Path(__file__).resolve().parent
KEY = "sk-lab-gateway"
STATE = Path("/tmp/lab-gateway")
# seconds the gateway waits for the upstream's answer: litellm's own default (600 s) dropped a local model's first
# answer, still being computed on a busy machine (codex's 8224-token request, 2026-12-07); the try's wall-clock
# timeout, lab's, is what ends a try, never a limit of the gateway's
UPSTREAM_TIMEOUT = 24 * 3600


def config(args) -> dict:
    """litellm's configuration (JSON is YAML) for ``args``."""
    return {
        "model_list": [{"model_name": "*", "litellm_params": {
            "model": f"custom_openai/{args.model}", "api_base": args.upstream, "api_key": "lab-upstream",
            "timeout": UPSTREAM_TIMEOUT, "stream_timeout": UPSTREAM_TIMEOUT}}],
        "litellm_settings": {"callbacks": "lab_usage.handler", "drop_params": True,
                             "use_chat_completions_url_for_anthropic_messages": True},
        "general_settings": {"master_key": KEY},
    }


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--port", type=int, default=4000)
    parser.add_argument("--upstream", required=True)
    parser.add_argument("--model", required=True)
    parser.add_argument("--requests", type=int, default=0)
    parser.add_argument("--tokens", type=int, default=0)
    parser.add_argument("--reply-tokens", type=int, default=0)
    parser.add_argument("--unstreamed-upstream", action="store_true")
    args = parser.parse_args()
    STATE.mkdir(parents=True, exist_ok=True)
    (STATE / "try").write_text("1")
    (STATE / "budget.json").write_text(json.dumps({"requests": args.requests, "tokens": args.tokens,
                                                     "reply_tokens": args.reply_tokens}))
    (STATE / "upstream.json").write_text(json.dumps({"unstreamed": args.unstreamed_upstream}))
    (HERE / "config.yaml").write_text(json.dumps(config(args), indent=1))
    os.environ.update({"LITELLM_LOCAL_MODEL_COST_MAP": "True", "LITELLM_USE_CHAT_COMPLETIONS_URL_FOR_ANTHROPIC_MESSAGES": "true",
                       "LITELLM_TELEMETRY": "False", "NO_DOCS": "True", "DISABLE_SCHEMA_UPDATE": "True"})
    litellm = str(Path(os.sys.executable).parent / "litellm")
    os.execv(litellm, [litellm, "--config", str(HERE / "config.yaml"), "--host", "127.0.0.1", "--port", str(args.port),
                       "--num_workers", "1"])


if __name__ == "__main__":
    main()
