"""lab's usage counter in the gateway (a litellm callback): one JSON line per model request in
``/tmp/lab-gateway/usage.jsonl`` (``{"try", "ok", "prompt_tokens", "completion_tokens", "call", "error"}``, or
``{"try", "refused": "requests" | "tokens"}``, or ``{"try", "admitted": true}`` for each request let through:
litellm may log one failure per retry of a request, or ``{"try", "dropped": [field, ...], "call"}`` for a request
whose body held fields the gateway's translation does not take, which were removed), and the per-try budget of ``budget.json``: a request past it is
refused with status 400 before it reaches the upstream; its ``reply_tokens`` caps each reply
(``capped``). The try number is what lab last wrote to ``try``. A request the upstream told no tokens for
has ``prompt_tokens`` and ``completion_tokens`` null: unknown, never 0. When ``upstream.json`` says
``{"unstreamed": true}`` (an upstream whose streams carry no usage), every streamed request is asked of the upstream
without streaming and its answer streamed on (``_unstreamed_upstream``).
"""
import inspect
import json
import time
from pathlib import Path

from fastapi import HTTPException
from litellm.integrations.custom_logger import CustomLogger

STATE = Path("/tmp/lab-gateway")


def current_try() -> str:
    """The try lab says is running ("1" until it says otherwise)."""
    try:
        return (STATE / "try").read_text().strip() or "1"
    except OSError:
        return "1"


def append(record: dict) -> None:
    """Add one line to the usage log."""
    with open(STATE / "usage.jsonl", "a", encoding="utf-8") as f:
        f.write(json.dumps({"time": round(time.time(), 3), **record}) + "\n")


def with_parameters(data: dict) -> dict:
    """``data`` (a request's body) with ``parameters`` (an empty object schema) on every function tool that has
    none: the OpenAI API lets a tool leave it out (qwen-code's get_goal does), llama-cpp-python's server refuses
    the whole request for it ("Field required"). Nothing else is changed."""
    for tool in data.get("tools") or []:
        fn = tool.get("function") if isinstance(tool, dict) else None
        if isinstance(fn, dict) and "parameters" not in fn:
            fn["parameters"] = {"type": "object", "properties": {}}
    return data


def with_text_content(data: dict) -> dict:
    """``data`` (a request's body) with each message whose ``content`` is a list of text parts
    (``[{"type": "text", "text": "..."}]``, a part holding nothing else but a cache mark, ``cache_control``)
    given that text as one string, the parts joined as they stand: the OpenAI API takes either form (qwen-code
    sends parts; litellm's translation of Claude Code's Anthropic Messages gives the system message parts with
    cache marks), the chat templates of llama-cpp-python's server concatenate ``content`` as a string and fail on
    a list ("can only concatenate str (not "list") to str"), and it refuses a system message that is no string
    ("Input should be a valid string"). The upstream is an OpenAI-compatible server, which takes no cache mark. A
    list holding anything else (an image) is left as it is."""
    for message in data.get("messages") or []:
        parts = message.get("content") if isinstance(message, dict) else None
        if isinstance(parts, list) and parts and all(
                isinstance(p, dict) and {"type", "text"} <= set(p) <= {"type", "text", "cache_control"}
                and p["type"] == "text" and isinstance(p["text"], str) for p in parts):
            message["content"] = "".join(p["text"] for p in parts)
    return data


# The litellm function each translated route's request body is passed to as keyword arguments (litellm 1.80.8):
# a body field that is not one of its named parameters reaches the upstream call as an unknown keyword and
# fails it ("unexpected keyword argument 'context_management'" from claude-code's Messages requests,
# 'client_metadata' from codex's Responses requests). Chat completions are passed on as they are (litellm's
# drop_params handles theirs).
TRANSLATED = {"anthropic_messages": "anthropic_messages", "aresponses": "aresponses"}
_ACCEPTED: dict[str, frozenset | None] = {}


def accepted_fields(call_type: str) -> frozenset | None:
    """The request fields litellm's function for route ``call_type`` names as parameters (its ``**kwargs``
    left out); None for a route the gateway passes on untouched, or when the function cannot be read."""
    if call_type not in TRANSLATED:
        return None
    if call_type not in _ACCEPTED:
        try:
            import litellm

            params = inspect.signature(getattr(litellm, TRANSLATED[call_type])).parameters.values()
            _ACCEPTED[call_type] = frozenset(p.name for p in params if p.kind != p.VAR_KEYWORD)
        except (AttributeError, TypeError, ValueError):
            _ACCEPTED[call_type] = None
    return _ACCEPTED[call_type]


