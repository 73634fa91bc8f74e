"""lab's model gateway (litellm's proxy, rules/services.py) in front of the scripted model fixture
(tests/scripted_model/): the definition without Docker; with Docker, the four API shapes answered from inside
the service's network namespace (no network), the usage counted per try, the budget refused, a 401 passed on."""
from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

import pytest

from rules.agents import AgentError, parse_agent
from rules.config import TEMPLATES
from rules.services import Budget, Service, gateway_service

FIXTURE = Path(__file__).resolve().parent / "scripted_model"
SCRIPTED = {"image": str(FIXTURE / "scripted.Dockerfile.j2"),
            "command": ["python3", "/opt/lab/scripted/server.py", "--port", "{port}", "--script", "{}"], "port": 8080}
AGENT = {"image": "noop", "command": ["true"], "network": "service", "service": SCRIPTED,
         "gateway": {"model": "scripted"}, "limits": {"requests": 3}}


def test_a_gateway_stands_in_front_of_the_service_with_the_budget():
    agent = parse_agent("gw", AGENT)
    gw = agent.gateway
    assert gw.port == 4000 and gw.image == "gateway" and agent.budget.requests == 3
    argv = " ".join(gw.argv())
    assert "--upstream http://127.0.0.1:8080/v1 --model scripted --requests 3" in argv
    assert agent.definition()["budget"] == {"requests": 3, "tokens": 0}
    assert "service_image:" + gw.stamp_name in agent.service_images()


@pytest.mark.parametrize("change, message", [
    ({"gateway": {"model": "m"}, "service": None}, "stands in front of the agent's service"),
    ({"gateway": None}, "counted at lab's gateway"),
    ({"gateway": {"model": "m", "port": 8080}}, "other than the service's"),
    ({"limits": {"requests": -1}}, "whole number"),
])
def test_bad_gateway_tables_name_the_field(change, message):
    raw = {k: v for k, v in {**AGENT, **change}.items() if v is not None}
    if "service" not in raw:
        raw["network"] = "none"
    with pytest.raises(AgentError, match=message):
        parse_agent("gw", raw)


# ---- Docker: the gateway serving the fixture in a service namespace ----

def _start(script: dict, requests: int = 0, reply_tokens: int = 0, stream_usage: bool = True):
    from rules import images, sandbox

    up = Service(image=SCRIPTED["image"], port=8080, stream_usage=stream_usage,
                 command=("python3", "/opt/lab/scripted/server.py", "--port", "{port}", "--script", json.dumps(script)))
    gw = gateway_service(up, "scripted", budget=Budget(requests=requests, reply_tokens=reply_tokens))
    for s in (up, gw):
        images.build_service(s, "debian:bookworm")
    handle = sandbox.start_service(up.tag(), up.argv(), limits=up.limits, ready=up.probe(), labels={"lab.test": "gw"})
    gateway = sandbox.start_service(gw.tag(), gw.argv(), limits=gw.limits, ready=gw.probe(), labels={"lab.test": "gw"},
                                    network=handle.network)
    return handle, gateway, gw


