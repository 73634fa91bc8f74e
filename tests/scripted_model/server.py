"""lab's scripted model: a test fixture, not a model. An OpenAI-compatible chat completions server (Python's
standard library only) that answers from a script, so that an agent's whole path (its own tool edits the work
tree, grading, usage, transcript) is exercised deterministically and offline.

The script (``--script JSON`` or the ``SCRIPTED_MODEL_SCRIPT`` variable) is ``{"mode", "path", "content"}``, and
optionally ``"old"``, the text ``path`` holds before the agent runs (for a writing tool that replaces text):
  ``solve``         the first reply calls the agent's file-writing tool (``tools.WRITERS``, matched against the
                    request's ``tools``) to write ``content`` to ``path``; once the request carries that tool's
                    result, the reply is the agent's finishing tool (``tools.FINISHERS``), its shell's finishing
                    command (``tools.SHELL_FINISHERS``) or a plain final message.
                    A request without a known writing tool gets the file as text (``path`` on a line, then the
                    content in a fenced block: aider's "whole" format).
  ``refuse401``     every request is answered 401 (a refused key).
  ``never-finish``  every reply calls the writing tool again (a runaway agent's model).
Routes: ``GET /v1/models``, ``POST /v1/chat/completions`` (``stream`` true: server-sent events). ``usage`` counts
words: prompt tokens are the words of the request's messages, completion tokens those of the reply (at least 1).
A stream's usage (its last chunk) is sent as the script's optional ``"stream_usage"`` says:
  ``always``  (the default) in every stream;
  ``asked``   only when the request asks for it (``stream_options.include_usage``), as OpenAI's API does;
  ``never``   in no stream, asked or not, as llama-cpp-python's server 0.3.16 (lab's local model): its streamed
              chunks carry no ``usage`` and it reads no ``stream_options`` (llama_cpp/llama_chat_format.py and
              server/types.py of that release); only a request without ``stream`` gets its usage.
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import time
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from tools import FINISHERS, READ_FIRST, READERS, SHELL_FINISHERS, WRITERS  # noqa: E402

MODES = ("solve", "refuse401", "never-finish")
STREAM_USAGE = ("always", "asked", "never")


def words(value) -> int:
    """The number of whitespace-separated words in ``value`` (any JSON value; lists and dicts are walked)."""
    if isinstance(value, str):
        return len(value.split())
    if isinstance(value, list):
        return sum(words(v) for v in value)
    if isinstance(value, dict):
        return sum(words(v) for v in value.values())
    return 0


def tool_names(request: dict) -> list[str]:
    """The names of the tools a chat request offers, in its order."""
    return [(t.get("function") or {}).get("name") or t.get("name", "") for t in request.get("tools") or []]


def results(request: dict) -> int:
    """How many tool results the conversation holds (how many of the fixture's tool calls were run)."""
    return sum(m.get("role") in ("tool", "function") for m in request.get("messages", []))


def reader_call(request: dict, name: str, path: str) -> dict:
    """A call of the reading tool ``name`` on ``path``: its first required argument (from the tool's schema in
    the request) given the absolute path."""
    tool = next(t for t in request.get("tools") or [] if ((t.get("function") or {}).get("name") or t.get("name")) == name)
    schema = (tool.get("function") or tool).get("parameters") or {}
    argument = (schema.get("required") or list(schema.get("properties") or {}) or ["path"])[0]
    return call(name, {argument: READERS[name](path)})


def call(name: str, arguments: dict) -> dict:
    """An assistant message calling tool ``name``."""
    return {"role": "assistant", "content": None, "tool_calls": [{
        "id": f"call_{uuid.uuid4().hex[:12]}", "type": "function",
        "function": {"name": name, "arguments": json.dumps(arguments)}}]}


def reply(script: dict, request: dict) -> dict:
    """The assistant message the script gives for ``request``."""
    names = tool_names(request)
    writer = next((n for n in names if n in WRITERS), None)
    reader = next((n for n in names if n in READERS), None) if writer in READ_FIRST else None
    finisher = next((n for n in names if n in FINISHERS), None)
    done = results(request)
    if reader and done == 0 and script["mode"] != "never-finish":  # an agent that overwrites only what it read
        return reader_call(request, reader, script["path"])
    if writer and (script["mode"] == "never-finish" or done < (2 if reader else 1)):
        return call(writer, WRITERS[writer](script["path"], script["content"], script.get("old")))
    if writer and finisher:
        return call(finisher, FINISHERS[finisher]())
    if writer in SHELL_FINISHERS:
        return call(writer, SHELL_FINISHERS[writer]())
    if writer:
        return {"role": "assistant", "content": "Done: the file is written."}
    return {"role": "assistant", "content": f"{script['path']}\n```\n{script['content']}```\n"}


def completion(script: dict, request: dict) -> dict:
    """The whole chat completion object for ``request``."""
    message = reply(script, request)
    prompt = max(1, words([m.get("content") for m in request.get("messages", [])]))
    done = max(1, words(message.get("content")) + words([c["function"]["arguments"] for c in message.get("tool_calls", [])]))
    return {"id": f"chatcmpl-{uuid.uuid4().hex[:12]}", "object": "chat.completion", "created": int(time.time()),
            "model": request.get("model", "scripted"),
            "choices": [{"index": 0, "message": message,
                         "finish_reason": "tool_calls" if message.get("tool_calls") else "stop"}],
            "usage": {"prompt_tokens": prompt, "completion_tokens": done, "total_tokens": prompt + done}}


def chunks(full: dict, usage: bool = True) -> list[dict]:
    """The stream of ``chat.completion.chunk`` objects that adds up to ``full``: the message, the finish
    reason, then, when ``usage``, the usage (as OpenAI sends it with ``stream_options.include_usage``)."""
    base = {k: full[k] for k in ("id", "created", "model")} | {"object": "chat.completion.chunk"}
    message, choice = full["choices"][0]["message"], full["choices"][0]
    delta = {"role": "assistant", "content": message.get("content") or ""}
    if message.get("tool_calls"):
        delta["tool_calls"] = [{"index": i, **c} for i, c in enumerate(message["tool_calls"])]
    return [base | {"choices": [{"index": 0, "delta": delta, "finish_reason": None}]},
            base | {"choices": [{"index": 0, "delta": {}, "finish_reason": choice["finish_reason"]}]},
            *([base | {"choices": [], "usage": full["usage"]}] if usage else [])]


class Handler(BaseHTTPRequestHandler):
    """Answers the fixture's routes from ``self.server.script``."""

    protocol_version = "HTTP/1.1"

    def send(self, code: int, body: dict) -> None:
        data = json.dumps(body).encode()
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self):  # noqa: N802 (the standard library's name)
        if self.path.rstrip("/").endswith("/models"):
            return self.send(200, {"object": "list", "data": [{"id": "scripted", "object": "model", "owned_by": "lab"}]})
        return self.send(404, {"error": {"message": f"no route {self.path}", "type": "not_found"}})

    def do_POST(self):  # noqa: N802
        length = int(self.headers.get("Content-Length") or 0)
        request = json.loads(self.rfile.read(length) or b"{}")
        if self.server.script["mode"] == "refuse401":
            return self.send(401, {"error": {"message": "Incorrect API key provided (the scripted model refuses "
                                             "every key)", "type": "invalid_request_error", "code": "invalid_api_key"}})
        if not self.path.rstrip("/").endswith("/chat/completions"):
            return self.send(404, {"error": {"message": f"no route {self.path}", "type": "not_found"}})
        # the tools an agent offers, in its service.log: how a new agent's writing and finishing tools are found
        sys.stderr.write(f"scripted-model: tools offered: {json.dumps(tool_names(request))}\n")
        # the reply cap the request arrived with (lab's gateway sets one on a model=local run)
        sys.stderr.write(f"scripted-model: max_tokens: {json.dumps(request.get('max_tokens'))}\n")
        parts = sum(1 for m in request.get("messages") or []
                    if isinstance(m, dict) and isinstance(m.get("content"), list))
        sys.stderr.write(f"scripted-model: messages of parts: {parts}\n")
        full = completion(self.server.script, request)
        if not request.get("stream"):
            return self.send(200, full)
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Connection", "close")
        self.end_headers()
        asked = bool((request.get("stream_options") or {}).get("include_usage"))
        sys.stderr.write(f"scripted-model: stream usage asked: {json.dumps(asked)}\n")
        when = self.server.script["stream_usage"]
        for chunk in chunks(full, usage=when == "always" or (when == "asked" and asked)):
            self.wfile.write(f"data: {json.dumps(chunk)}\n\n".encode())
        self.wfile.write(b"data: [DONE]\n\n")
        self.close_connection = True

    def log_message(self, fmt, *args):
        sys.stderr.write(f"scripted-model: {self.command} {self.path} {fmt % args}\n")