def without_unknown_fields(data: dict, accepted) -> list[str]:
    """Remove from ``data`` (a request as litellm's proxy holds it before the call) every field of the client's
    own body (``data["proxy_server_request"]["body"]``: what litellm added itself is never touched) that is not in
    ``accepted`` (a set of field names; None: nothing is removed); returns the removed names, sorted. These are
    provider-specific fields (Anthropic's ``context_management``, OpenAI's ``client_metadata``) that the
    translation to the upstream's chat completions cannot carry."""
    if accepted is None:
        return []
    body = (data.get("proxy_server_request") or {}).get("body")
    if not isinstance(body, dict):
        return []
    dropped = sorted(k for k in body if k not in accepted and k in data)
    for key in dropped:
        del data[key]
    return dropped


def _one_stream_argument() -> None:
    """Make litellm 1.80.8's streamed Gemini route work through the chat completions adapter: the proxy's
    ``:streamGenerateContent`` endpoint sets ``stream`` in the request, and ``agenerate_content_stream`` passes
    its keywords on beside its own ``stream=True`` ("got multiple values for keyword argument 'stream'": every
    gemini-cli request failed). The Router takes the function from ``litellm.google_genai`` when it is made,
    after this module (a callback of the configuration) is loaded, so the wrapper given there is the one it
    calls; it drops the request's ``stream``, which that function sets anyway."""
    import functools

    import litellm.google_genai as genai

    original = genai.agenerate_content_stream
    if getattr(original, "lab_one_stream", False):
        return

    @functools.wraps(original)
    async def agenerate_content_stream(*args, **kwargs):
        kwargs.pop("stream", None)
        return await original(*args, **kwargs)

    agenerate_content_stream.lab_one_stream = True
    genai.agenerate_content_stream = agenerate_content_stream


def gemini_usage(usage) -> dict | None:
    """Gemini's ``usageMetadata`` (``promptTokenCount``, ``candidatesTokenCount``, ``totalTokenCount``) for an
    OpenAI usage (an object with ``prompt_tokens``/``completion_tokens``/``total_tokens``, or a dict of them);
    None when there is none, or it counts no token."""
    if usage is None:
        return None
    get = usage.get if isinstance(usage, dict) else lambda key: getattr(usage, key, None)
    sent, received = int(get("prompt_tokens") or 0), int(get("completion_tokens") or 0)
    if not sent and not received:
        return None
    return {"promptTokenCount": sent, "candidatesTokenCount": received,
            "totalTokenCount": int(get("total_tokens") or 0) or sent + received}


async def gemini_sse(chunks, translate):
    """The server-sent events (bytes) of a streamed Gemini answer from the chat completion ``chunks`` (an async
    iterator of litellm's stream chunks; a dict is sent as it is), each turned into a Gemini chunk (a dict, or
    None: nothing to send) by ``translate``. The chunk carrying the finish reason is held back until the stream
    ends and sent with the stream's usage as its ``usageMetadata``: an OpenAI-compatible server sends the usage
    in a chunk after the finish reason (``stream_options.include_usage``), which litellm 1.80.8's Gemini adapter
    drops, so Gemini CLI counted 0 tokens for every request through the gateway."""
    held, usage = None, None

    def event(chunk: dict) -> bytes:
        return f"data: {json.dumps(chunk)}\n\n".encode()

    async for chunk in chunks:
        if isinstance(chunk, dict):
            yield event(chunk)
            continue
        usage = getattr(chunk, "usage", None) or usage
        out = translate(chunk)
        if not isinstance(out, dict):
            continue
        if held is not None:
            yield event(held)
            held = None
        if (out.get("candidates") or [{}])[0].get("finishReason"):
            held = out
        else:
            yield event(out)
    if held is not None:
        held["usageMetadata"] = gemini_usage(usage) or held.get("usageMetadata") or {
            "promptTokenCount": 0, "candidatesTokenCount": 0, "totalTokenCount": 0}
        yield event(held)