def _client(handle, gw) -> dict:
    out = subprocess.run(["docker", "run", "--rm", "--network", handle.network, "-v", f"{FIXTURE}/client.py:/c.py:ro",
                          gw.tag(), "/opt/lab/gateway/bin/python", "/c.py"], capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    return {line.split(" ", 1)[0]: eval(line.split(" ", 1)[1]) for line in out.stdout.splitlines()}  # noqa: S307


@pytest.mark.docker
@pytest.mark.parametrize("server", ["always", "never"])
def test_the_gateway_answers_every_api_from_the_script_and_counts_the_try(grader_image, server):
    """Every route, in front of a server that sends a stream's usage, and of one that never does (as
    llama-cpp-python's, ``never``), which the gateway asks without streaming (its streamed chat request too)."""
    from rules import sandbox
    from rules.trial import Trial, gateway_usage

    handle, gateway, gw = _start({"mode": "solve", "path": "a.py", "content": "x = 1\n", "stream_usage": server},
                                 stream_usage=server != "never")
    try:
        got = _client(handle, gw)
        assert all(code == 200 for code, _ in got.values()), got
        assert '"name":"write_file"' in got["chat"][1] and "tool_calls" in got["chat-stream"][1]
        assert '"function_call"' in got["responses"][1] and '"tool_use"' in got["anthropic"][1]
        assert '"functionCall"' in got["gemini"][1]
        t = Trial.__new__(Trial)
        object.__setattr__(t, "gateway", gateway)
        counted = gateway_usage(t, 1)
        assert counted["requests"] == 5 and counted["failed"] == 0 and counted["tokens_sent"] > 0
        assert counted["tokens_received"] > 0 and gateway_usage(t, 2)["requests"] == 0
        assert counted["untold"] == 0  # each of the five told by the server, the streamed chat request too
    finally:
        sandbox.stop(gateway)
        sandbox.stop(handle)


@pytest.mark.docker
def test_the_budget_refuses_past_it_and_a_refused_key_is_passed_on(grader_image):
    from rules import sandbox
    from rules.trial import Trial, gateway_problem, gateway_usage

    handle, gateway, gw = _start({"mode": "refuse401"}, requests=2)
    try:
        got = _client(handle, gw)
        assert got["chat"][0] == 401 and got["chat-stream"][0] == 401
        assert all(code >= 400 for code, _ in list(got.values())[2:]) and "budget" in got["responses"][1]
        t = Trial.__new__(Trial)
        object.__setattr__(t, "gateway", gateway)
        counted = gateway_usage(t, 1)
        assert counted["requests"] == 2 and counted["failed"] == 2 and counted["over_budget"] == "requests"

        assert gateway_problem(counted)["kind"] == "auth"
    finally:
        sandbox.stop(gateway)
        sandbox.stop(handle)


def test_the_gateway_gives_a_tool_without_parameters_an_empty_schema():
    """qwen-code declares a tool with no ``parameters`` (the OpenAI API allows it); llama-cpp-python's server
    refused every such request ("Field required"), so every model=local trial of qwen-code was an error."""
    import ast

    source = (TEMPLATES / "images" / "services" / "gateway" / "lab_usage.py").read_text()
    fn = next(n for n in ast.parse(source).body if isinstance(n, ast.FunctionDef) and n.name == "with_parameters")
    space: dict = {}
    exec(compile(ast.Module(body=[fn], type_ignores=[]), "lab_usage.py", "exec"), space)
    data = {"model": "m", "tools": [{"type": "function", "function": {"name": "get_goal"}},
                                    {"type": "function", "function": {"name": "edit", "parameters": {"type": "object",
                                                                                                     "required": ["x"]}}}]}
    out = space["with_parameters"](data)
    assert out["tools"][0]["function"]["parameters"] == {"type": "object", "properties": {}}
    assert out["tools"][1]["function"]["parameters"] == {"type": "object", "required": ["x"]}
    assert space["with_parameters"]({"model": "m"}) == {"model": "m"}


def test_the_gateway_gives_a_message_of_text_parts_its_text_as_one_string():
    """qwen-code sends a message's content as a list of text parts (the OpenAI API allows it); the chat templates
    of llama-cpp-python's server concatenate content as a string ("can only concatenate str (not "list") to
    str"), so every model=local request of qwen-code failed; a cache mark on a part (litellm's translation of
    Claude Code's system prompt) is dropped, the upstream takes none. Parts holding anything else are left alone."""
    import ast

    source = (TEMPLATES / "images" / "services" / "gateway" / "lab_usage.py").read_text()
    fn = next(n for n in ast.parse(source).body if isinstance(n, ast.FunctionDef) and n.name == "with_text_content")
    space: dict = {}
    exec(compile(ast.Module(body=[fn], type_ignores=[]), "lab_usage.py", "exec"), space)
    image = [{"type": "text", "text": "look"}, {"type": "image_url", "image_url": {"url": "data:,"}}]
    marked = [{"type": "text", "text": "x", "cache_control": {"type": "ephemeral"}}]
    parts = [{"type": "text", "text": "be "}, {"type": "text", "text": "brief"}]
    data = {"messages": [{"role": "system", "content": parts},
                         {"role": "user", "content": "plain"}, {"role": "user", "content": image},
                         {"role": "user", "content": marked}, {"role": "assistant", "content": None}]}
    out = space["with_text_content"](data)["messages"]
    assert out[0]["content"] == "be brief" and out[1]["content"] == "plain"
    assert out[2]["content"] == image and out[3]["content"] == "x" and out[4]["content"] is None
    assert space["with_text_content"]({"model": "m"}) == {"model": "m"}


def test_a_streamed_gemini_answer_carries_the_usage_sent_after_its_finish_chunk():
    """An OpenAI-compatible server sends a stream's usage in a chunk after the finish reason; litellm 1.80.8's
    Gemini adapter dropped it (its finish chunk said 0 tokens), so Gemini CLI reported 0 tokens for every trial
    through the gateway. gemini_sse holds the finish chunk back and gives it the stream's usage."""
    import ast
    import asyncio
    from types import SimpleNamespace

    source = (TEMPLATES / "images" / "services" / "gateway" / "lab_usage.py").read_text()
    fns = [n for n in ast.parse(source).body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))
           and n.name in ("gemini_usage", "gemini_sse")]
    space: dict = {"json": json}
    exec(compile(ast.Module(body=fns, type_ignores=[]), "lab_usage.py", "exec"), space)

    def gemini(chunk):  # what the adapter makes of a chunk: a call, the finish reason, or nothing (the usage)
        if chunk.kind == "usage":
            return None
        return {"candidates": [{"content": {"parts": [{"functionCall": {"name": "w"}}] if chunk.kind == "call" else []},
                                "finishReason": "STOP" if chunk.kind == "finish" else None}],
                **({"usageMetadata": {"promptTokenCount": 0}} if chunk.kind == "finish" else {})}

    async def stream(kinds, usage=None):
        for kind in kinds:
            yield SimpleNamespace(kind=kind, usage=usage if kind == "usage" else None)

    async def events(chunks):
        return [json.loads(e.decode().removeprefix("data: ")) async for e in space["gemini_sse"](chunks, gemini)]

    usage = SimpleNamespace(prompt_tokens=40, completion_tokens=7, total_tokens=47)
    got = asyncio.run(events(stream(["call", "finish", "usage"], usage)))
    assert [bool(e["candidates"][0]["finishReason"]) for e in got] == [False, True]
    assert got[1]["usageMetadata"] == {"promptTokenCount": 40, "candidatesTokenCount": 7, "totalTokenCount": 47}
    assert "usageMetadata" not in got[0]
    untold = asyncio.run(events(stream(["call", "finish"])))  # no usage sent: the adapter's own stays
    assert untold[1]["usageMetadata"] == {"promptTokenCount": 0}
    assert space["gemini_usage"]({"prompt_tokens": 0, "completion_tokens": 0}) is None
    assert space["gemini_usage"]({"prompt_tokens": 3, "completion_tokens": 2}) == {
        "promptTokenCount": 3, "candidatesTokenCount": 2, "totalTokenCount": 5}


