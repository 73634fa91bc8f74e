"""Built-in agents end to end (docker) against the scripted model fixture (tests/scripted_model/, a test
fixture, not a model) behind lab's gateway, with no network: each agent's *shipped* table from
evals/agents.toml, its network switched to a service namespace holding only the fixture and the gateway. The
fixture calls the agent's own file-writing tool with the fixture task's solution; the trial must pass with
tokens counted by the agent and by the gateway, and a trajectory holding that tool call. A refused key (the
fixture answering 401 through the gateway) must make the trial an agent `error`."""
from __future__ import annotations

import json
import os
import sys
import tomllib
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
from conftest import run_doit  # noqa: E402
from fixture_upstream import GOOD_PY, STUB_PY  # noqa: E402
from test_trial import make_tier, trial  # noqa: E402

from rules.config import ROOT  # noqa: E402

docker = pytest.mark.docker
FIXTURE = Path(__file__).resolve().parent / "scripted_model"
SHIPPED = tomllib.loads((ROOT / "evals" / "agents.toml").read_text())
GATEWAY = "http://127.0.0.1:4000"
KEY = "sk-lab-gateway"
# what each agent needs to reach the gateway: its base-URL variable and the API route it speaks there
REACH = {
    "opencode": {"OPENCODE_BASE_URL": f"{GATEWAY}/v1", "OPENAI_API_KEY": KEY},
    "qwen-code": {"OPENAI_BASE_URL": f"{GATEWAY}/v1", "OPENAI_API_KEY": KEY},
    # the gateway drops the Messages field context_management (litellm 1.80.8 cannot carry it upstream)
    "claude-code": {"ANTHROPIC_BASE_URL": GATEWAY, "ANTHROPIC_API_KEY": KEY},
    # the gateway gives the streamed Gemini route the upstream's usage and its refusals' own status (a 401, not 500)
    "gemini-cli": {"GOOGLE_GEMINI_BASE_URL": GATEWAY, "GEMINI_API_KEY": KEY},
    "cline": {"CLINE_BASE_URL": f"{GATEWAY}/v1", "OPENAI_API_KEY": KEY},
    # codex's only writing tool here is its shell (exec_command); the gateway streams the Responses route's function
    # calls as output items, which codex reads them from
    "codex": {"OPENAI_BASE_URL": f"{GATEWAY}/v1", "OPENAI_API_KEY": KEY},
    # OpenHands' file_editor replaces the stub's whole text (str_replace), then its finish tool ends the run
    "openhands": {"LLM_BASE_URL": f"{GATEWAY}/v1", "LLM_API_KEY": KEY},
}
# what a refused key's table sets besides: Claude Code retries a 401 ten times with backoff (181 s, 11 requests,
# measured against a stub answering 401); with no retry it makes one request and ends on the same "Invalid API key"
# message in 9 s. Its retries' api_retry events are read in tests/data/agent_outputs/cc-401.txt (test_adapters_npm)
REFUSED_ENV = {"claude-code": {"CLAUDE_CODE_MAX_RETRIES": "0"}}
# the model each agent asks for, when not "scripted": litellm-based agents name the provider's API too
MODEL = {"openhands": "openai/scripted"}
# the body fields the gateway must drop for each agent (recorded in the try's gateway_usage)
DROPS = {"claude-code": "context_management", "codex": "client_metadata"}
# Agents set aside until they pass (LAB_SCRIPTED_AGENTS=NAME,... runs them), each with the reason: none at present.
LATER: dict[str, dict[str, str]] = {}
REACH.update({k: v for k, v in LATER.items() if k in os.environ.get("LAB_SCRIPTED_AGENTS", "")})
# LAB_SCRIPTED_AGENTS=codex,cline runs only those (or `-k codex`: each agent's images are built on its first test)
AGENTS = sorted(os.environ.get("LAB_SCRIPTED_AGENTS", ",".join(REACH)).split(","))


def _toml(value) -> str:
    return json.dumps(value) if not isinstance(value, dict) else \
        "{ " + ", ".join(f"{json.dumps(k)} = {_toml(v)}" for k, v in value.items()) + " }"