def _usage_in_gemini_stream() -> None:
    """Make litellm 1.80.8's streamed Gemini route (Gemini CLI's) carry the tokens: ask the upstream for the
    stream's usage (``stream_options.include_usage``, which the adapter never sets) and send it on the finish
    chunk (``gemini_sse``). Without this, every streamed answer said 0 tokens (the gateway's own count, from
    litellm's log of the call, was right)."""
    from litellm.google_genai.adapters import handler, transformation

    completion = handler.GenerateContentToCompletionHandler
    prepare = completion._prepare_completion_kwargs
    if getattr(prepare, "lab_usage", False):
        return

    def _prepare_completion_kwargs(*args, **kwargs):
        prepared = prepare(*args, **kwargs)
        if prepared.get("stream"):
            prepared.setdefault("stream_options", {"include_usage": True})
        return prepared

    _prepare_completion_kwargs.lab_usage = True
    completion._prepare_completion_kwargs = staticmethod(_prepare_completion_kwargs)

    def translate_completion_output_params_streaming(self, completion_stream):
        state = transformation.GoogleGenAIStreamWrapper(completion_stream=completion_stream)  # partial tool calls
        return gemini_sse(completion_stream,
                          lambda chunk: self.translate_streaming_completion_to_generate_content(chunk, state))

    transformation.GoogleGenAIAdapter.translate_completion_output_params_streaming = \
        translate_completion_output_params_streaming


def _provider_errors_on_the_gemini_route() -> None:
    """Pass the upstream's refusal on with its status on litellm 1.80.8's Gemini routes, which answered every
    failure with status 500, so a refused key (401) reached Gemini CLI as a server error, which it retried for
    minutes and reported as one. Two layers lose the status: the adapter wraps every error of its chat completion
    call in a ValueError ("Error calling litellm.acompletion for generate_content: ..."; the original, a litellm
    error with its ``status_code``, is raised instead), and the proxy's Gemini endpoints catch nothing, so any
    error is a bare 500 (each Router's two Gemini methods turn a litellm error with a ``status_code`` into an
    HTTPException of that status, with its message). Any other error is left as it is."""
    from litellm.google_genai.adapters import handler
    from litellm.router import Router

    completion = handler.GenerateContentToCompletionHandler
    original = completion.async_generate_content_handler
    if getattr(original, "lab_errors", False):
        return

    def status(exc) -> int | None:
        code = getattr(exc, "status_code", None)
        return code if isinstance(code, int) and 400 <= code <= 599 else None

    async def async_generate_content_handler(*args, **kwargs):
        try:
            return await original(*args, **kwargs)
        except ValueError as exc:
            if status(exc.__context__):
                raise exc.__context__ from None
            raise

    async_generate_content_handler.lab_errors = True
    completion.async_generate_content_handler = staticmethod(async_generate_content_handler)

    def with_status(method):
        async def call(*args, **kwargs):
            try:
                return await method(*args, **kwargs)
            except HTTPException:
                raise
            except Exception as exc:
                if status(exc):
                    raise HTTPException(status_code=status(exc), detail=str(exc)[:2000]) from exc
                raise
        return call

    initialize = Router._initialize_google_genai_endpoints  # the Router is made after this module is loaded

    def _initialize_google_genai_endpoints(self):
        initialize(self)
        for name in ("agenerate_content", "agenerate_content_stream"):
            setattr(self, name, with_status(getattr(self, name)))

    Router._initialize_google_genai_endpoints = _initialize_google_genai_endpoints


def untold(response) -> None:
    """Leave out the usage of a Responses answer (``response``, litellm's ResponsesAPIResponse) whose input
    tokens the upstream did not tell: litellm 1.80.8 gives 0 for them (and its own estimate of the reply's from
    its text), which an agent would report as 0 tokens sent; without a usage (the API allows none, and Codex
    takes none) it reports none, as the gateway's count says unknown."""
    usage = getattr(response, "usage", None)
    if usage is not None and not getattr(usage, "input_tokens", 0):
        response.usage = None