def test_a_try_whose_every_request_failed_says_why_or_where_the_reason_is():
    """gateway_problem: every admitted request failed → the try's error names the first error the gateway saw, or,
    when none reached it (a failed stream), the trial's service.log; one request answered → no problem."""
    from rules.trial import gateway_problem

    base = {"requests": 5, "failed": 5, "tokens_sent": 0, "tokens_received": 0, "refused": 0, "over_budget": None}
    told = gateway_problem({**base, "errors": ["AuthenticationError: 401 bad key"]})
    assert told == {"kind": "auth",
                    "message": "the gateway saw all 5 request(s) fail: AuthenticationError: 401 bad key"}
    silent = gateway_problem({**base, "errors": []})
    assert silent["kind"] == "provider" and "service.log" in silent["message"]
    assert not silent["message"].endswith(": ")
    assert gateway_problem({**base, "failed": 4, "errors": []}) is None


def test_a_stream_that_failed_silently_takes_the_model_servers_own_reason():
    """qwen-code's requests were streams that llama-cpp-python's server failed after their start: nothing reached
    the gateway, and every model=local trial said only 'no error text reached it'. The server's last error line
    (its ValueError) is the reason, and a request longer than the model's window is kind ``context``."""
    from types import SimpleNamespace

    from rules.trial import error_lines, gateway_problem, server_errors

    base = {"requests": 5, "failed": 5, "tokens_sent": 0, "tokens_received": 0, "refused": 0, "over_budget": None,
            "errors": []}
    said = "ValueError: Requested tokens (9219) exceed context window of 8192"
    found = gateway_problem(base, lambda: said)
    assert found == {"kind": "context", "message": "the gateway saw all 5 request(s) fail; the model server said: "
                                                   f"{said} (the trial's service.log)"}
    assert gateway_problem(base, lambda: "RuntimeError: out of slots")["kind"] == "provider"
    assert gateway_problem({**base, "errors": ["AuthenticationError: 401"]}, lambda: said)["kind"] == "auth"
    log = ('INFO:     Uvicorn running\nTraceback (most recent call last):\n  File "llama.py", line 1273\n'
           f'    raise ValueError(\n{said}\nINFO:     127.0.0.1:44176 - "POST /v1/chat/completions HTTP/1.1" 200 OK\n')
    assert error_lines(log) == [said] and error_lines("INFO: all well\n") == []
    assert server_errors(SimpleNamespace(service=None)) == []
    # the Gemini route passes the gateway's hooks by when its request fails: nothing counted, the server failed
    silent = gateway_problem({**base, "requests": 0, "failed": 0}, lambda: said)
    assert silent["kind"] == "context" and said in silent["message"]
    assert gateway_problem({**base, "requests": 0, "failed": 0}, lambda: "") is None  # the agent asked nothing
    assert gateway_problem({**base, "requests": 0, "failed": 0, "refused": 2}, lambda: said) is None  # its budget


