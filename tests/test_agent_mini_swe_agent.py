"""mini-swe-agent end to end (docker): the real agent in its image (its own prefix on the grader image) on the
fixture task python-twice, against a throwaway scripted stub started in the agent's own container on
127.0.0.1 (network none). The stub calls the agent's bash tool with the solution, then its finishing command;
or it answers 401. Until the shared scripted-model fixture (tests/scripted_model/, behind lab's gateway)
is merged, this stub stands in for it."""
from __future__ import annotations

import json
import sys
import tomllib
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
from conftest import AGENTS, run_doit  # noqa: E402
from fixture_swe import FIXED_SOURCE, make_calc, write_swe_suite  # noqa: E402
from fixture_upstream import make_upstream  # noqa: E402
from conftest import write_suite  # noqa: E402
from test_trial import make_tier, trial  # noqa: E402

docker = pytest.mark.docker
SOLUTION = "printf 'def double(number):\\n    return number * 2\\n' > twice.py"
STEPS = [{"content": "Writing the solution.", "tool": "bash", "args": {"command": SOLUTION}},
         {"content": "Done.", "tool": "bash", "args": {"command": "echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT"}}]
STUB_CODE = r'''
import json, os, sys
from http.server import BaseHTTPRequestHandler, HTTPServer
mode, steps, state = os.environ["STUB_MODE"], json.loads(os.environ["STUB_STEPS"]), {"n": 0}
class H(BaseHTTPRequestHandler):
    def log_message(self, *a): pass
    def send(self, code, body):
        data = json.dumps(body).encode()
        self.send_response(code); self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data))); self.end_headers(); self.wfile.write(data)
    def do_POST(self):
        req = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        if mode == "401":
            return self.send(401, {"error": {"message": "Incorrect API key provided", "code": "invalid_api_key"}})
        step = steps[min(state["n"], len(steps) - 1)]; state["n"] += 1
        call = {"id": "call_%d" % state["n"], "type": "function",
                "function": {"name": step["tool"], "arguments": json.dumps(step["args"])}}
        self.send(200, {"id": "c%d" % state["n"], "object": "chat.completion", "created": 1, "model": req["model"],
                        "choices": [{"index": 0, "finish_reason": "tool_calls",
                                     "message": {"role": "assistant", "content": step["content"], "tool_calls": [call]}}],
                        "usage": {"prompt_tokens": 100, "completion_tokens": 20, "total_tokens": 120}})
HTTPServer(("127.0.0.1", 8099), H).serve_forever()
'''


def scripted_table(name: str, mode: str, steps: list[dict] = STEPS) -> str:
    """The shipped mini-swe-agent table with the stub started beside it in its container."""
    table = tomllib.loads(AGENTS.read_text())["mini-swe-agent"]
    command = ("python3 -c \"$STUB_CODE\" & sleep 1; exec mini-swe-agent --yolo --exit-immediately "
               "--model \"$MSWEA_MODEL_NAME\" --config \"$MSWEA_CONFIG\" --task \"$(cat {prompt})\" "
               "--output {out}/trajectory.json")
    env_set = {**table["env_set"], "OPENAI_API_BASE": "http://127.0.0.1:8099/v1", "OPENAI_API_KEY": "test",
               "MSWEA_MODEL_RETRY_STOP_AFTER_ATTEMPT": "1", "STUB_MODE": mode, "STUB_STEPS": json.dumps(steps),
               "STUB_CODE": STUB_CODE}
    lines = [f"[{name}]", 'image = "mini-swe-agent"', f"command = {json.dumps(['sh', '-c', command])}",
             'network = "none"', 'adapter = "mini-swe-agent"',
             "env_set = { " + ", ".join(f"{k} = {json.dumps(v)}" for k, v in env_set.items()) + " }",
             f"[{name}.settings]", 'model = { env = "MSWEA_MODEL_NAME", default = "openai/scripted" }',
             'config = { env = "MSWEA_CONFIG", default = "mini.yaml" }',
             f"[{name}.build]", f"mini_swe_agent_version = {json.dumps(table['build']['mini_swe_agent_version'])}",
             f"[{name}.limits]", "timeout = 180"]
    return "\n" + "\n".join(lines) + "\n"


@pytest.fixture(scope="module")
def home(tmp_path_factory, grader_image) -> Path:
    home = tmp_path_factory.mktemp("mini") / "home"
    make_tier(home)
    with open(home / "evals" / "agents.toml", "a") as f:
        f.write(scripted_table("mini-scripted", "ok") + scripted_table("mini-refused", "401"))
    res = run_doit(home, "agent_image:mini-scripted", "agent_image:mini-refused", "jobs=1", timeout=1800)
    assert res.code == 0, res.stderr[-3000:] + res.stdout[-2000:]
    return home


@docker
def test_its_bash_tool_writes_the_solution_and_the_trial_passes_with_tokens_and_tool_calls(home):
    r = trial(home, "mini-scripted", "python-twice", tries=1)
    run = home / "evals" / "aider" / "runs" / "mini-scripted" / "python-twice"
    assert r["status"] == "pass", (r, (run / "agent-1.log").read_text()[-3000:])
    assert r["usage"]["tokens_sent"] == 200 and r["usage"]["tokens_received"] == 40 and r["usage"]["cost"] is None
    trajectory = json.loads((run / r["tries"][0]["trajectory"]).read_text())
    calls = [c for s in trajectory["steps"] for c in s.get("tool_calls", [])]
    assert calls and calls[0]["function_name"] == "bash" and "twice.py" in calls[0]["arguments"]["command"]


@docker
def test_a_refused_key_makes_the_trial_an_agent_error(home):
    r = trial(home, "mini-refused", "python-twice", tries=1)
    assert r["status"] == "error" and r["error_kind"] == "agent", r
    assert "auth: litellm.AuthenticationError" in r["error"], r["error"]


SWE_STEPS = [{"content": "Fixing add.", "tool": "bash",
              "args": {"command": "printf '" + FIXED_SOURCE.replace("\n", "\\n") + "' > calc/__init__.py"}},
             STEPS[1]]


@docker
def test_on_the_swe_tier_it_runs_in_the_environment_image_with_its_own_python(tmp_path):
    """The agent image built FROM the fixture instance's environment image (Debian with the repository's
    Python); the agent's prefix brings its own Python and C library, and its bash tool runs the env's."""
    make_calc(tmp_path / "src")
    home = tmp_path / "home"
    write_suite(home, make_upstream(tmp_path / "upstream"))
    write_swe_suite(home, tmp_path / "src")
    with open(home / "evals" / "agents.toml", "a") as f:
        f.write(scripted_table("mini-swe", "ok", SWE_STEPS))
    assert run_doit(home, "gen:swe").code == 0
    res = run_doit(home, "run", "suite=swe", "agent=mini-swe", "jobs=1", timeout=2400)
    results = list((home / "evals" / "swe" / "runs").glob("*/lab__calc-1/result.json"))
    assert results, res.stdout[-3000:] + res.stderr[-3000:]
    r = json.loads(results[0].read_text())
    assert (r["status"], r["resolved"]) == ("pass", True), (r, res.stdout[-2000:])
    assert r["usage"]["tokens_sent"] > 0