def _function_calls_in_the_responses_stream() -> None:
    """Send the function calls of a streamed Responses answer as output items: litellm 1.80.8's Responses route
    over chat completions streams one message item (its text) and gives the function calls only inside the
    final ``response.completed`` event, which Codex reads for its usage alone; Codex takes a call from its
    ``response.output_item.done`` event, so it never saw one (its turn ended on an empty message). Before
    ``response.completed``, each function call of the completed response is sent as ``response.output_item.added``
    and ``response.output_item.done`` (output index 1, 2, ...: the message is 0), as OpenAI's own stream does. A
    ``response.completed`` whose input tokens the upstream did not tell goes without its usage (``untold``)."""
    from litellm.responses.litellm_completion_transformation.streaming_iterator import (
        LiteLLMCompletionStreamingIterator as Stream,
    )
    from litellm.types.llms.openai import (
        BaseLiteLLMOpenAIResponseObject,
        OutputItemAddedEvent,
        OutputItemDoneEvent,
        ResponsesAPIStreamEvents,
    )

    original = Stream.__anext__
    if getattr(original, "lab_calls", False):
        return

    def plain(item) -> dict:
        return item.model_dump() if hasattr(item, "model_dump") else dict(item)

    async def __anext__(self):
        pending = getattr(self, "lab_pending", None)
        if pending:
            return pending.pop(0)
        event = await original(self)
        if getattr(event, "type", None) != ResponsesAPIStreamEvents.RESPONSE_COMPLETED:
            return event
        untold(event.response)
        calls = [plain(item) for item in (getattr(event.response, "output", None) or [])
                 if plain(item).get("type") == "function_call"]
        if not calls:
            return event
        self.lab_pending = []
        for index, call in enumerate(calls, 1):
            self.lab_pending += [
                OutputItemAddedEvent(type=ResponsesAPIStreamEvents.OUTPUT_ITEM_ADDED, output_index=index,
                                     item=BaseLiteLLMOpenAIResponseObject(**{**call, "status": "in_progress"})),
                OutputItemDoneEvent(type=ResponsesAPIStreamEvents.OUTPUT_ITEM_DONE, output_index=index,
                                    sequence_number=1, item=BaseLiteLLMOpenAIResponseObject(**call))]
        self.lab_pending.append(event)
        return self.lab_pending.pop(0)

    __anext__.lab_calls = True
    Stream.__anext__ = __anext__


def unstreamed() -> bool:
    """Whether the upstream is to be asked without streaming (``upstream.json``'s ``unstreamed``; start.py writes
    it from ``--unstreamed-upstream``)."""
    try:
        return bool(json.loads((STATE / "upstream.json").read_text()).get("unstreamed"))
    except (OSError, ValueError, AttributeError):
        return False


def _unstreamed_upstream() -> None:
    """Ask the upstream without streaming, and stream its whole answer on to the agent, when ``unstreamed()``:
    llama-cpp-python's server (0.3.16, lab's local model) sends no usage in a stream, asked
    (``stream_options.include_usage``) or not, so litellm 1.80.8 made up a stream's tokens itself: the prompt's
    from the messages with its own tokenizer, or 0 where it had none (the Responses route: Codex and the gateway
    counted 0 tokens sent for an answered request), the reply's from its text. Unstreamed, the server gives its
    own counts, which litellm's fake stream (its ``should_fake_stream``, used for OpenAI models that cannot
    stream) carries in the stream to every route. The agent sees nothing of the answer until it is whole, which
    at a local model is most of the wait anyway (the prompt is computed before the first token). The fake stream
    carries one tool call a reply (its ``MockResponseIterator`` takes the first): llama-cpp-python's server gives
    at most one (it calls a tool only when the request forces one function)."""
    import litellm

    config = litellm.OpenAILikeChatConfig  # custom_openai's chat configuration (litellm.utils.ProviderConfigManager)
    original = config.should_fake_stream
    if getattr(original, "lab_unstreamed", False):
        return

    def should_fake_stream(self, model, stream, custom_llm_provider=None):
        return bool(stream and unstreamed()) or original(self, model, stream, custom_llm_provider)

    should_fake_stream.lab_unstreamed = True
    config.should_fake_stream = should_fake_stream


def told(log: dict) -> tuple[int | None, int | None]:
    """The tokens sent and received of a successful request from litellm's log of it (its standard logging
    object): (None, None) when the upstream told none, for a request always has some prompt tokens, and litellm
    logs 0 sent where the upstream's stream carried no usage on the Responses route (its count of the reply is then
    its own estimate from the text, not the upstream's: unknown too). On the other routes litellm estimates such a
    stream's prompt with its own tokenizer, which no log tells from a count: a server whose streams carry no usage
    is declared so (``stream_usage = false``), and is then never streamed from."""
    sent, received = int(log.get("prompt_tokens") or 0), int(log.get("completion_tokens") or 0)
    return (sent, received) if sent > 0 else (None, None)