def test_the_gateway_drops_the_body_fields_its_translation_cannot_carry_and_names_them():
    """claude-code's Messages requests carry ``context_management`` and codex's Responses requests
    ``client_metadata``: litellm passes a body field it has no parameter for on as a keyword, and the upstream
    call failed ("unexpected keyword argument"), so every trial of both was an error. The gateway removes such
    fields from the client's own body (never what litellm added), for the translated routes only."""
    import ast

    source = (TEMPLATES / "images" / "services" / "gateway" / "lab_usage.py").read_text()
    fn = next(n for n in ast.parse(source).body if isinstance(n, ast.FunctionDef) and n.name == "without_unknown_fields")
    space: dict = {}
    exec(compile(ast.Module(body=[fn], type_ignores=[]), "lab_usage.py", "exec"), space)
    body = {"model": "m", "messages": [], "max_tokens": 5, "context_management": {"edits": []}, "betas": ["x"]}
    data = {**body, "metadata": {"user_api_key": "lab"}, "litellm_call_id": "1",
            "proxy_server_request": {"body": dict(body)}}
    accepted = {"model", "messages", "max_tokens", "metadata"}
    assert space["without_unknown_fields"](data, accepted) == ["betas", "context_management"]
    assert set(data) == {"model", "messages", "max_tokens", "metadata", "litellm_call_id", "proxy_server_request"}
    assert space["without_unknown_fields"](data, accepted) == []  # already gone: nothing more
    chat = {"model": "m", "stream_options": {}, "proxy_server_request": {"body": {"model": "m", "stream_options": {}}}}
    assert space["without_unknown_fields"](chat, None) == [] and "stream_options" in chat
    assert space["without_unknown_fields"]({"model": "m"}, accepted) == []


def test_the_count_names_the_fields_the_gateway_dropped(monkeypatch):
    from rules import sandbox
    from rules.trial import Trial, gateway_usage

    rows = [{"try": "1", "admitted": True}, {"try": "1", "dropped": ["context_management"], "call": "anthropic_messages"},
            {"try": "1", "ok": True, "prompt_tokens": 3, "completion_tokens": 2},
            {"try": "2", "dropped": ["client_metadata"], "call": "aresponses"}]
    t = Trial.__new__(Trial)
    object.__setattr__(t, "gateway", object())
    monkeypatch.setattr(sandbox, "service_exec", lambda handle, argv: (0, "\n".join(json.dumps(r) for r in rows)))
    assert gateway_usage(t, 1)["dropped"] == ["context_management"]
    assert gateway_usage(t, 2)["dropped"] == ["client_metadata"] and gateway_usage(t, 3)["dropped"] == []


