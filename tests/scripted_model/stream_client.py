"""A test client of lab's gateway (run in the gateway's network namespace): one streamed OpenAI Responses request,
as Codex makes it; prints the HTTP status, then the ``usage`` of its ``response.completed`` event as JSON (null when
the event has none), then the types of the function-call items streamed."""
import json
import urllib.error
import urllib.request

TOOL = {"type": "function", "name": "write_file", "parameters": {
    "type": "object", "properties": {"path": {"type": "string"}, "content": {"type": "string"}}}}
body = {"model": "any", "input": [{"role": "user", "content": [{"type": "input_text", "text": "write the file please"}]}],
        "instructions": "you are a careful agent", "tools": [TOOL], "stream": True}
request = urllib.request.Request("http://127.0.0.1:4000/v1/responses", json.dumps(body).encode(),
                                 {"Content-Type": "application/json", "Authorization": "Bearer sk-lab-gateway"})
usage, calls = None, []
try:
    with urllib.request.urlopen(request, timeout=120) as response:
        status = response.status
        for line in response:
            line = line.decode().strip()
            if not line.startswith("data: ") or line == "data: [DONE]":
                continue
            event = json.loads(line[len("data: "):])
            if event.get("type") == "response.completed":
                usage = event["response"].get("usage")
            if event.get("type") == "response.output_item.done" and event["item"].get("type") == "function_call":
                calls.append(event["item"]["name"])
except urllib.error.HTTPError as exc:
    status = exc.code
print(status)
print(json.dumps(usage))
print(json.dumps(calls))