def reply_cap() -> int:
    """The most tokens one reply may have (``budget.json``'s ``reply_tokens``; 0: no cap)."""
    try:
        return int(json.loads((STATE / "budget.json").read_text()).get("reply_tokens") or 0)
    except (OSError, ValueError, TypeError, AttributeError):
        return 0


def capped(params: dict, cap: int) -> dict:
    """``params`` (a chat completion's optional parameters, as litellm sends them upstream) with ``max_tokens``
    (and ``max_completion_tokens``, when given) at most ``cap``, set to ``cap`` when the request gave none;
    ``params`` unchanged when ``cap`` is 0. Without it a small model runs on to the end of its context: an
    OpenAI-compatible server given no ``max_tokens`` (llama-cpp-python's) fills the rest of its window."""
    if cap <= 0:
        return params
    for key in ("max_tokens", "max_completion_tokens"):
        if isinstance(params.get(key), int) and params[key] > cap:
            params[key] = cap
    params.setdefault("max_tokens", min(params.get("max_completion_tokens") or cap, cap))
    return params


def _upstream_request_on_every_route() -> None:
    """Cap each reply at ``reply_cap()`` tokens, and give each message of text parts its text as one string
    (``with_text_content``), on every route: the chat completions route and the routes litellm 1.80.8 turns
    into chat completions (Anthropic Messages, Responses, Gemini) all build their upstream request's parameters
    with ``litellm.main.get_optional_params``, given the request's final messages (changed in place here) and
    each route's own reply field (``max_tokens``, ``max_output_tokens``, ``maxOutputTokens``) as ``max_tokens``.
    The pre-call hook sees a translated route's request before its translation (Claude Code's system parts
    reached the upstream as a list: every request refused), and the Gemini route passes that hook by."""
    import litellm.main as main

    original = main.get_optional_params
    if getattr(original, "lab_cap", False):
        return

    def get_optional_params(*args, **kwargs):
        if isinstance(kwargs.get("messages"), list):
            with_text_content({"messages": kwargs["messages"]})
        return capped(original(*args, **kwargs), reply_cap())

    get_optional_params.lab_cap = True
    main.get_optional_params = get_optional_params


for _patch in (_one_stream_argument, _usage_in_gemini_stream, _provider_errors_on_the_gemini_route,
               _function_calls_in_the_responses_stream, _upstream_request_on_every_route, _unstreamed_upstream):
    try:
        _patch()
    except (ImportError, AttributeError):  # another litellm: its routes are as they are
        pass


class LabUsage(CustomLogger):
    """Counts requests (at admission) and tokens (on success) per try; refuses past the budget."""

    def __init__(self):
        super().__init__()
        self.spent: dict[str, list[int]] = {}  # try -> [requests, tokens]

    def _spent(self) -> list[int]:
        return self.spent.setdefault(current_try(), [0, 0])

    async def async_pre_call_hook(self, user_api_key_dict, cache, data, call_type):
        budget = json.loads((STATE / "budget.json").read_text())
        spent = self._spent()
        over = ("requests" if budget["requests"] and spent[0] >= budget["requests"]
                else "tokens" if budget["tokens"] and spent[1] >= budget["tokens"] else None)
        if over:
            append({"try": current_try(), "refused": over})
            raise HTTPException(status_code=400, detail=f"lab gateway: this try is over its {over} budget "
                                                        f"({budget[over]} {over})")
        spent[0] += 1
        append({"try": current_try(), "admitted": True})
        dropped = without_unknown_fields(data, accepted_fields(call_type))
        if dropped:
            append({"try": current_try(), "dropped": dropped, "call": call_type})
        return with_text_content(with_parameters(data))

    async def async_log_success_event(self, kwargs, response_obj, start_time, end_time):
        log = kwargs.get("standard_logging_object") or {}
        sent, received = told(log)
        self._spent()[1] += (sent or 0) + (received or 0)
        append({"try": current_try(), "ok": True, "prompt_tokens": sent, "completion_tokens": received,
                "call": log.get("call_type") or kwargs.get("call_type")})

    async def async_log_failure_event(self, kwargs, response_obj, start_time, end_time):
        error = str(kwargs.get("exception") or "")[:300]
        append({"try": current_try(), "ok": False, "prompt_tokens": 0, "completion_tokens": 0, "error": error})


handler = LabUsage()