def test_the_gateway_caps_each_reply_at_the_budgets_reply_tokens():
    """A tiny local model given no ``max_tokens`` (most agents send none) runs on to the end of its context at
    llama-cpp-python's server: thousands of tokens a reply, minutes each on a busy core. The budget's
    ``reply_tokens`` reaches the gateway's command, and ``capped`` lowers or sets the upstream's ``max_tokens``."""
    import ast

    agent = parse_agent("gw", {**AGENT, "limits": {"requests": 3, "reply_tokens": 512}})
    assert "--requests 3 --tokens 0 --reply-tokens 512" in " ".join(agent.gateway.argv())
    assert agent.definition()["budget"] == {"requests": 3, "tokens": 0, "reply_tokens": 512}
    assert "--reply-tokens" not in " ".join(parse_agent("gw", AGENT).gateway.argv())  # unset: the command as it was
    source = (TEMPLATES / "images" / "services" / "gateway" / "lab_usage.py").read_text()
    fn = next(n for n in ast.parse(source).body if isinstance(n, ast.FunctionDef) and n.name == "capped")
    space: dict = {}
    exec(compile(ast.Module(body=[fn], type_ignores=[]), "lab_usage.py", "exec"), space)
    capped = space["capped"]
    assert capped({"temperature": 0}, 512) == {"temperature": 0, "max_tokens": 512}
    assert capped({"max_tokens": 32000}, 512) == {"max_tokens": 512}
    assert capped({"max_tokens": 100}, 512) == {"max_tokens": 100}
    assert capped({"max_completion_tokens": 9000}, 512) == {"max_completion_tokens": 512, "max_tokens": 512}
    assert capped({"max_completion_tokens": 300}, 512) == {"max_completion_tokens": 300, "max_tokens": 300}
    assert capped({"max_tokens": 32000}, 0) == {"max_tokens": 32000}


@pytest.mark.docker
def test_every_route_reaches_the_upstream_with_its_reply_capped(grader_image, tmp_path):
    """The budget's reply_tokens reaches the upstream on each of the five requests the client makes (chat,
    streamed chat, Responses, Anthropic Messages asking 100, Gemini, which passes the pre-call hook by), and no
    message reaches it as a list of parts (the Anthropic request's system prompt is parts with a cache mark, as
    Claude Code's: llama-cpp-python's server refused every such request): the scripted model fixture logs the
    max_tokens and the messages of list content each request arrived with."""
    from rules import sandbox

    handle, gateway, gw = _start({"mode": "solve", "path": "a.py", "content": "x = 1\n"}, reply_tokens=64)
    try:
        got = _client(handle, gw)
        assert all(code == 200 for code, _ in got.values()), got
    finally:
        sandbox.stop(gateway)
        sandbox.stop(handle, tmp_path / "service.log")
    log = (tmp_path / "service.log").read_text()
    assert re.findall(r"scripted-model: max_tokens: (\S+)", log) == ["64"] * 5
    assert re.findall(r"scripted-model: messages of parts: (\S+)", log) == ["0"] * 5


def test_the_gateway_waits_for_the_upstream_as_long_as_the_try_may_last():
    """litellm's own upstream timeout (600 s) dropped a local model's first answer on a busy machine (codex's
    8224-token request, still being computed) and the agent sent it again from the start: the try's wall-clock
    timeout ends a try, never a limit of the gateway's."""
    import argparse
    import importlib.util

    spec = importlib.util.spec_from_file_location("gateway_start", TEMPLATES / "images" / "services" / "gateway" / "start.py")
    start = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(start)
    params = start.config(argparse.Namespace(model="m", upstream="http://127.0.0.1:8080/v1"))["model_list"][0]["litellm_params"]
    assert params["timeout"] >= 24 * 3600 and params["stream_timeout"] >= 24 * 3600