def scripted_table(agent: str, name: str, mode: str, reach: dict | None = None, path: str = "twice.py",
                   content: str = GOOD_PY, old: str = STUB_PY, command: list[str] | None = None) -> str:
    """``agent``'s shipped table as agent ``name``, in a service namespace with the scripted fixture (``mode``:
    solve | refuse401: write ``content`` over ``old`` in ``path``) and lab's gateway, its base URL and key pointed
    at the gateway (``reach``, default ``REACH[agent]``); ``command`` in place of the shipped one."""
    table = SHIPPED[agent]
    script = {"mode": mode, "path": path, "content": content, "old": old}
    env = {**table.get("env_set", {}), **(REACH[agent] if reach is None else reach),
           **(REFUSED_ENV.get(agent, {}) if mode == "refuse401" else {})}
    lines = [f"[{name}]", f"image = {json.dumps(table['image'])}", f"command = {json.dumps(command or table['command'])}",
             'network = "service"', f"adapter = {json.dumps(table.get('adapter') or table['usage'])}",
             f"env_set = {_toml(env)}",
             f"[{name}.settings]"]
    model = MODEL.get(agent, "scripted")
    lines += [f"{k} = {_toml({**v, 'default': model} if k == 'model' else v)}"
              for k, v in table.get("settings", {}).items()]
    lines += [f"[{name}.build]"] + [f"{k} = {json.dumps(v)}" for k, v in table.get("build", {}).items()]
    lines += [f"[{name}.limits]", "timeout = 300", "requests = 40",
              f"[{name}.service]", f"image = {json.dumps(str(FIXTURE / 'scripted.Dockerfile.j2'))}",
              f"command = {json.dumps(['python3', '/opt/lab/scripted/server.py', '--port', '{port}', '--script', json.dumps(script)])}",
              "port = 8080", f"[{name}.gateway]", 'model = "scripted"']
    return "\n" + "\n".join(lines) + "\n"


@pytest.fixture(scope="module")
def home(tmp_path_factory, grader_image) -> Path:
    home = tmp_path_factory.mktemp("scripted-agents") / "home"
    make_tier(home)
    with open(home / "evals" / "agents.toml", "a") as f:
        for agent in AGENTS:
            f.write(scripted_table(agent, f"{agent}-scripted", "solve") +
                    scripted_table(agent, f"{agent}-refused", "refuse401"))
    return home


_BUILT: set[str] = set()


def built(home: Path, agent: str) -> None:
    """Build ``agent``'s two scripted tables' images (the agent's, the fixture's, the gateway's) once per module,
    so that ``-k NAME`` builds only that agent's (each takes minutes from npm)."""
    if agent in _BUILT:
        return
    from rules.agents import load_agents
    agents = load_agents(home / "evals" / "agents.toml")
    targets = [t for n in (f"{agent}-scripted", f"{agent}-refused")
               for t in [f"agent_image:{n}", *agents[n].service_images()]]
    res = run_doit(home, *sorted(set(targets)), "jobs=1", timeout=3000)
    assert res.code == 0, res.stderr[-3000:] + res.stdout[-2000:]
    _BUILT.add(agent)


@docker
@pytest.mark.parametrize("agent", AGENTS)
def test_its_own_tool_writes_the_solution_and_the_trial_passes_with_tokens_and_a_tool_call(home, agent):
    built(home, agent)
    name = f"{agent}-scripted"
    r = trial(home, name, "python-twice", tries=1)
    run = home / "evals" / "aider" / "runs" / name / "python-twice"
    log = (run / "agent-1.log").read_text()[-3000:] if (run / "agent-1.log").exists() else ""
    assert r["status"] == "pass", (r, log)
    assert r["usage"]["tokens_sent"] > 0 and r["usage"]["tokens_received"] > 0, (r["usage"], log)
    assert r["usage"]["cost"] is None, "the fixture has no price: its cost is unknown, never 0"
    gateway = r["tries"][0]["gateway_usage"]
    assert gateway["requests"] >= 2 and gateway["tokens_sent"] > 0, gateway
    if agent in DROPS:
        assert DROPS[agent] in gateway["dropped"], gateway
    trajectory = json.loads((run / r["tries"][0]["trajectory"]).read_text())
    calls = [c for s in trajectory["steps"] for c in s.get("tool_calls", [])]
    assert any("twice.py" in json.dumps(c["arguments"]) for c in calls), trajectory


@docker
@pytest.mark.parametrize("agent", AGENTS)
def test_a_refused_key_makes_the_trial_an_agent_error(home, agent):
    built(home, agent)
    r = trial(home, f"{agent}-refused", "python-twice", tries=1)
    assert r["status"] == "error" and r["error_kind"] == "agent", r
