import json, sys, urllib.request
B = "http://127.0.0.1:4000"
K = "sk-lab-gateway"
def post(path, body, headers):
    req = urllib.request.Request(B + path, json.dumps(body).encode(), {"Content-Type": "application/json", **headers})
    try:
        with urllib.request.urlopen(req, timeout=60) as r:
            return r.status, r.read().decode()
    except urllib.error.HTTPError as e:
        return e.code, e.read().decode()
tools = [{"type": "function", "function": {"name": "write_file", "parameters": {"type": "object", "properties": {"path": {"type": "string"}, "content": {"type": "string"}}}}}]
msgs = [{"role": "user", "content": "write the file please"}]
print("chat", post("/v1/chat/completions", {"model": "any", "messages": msgs, "tools": tools}, {"Authorization": "Bearer " + K}))
print("chat-stream", post("/v1/chat/completions", {"model": "any", "messages": msgs, "tools": tools, "stream": True}, {"Authorization": "Bearer " + K}))
print("responses", post("/v1/responses", {"model": "any", "input": "write the file please", "tools": [{"type": "function", "name": "write_file", "parameters": tools[0]["function"]["parameters"]}]}, {"Authorization": "Bearer " + K}))
print("anthropic", post("/v1/messages", {"model": "claude-x", "max_tokens": 100, "system": [{"type": "text", "text": "be brief", "cache_control": {"type": "ephemeral"}}], "messages": msgs, "tools": [{"name": "write_file", "input_schema": tools[0]["function"]["parameters"]}]}, {"x-api-key": K, "anthropic-version": "2023-06-01"}))
print("gemini", post("/v1beta/models/gemini-x:generateContent", {"contents": [{"role": "user", "parts": [{"text": "write the file please"}]}], "tools": [{"functionDeclarations": [{"name": "write_file", "parameters": tools[0]["function"]["parameters"]}]}]}, {"x-goog-api-key": K}))