def test_a_server_whose_streams_carry_no_usage_is_asked_without_streaming():
    """llama-cpp-python's server (0.3.16) sends no usage in a stream, asked or not: a service table says so with
    ``stream_usage = false``, and the gateway in front of it is started with ``--unstreamed-upstream``; the local
    model that ships says so, so every model=local run's gateway asks it without streaming."""
    from rules.agents import load_agents
    from rules.config import ROOT
    from rules.services import ServiceError, parse_service

    asked = parse_service({**SCRIPTED, "stream_usage": False}, "t [x.service]")
    assert asked.stream_usage is False and parse_service(SCRIPTED, "t").stream_usage is True
    assert asked.definition() == parse_service(SCRIPTED, "t").definition()  # nothing the server does changes
    assert "--unstreamed-upstream" in gateway_service(asked, "scripted").argv()
    assert "--unstreamed-upstream" not in gateway_service(parse_service(SCRIPTED, "t"), "scripted").argv()
    with pytest.raises(ServiceError, match=r"t \[x.service\]: stream_usage must be true or false"):
        parse_service({**SCRIPTED, "stream_usage": "no"}, "t [x.service]")
    codex = load_agents(ROOT / "evals" / "agents.toml")["codex"].resolve({"model": "local"})
    assert codex.service.stream_usage is False and "--unstreamed-upstream" in codex.gateway.argv()


def test_tokens_the_upstream_did_not_tell_are_unknown_never_0(monkeypatch):
    """A request answered without a count of its tokens (a stream without usage) is logged by the gateway with
    null tokens; the try's gateway count is then unknown (None), never 0 or a sum that leaves it out, and its
    notes say so; the agent's own report is compared only with a count the gateway has."""
    import ast

    from rules import sandbox
    from rules.trial import Trial, gateway_usage, usage_notes

    source = (TEMPLATES / "images" / "services" / "gateway" / "lab_usage.py").read_text()
    fn = next(n for n in ast.parse(source).body if isinstance(n, ast.FunctionDef) and n.name == "told")
    space: dict = {}
    exec(compile(ast.Module(body=[fn], type_ignores=[]), "lab_usage.py", "exec"), space)
    assert space["told"]({"prompt_tokens": 0, "completion_tokens": 47}) == (None, None)  # litellm's own estimate
    assert space["told"]({}) == (None, None) and space["told"]({"prompt_tokens": 9, "completion_tokens": 6}) == (9, 6)
    rows = [{"try": "1", "admitted": True}, {"try": "1", "ok": True, "prompt_tokens": 9, "completion_tokens": 6},
            {"try": "1", "admitted": True}, {"try": "1", "ok": True, "prompt_tokens": None, "completion_tokens": None},
            {"try": "2", "admitted": True}, {"try": "2", "ok": True, "prompt_tokens": 4, "completion_tokens": 2}]
    t = Trial.__new__(Trial)
    object.__setattr__(t, "gateway", object())
    monkeypatch.setattr(sandbox, "service_exec", lambda handle, argv: (0, "\n".join(json.dumps(r) for r in rows)))
    one, two = gateway_usage(t, 1), gateway_usage(t, 2)
    assert (one["tokens_sent"], one["tokens_received"], one["untold"], one["requests"]) == (None, None, 1, 2)
    assert (two["tokens_sent"], two["tokens_received"], two["untold"]) == (4, 2, 0)
    agent = parse_agent("gw", AGENT)
    notes = usage_notes({"tokens_sent": 0, "tokens_received": 47}, one, agent)
    assert notes == ["the model server told no tokens for 1 answered request(s): the gateway's count is unknown"]
    assert usage_notes({"tokens_sent": 40, "tokens_received": 2}, two, agent) == [
        "usage disagrees: the agent reports tokens_sent 40, the gateway counted 4"]