def parse_script(text: str) -> dict:
    """The script from its JSON text. Raises SystemExit with a one-line message when it is not valid."""
    try:
        script = json.loads(text)
    except ValueError as exc:
        raise SystemExit(f"scripted model: the script is not JSON ({exc}); give --script '{{\"mode\": \"solve\", ...}}'")
    script = {"mode": "solve", "path": "solution.txt", "content": "", "stream_usage": "always", **script}
    if script["mode"] not in MODES:
        raise SystemExit(f"scripted model: mode {script['mode']!r} is not one of {', '.join(MODES)}")
    if script["stream_usage"] not in STREAM_USAGE:
        raise SystemExit(f"scripted model: stream_usage {script['stream_usage']!r} is not one of {', '.join(STREAM_USAGE)}")
    return script


def main(argv: list[str] | None = None) -> None:
    """Serve on 127.0.0.1 (``--port``, default 8080) until killed."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, default=8080)
    parser.add_argument("--script", default=os.environ.get("SCRIPTED_MODEL_SCRIPT", "{}"))
    args = parser.parse_args(argv)
    server = ThreadingHTTPServer(("127.0.0.1", args.port), Handler)
    server.script = parse_script(args.script)
    print(f"scripted model (a test fixture) on 127.0.0.1:{args.port}, mode {server.script['mode']}", flush=True)
    server.serve_forever()


if __name__ == "__main__":
    main()