def _stream(script: dict, upstream_stream_usage: bool, tmp_path: Path) -> tuple[int, dict | None, list, list, str]:
    """A streamed Responses request (tests/scripted_model/stream_client.py, as Codex makes it) through the gateway
    in front of the scripted model fixture run with ``script``, the service table saying ``stream_usage =
    upstream_stream_usage``: (status, the usage of its response.completed, the function calls streamed, the
    gateway's log rows of try 1, the fixture's output)."""
    from rules import images, sandbox

    up = Service(image=SCRIPTED["image"], port=8080, stream_usage=upstream_stream_usage,
                 command=("python3", "/opt/lab/scripted/server.py", "--port", "{port}", "--script", json.dumps(script)))
    gw = gateway_service(up, "scripted")
    for s in (up, gw):
        images.build_service(s, "debian:bookworm")
    handle = sandbox.start_service(up.tag(), up.argv(), limits=up.limits, ready=up.probe(), labels={"lab.test": "gw"})
    try:
        gateway = sandbox.start_service(gw.tag(), gw.argv(), limits=gw.limits, ready=gw.probe(),
                                        labels={"lab.test": "gw"}, network=handle.network)
        try:
            out = subprocess.run(["docker", "run", "--rm", "--network", handle.network, "-v",
                                  f"{FIXTURE}/stream_client.py:/c.py:ro", gw.tag(), "/opt/lab/gateway/bin/python",
                                  "/c.py"], capture_output=True, text=True, timeout=300)
            assert out.returncode == 0, out.stderr
            code, rows = sandbox.service_exec(gateway, ["cat", "/tmp/lab-gateway/usage.jsonl"])
            assert code == 0, rows
        finally:
            sandbox.stop(gateway)
    finally:
        sandbox.stop(handle, tmp_path / "service.log")
    status, usage, calls = out.stdout.splitlines()[:3]
    return (int(status), json.loads(usage), json.loads(calls),
            [json.loads(r) for r in rows.splitlines() if '"ok"' in r], (tmp_path / "service.log").read_text())


# the fixture's count of the stream client's request: the words of its instructions and input (5 + 4), and of the
# write_file call's arguments, {"path": "a.py", "content": "x = 1\n"} (6)
TOLD = {"input_tokens": 9, "output_tokens": 6, "total_tokens": 15}


@pytest.mark.docker
@pytest.mark.parametrize("server, unstreamed", [("never", True), ("asked", False)])
def test_a_streamed_responses_request_reports_the_servers_own_tokens(grader_image, tmp_path, server, unstreamed):
    """Codex's streamed Responses request through the gateway said 0 tokens sent, to Codex and in the gateway's
    count, in front of llama-cpp-python's server, whose streams carry no usage (the fixture's ``never``): litellm
    1.80.8 made up a stream's usage, 0 for the input on that route. Asked without streaming (the service's
    ``stream_usage = false``), the server's own counts reach response.completed and the gateway's count; a server
    that sends a stream's usage when asked (``asked``, as OpenAI's API) is asked for it (litellm sets
    stream_options.include_usage on that route) and gives the same counts streamed."""
    status, usage, calls, rows, log = _stream({"mode": "solve", "path": "a.py", "content": "x = 1\n",
                                               "stream_usage": server}, not unstreamed, tmp_path)
    assert status == 200 and calls == ["write_file"]  # the function call still reaches Codex as an output item
    assert {k: usage[k] for k in TOLD} == TOLD, usage
    assert [(r["prompt_tokens"], r["completion_tokens"]) for r in rows] == [(9, 6)], rows
    assert ("scripted-model: stream usage asked: true" in log) is not unstreamed  # unstreamed: no stream at all


@pytest.mark.docker
def test_a_stream_without_usage_is_unknown_to_the_agent_and_the_gateway(grader_image, tmp_path):
    """A server whose streams carry no usage, not declared so (``stream_usage`` left true): the gateway cannot
    know the request's tokens. response.completed goes without usage (Codex then reports none, not 0: litellm
    said 0 sent and its own estimate of the reply), and the gateway logs the tokens null: unknown, never 0."""
    status, usage, calls, rows, log = _stream({"mode": "solve", "path": "a.py", "content": "x = 1\n",
                                               "stream_usage": "never"}, True, tmp_path)
    assert status == 200 and calls == ["write_file"] and "scripted-model: stream usage asked: true" in log
    assert usage is None
    assert [(r["ok"], r["prompt_tokens"], r["completion_tokens"]) for r in rows] == [(True, None, None)], rows
