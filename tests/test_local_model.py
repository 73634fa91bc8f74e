"""A real model, offline: the ``aider-local`` agent (the real aider CLI) against llama-cpp-python's server with
SmolLM2-135M-Instruct, started by lab beside each trial's agent container in a network namespace with no way out.

The definition tests need no Docker. The docker tests build the service image (llama-cpp-python compiled from
source, about 6 minutes on 2 cores, once per CI run) and the aider image, then run ``doit`` on the fixture's
Python tasks (``tests/test_trial.py``'s tier) and a probe agent that tries to get out of the namespace.
"""
from __future__ import annotations

import dataclasses
import json
import re
import subprocess
import sys
import time
import tomllib
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
from conftest import AGENTS, run_doit  # noqa: E402
from test_trial import TASKS, make_tier  # noqa: E402

from rules.agents import AgentError, load_agents, parse_agent  # noqa: E402
from rules.config import ROOT  # noqa: E402
from rules.services import Budget, parse_service  # noqa: E402

docker = pytest.mark.docker


def local_table() -> dict:
    return tomllib.loads(AGENTS.read_text())["aider-local"]


# ---- the definition (no Docker) ----

def test_aider_local_reaches_only_its_own_server_and_fetches_nothing_at_start():
    agent = load_agents(AGENTS)["aider-local"]
    service = agent.service
    assert agent.network == "service" and service is not None and agent.usage == "aider"
    argv = agent.argv(["hello.py"])
    api_base = argv[argv.index("--openai-api-base") + 1]
    assert api_base == f"http://127.0.0.1:{service.port}/v1"
    assert argv[argv.index("--edit-format") + 1] == "whole" and argv[argv.index("--model") + 1].startswith("openai/")
    assert {"--no-check-update", "--analytics-disable", "--no-show-release-notes"} <= set(argv)
    assert dict(agent.env_set)["LITELLM_LOCAL_MODEL_COST_MAP"] == "True" and not agent.env
    assert f"--port {service.port}" in " ".join(service.argv()) and "127.0.0.1" in service.argv()
    assert f"127.0.0.1:{service.port}/v1/models" in " ".join(service.probe())


def test_aider_knows_the_served_model_so_it_fetches_no_price_list():
    agent = load_agents(AGENTS)["aider-local"]
    build, argv, served = dict(agent.build), agent.argv([]), agent.service.argv()
    assert argv[argv.index("--model") + 1] == build["model"]
    assert build["model"].split("/", 1)[1] == served[served.index("--model_alias") + 1]
    assert build["context_tokens"] == served[served.index("--n_ctx") + 1]
    text = agent.dockerfile("lab/grader:latest")
    metadata = json.loads(text.split("printf '%s\\n' '")[1].split("'")[0])
    assert metadata[build["model"]]["max_input_tokens"] == int(build["context_tokens"])
    assert argv[argv.index("--model-metadata-file") + 1] == "/opt/lab/aider/model.metadata.json" in text


def test_the_service_image_carries_the_model_checked_by_its_digest():
    service = load_agents(AGENTS)["aider-local"].service
    text = service.dockerfile("lab/base:bookworm")
    build = dict(service.build)
    assert text.startswith("#") and "FROM lab/base:bookworm AS build" in text
    assert f'llama-cpp-python[server]=={build["llama_cpp_version"]}' in text
    assert f'{build["model_sha256"]}  /models/{build["model_file"]}" | sha256sum -c -' in text
    assert f"/models/{build['model_file']}" in service.argv()
    assert service.tag() == f"lab/service-llama:{service.image_digest}"


def test_agents_declaring_the_same_service_share_its_image_and_a_new_model_is_a_new_image():
    table = local_table()
    a = parse_agent("a", table)
    b = parse_agent("b", {**table, "command": ["true"]})
    assert a.service.tag() == b.service.tag() and a.service.stamp_name == b.service.stamp_name
    other = {**table["service"], "build": {**table["service"]["build"], "model_file": "other.gguf"}}
    c = parse_agent("c", {**table, "service": other})
    assert c.service.tag() != a.service.tag() and c.digest != a.digest


def test_an_agent_without_a_service_keeps_its_definition_and_digest():
    noop = load_agents(AGENTS)["noop"]
    assert "service" not in noop.definition() and noop.service is None


@pytest.mark.parametrize("change, message", [
    ({"network": "none"}, 'network = "service" and a [tomo.service] table go together'),
    ({"service": None, "network": "service"}, 'network = "service" and a [tomo.service] table go together'),
    ({"service": {"image": "llama", "command": ["serve"]}}, "[tomo.service]: missing field(s) port"),
    ({"service": {"image": "llama", "command": ["serve"], "port": 0}}, "port must be a whole number from 1 to 65535"),
    ({"service": {"image": "llama", "command": ["serve"], "port": 80, "gpu": 1}}, "unknown field(s) gpu"),
    ({"service": {"image": "llama", "command": "serve", "port": 80}}, "command: must be a non-empty list"),
    ({"service": {"image": "llama", "command": ["s"], "port": 80, "limits": {"timeout": 0}}}, "must be positive"),
    ({"gateway": {"model": "m", "litellm_version": 1.80}}, "litellm_version must be a PyPI version in quotes"),
    ({"gateway": {"model": "m", "litellm_version": "latest"}}, "litellm_version must be a PyPI version in quotes"),
])
def test_a_bad_service_names_the_agent_and_the_field(change, message):
    raw = {**local_table(), **change}
    raw = {k: v for k, v in raw.items() if v is not None}
    with pytest.raises(AgentError) as err:
        parse_agent("tomo", raw, "agents.toml")
    assert message in str(err.value) and "agents.toml [tomo" in str(err.value)


def test_a_service_cache_is_part_of_its_definition_and_has_a_folder_per_definition():
    plain = parse_service({"image": "llama", "command": ["serve"], "port": 80}, "x")
    cached = parse_service({"image": "llama", "command": ["serve"], "port": 80, "cache": "/var/cache/lab"}, "x")
    other = parse_service({"image": "llama", "command": ["serve", "--n_ctx", "4096"], "port": 80,
                           "cache": "/var/cache/lab"}, "x")
    assert "cache" not in plain.definition() and plain.cache_dir() is None  # digests without a cache unchanged
    assert cached.definition()["cache"] == "/var/cache/lab"
    assert cached.cache_dir().parent.name == "cache" and cached.cache_dir().name.startswith(cached.stamp_name)
    assert other.cache_dir() != cached.cache_dir()  # another model window never reads this one's states


@pytest.mark.parametrize("cache", ["var/cache", "/", 7, ""])
def test_a_service_cache_must_be_an_absolute_folder(cache):
    with pytest.raises(Exception, match="cache must be an absolute folder"):
        parse_service({"image": "llama", "command": ["serve"], "port": 80, "cache": cache}, "x")


def test_the_shipped_local_model_keeps_its_prompt_cache_from_trial_to_trial():
    service = load_agents(ROOT / "evals" / "agents.toml")["aider-local"].service
    argv = service.argv()
    assert service.cache and argv[argv.index("--cache") + 1] == "true" and "disk" in argv


def test_a_missing_service_template_lists_the_built_in_ones():
    service = parse_service({"image": "vllm", "command": ["serve"], "port": 8000}, "x")
    with pytest.raises(Exception, match="built-in service images: gateway, llama"):
        service.template_path()


def test_a_service_template_change_does_not_rebuild_the_grader():
    from rules import images

    deps = images.grader_templates()
    assert deps and not [p for p in deps if "services" in p.parts or "agents" in p.parts]


# ---- the real thing (Docker) ----

PUBLIC = ("1.1.1.1", 443)  # a public address; the probe must fail to reach it (never a private-range address)
PROBE = """
import json, socket, time, urllib.request
out = {}
start = time.monotonic()
try:
    socket.create_connection(%r, timeout=10).close()
    out["public"] = "connected"
except OSError as exc:
    out["public"] = type(exc).__name__ + ": " + str(exc)
out["public_seconds"] = time.monotonic() - start
try:
    socket.getaddrinfo("pypi.org", 443)
    out["dns"] = "resolved"
except OSError as exc:
    out["dns"] = type(exc).__name__
out["models"] = json.loads(urllib.request.urlopen("http://127.0.0.1:%d/v1/models", timeout=10).read())
out["routes"] = open("/proc/net/route").read().splitlines()[1:]
out["interfaces"] = sorted(line.split(":")[0].strip() for line in open("/proc/net/dev").read().splitlines()[2:])
json.dump(out, open("/lab/out/probe.json", "w"))
"""


def lab_containers(**labels) -> list[str]:
    filters = sum((["--filter", f"label={k}={v}"] for k, v in labels.items()), [])
    out = subprocess.run(["docker", "ps", "-aq", "--filter", "label=lab", *filters], capture_output=True, text=True)
    return out.stdout.split()


def doit_failure(res) -> str:
    return res.stderr[-4000:] + "\n" + res.stdout[-3000:]


@pytest.fixture(scope="module")
def local_home(tmp_path_factory, grader_image) -> Path:
    """A lab home with the fixture's Python tier and the shipped agents; the model server's image and the
    aider-local and noop agent images built through doit (timed: the seconds go to stdout for the CI log)."""
    home = tmp_path_factory.mktemp("local") / "home"
    make_tier(home)
    start = time.monotonic()
    res = run_doit(home, "service_image", "agent_image:aider-local", "agent_image:noop", "jobs=1", timeout=3600)
    assert res.code == 0, doit_failure(res)
    print(f"\nimages for aider-local built or found current in {time.monotonic() - start:.0f} s")
    return home


@docker
def test_the_agent_in_the_service_namespace_reaches_the_model_and_nothing_else(local_home):
    from rules import images
    from rules.agents import load_agents
    from rules.config import Limits
    from rules.trial import Trial, run_trial

    agents = load_agents(local_home / "evals" / "agents.toml")
    local = agents["aider-local"]
    probe = dataclasses.replace(agents["noop"], name="net-probe", network="service", service=local.service,
                                command=("python3", "-c", PROBE % (PUBLIC, local.service.port)))
    tier = local_home / "evals" / "aider"
    t = Trial(agent=probe, task_dir=tier / "tasks" / "python-hello", run_dir=tier / "runs" / "net-probe" / "python-hello",
              scratch=local_home / ".lab" / "trials" / "net-probe", agent_image=agents["noop"].tag(images.GRADER),
              grader_image=images.GRADER, grade_limits=Limits(cpus=1, memory=1024**3, pids=256, timeout=60), tries=1)
    r = run_trial(t, environ={})
    assert r["status"] == "fail", r  # the probe edits nothing: graded on the stub, a finished trial
    out = json.loads((t.run_dir / "out-1" / "probe.json").read_text())
    assert out["public"] != "connected" and out["public_seconds"] < 5, out
    assert out["dns"] != "resolved" and out["routes"] == [] and out["interfaces"] == ["lo"], out
    assert [m["id"] for m in out["models"]["data"]] == ["smollm2-135m"], out
    assert r["service"]["image"] == local.service.tag() and r["service"]["id"].startswith("sha256:")
    assert "Uvicorn running on http://127.0.0.1" in (t.run_dir / "service.log").read_text()
    assert lab_containers(**{"lab.agent": "net-probe"}) == []


@docker
def test_a_service_that_never_answers_is_an_infrastructure_error_with_its_log(local_home):
    from rules import images
    from rules.agents import load_agents
    from rules.config import Limits
    from rules.trial import Trial, run_trial

    agents = load_agents(local_home / "evals" / "agents.toml")
    local = agents["aider-local"]
    broken = dataclasses.replace(local.service, command=("sh", "-c", "echo model file missing >&2; sleep 60"),
                                 limits=dataclasses.replace(local.service.limits, timeout=3))
    agent = dataclasses.replace(agents["noop"], name="broken-service", network="service", service=broken)
    tier = local_home / "evals" / "aider"
    t = Trial(agent=agent, task_dir=tier / "tasks" / "python-hello", run_dir=tier / "runs" / agent.name / "python-hello",
              scratch=local_home / ".lab" / "trials" / agent.name, agent_image=agents["noop"].tag(images.GRADER),
              grader_image=images.GRADER, grade_limits=Limits(cpus=1, memory=1024**3, pids=256, timeout=60), tries=1)
    r = run_trial(t, environ={})
    assert r["status"] == "error" and r["tries"] == [], r
    assert "not ready after 3 s" in r["error"] and "model file missing" in r["error"], r["error"]
    assert "model file missing" in (t.run_dir / "service.log").read_text()
    assert lab_containers(**{"lab.agent": agent.name}) == []


@docker
def test_a_service_that_dies_during_the_trial_makes_it_an_infrastructure_error(local_home):
    from rules import images
    from rules.agents import load_agents
    from rules.config import Limits
    from rules.trial import Trial, run_trial

    agents = load_agents(local_home / "evals" / "agents.toml")
    local = agents["aider-local"]
    dying = dataclasses.replace(
        local.service, command=("sh", "-c", "python3 -m http.server {port} --bind 127.0.0.1 & sleep 3; exit 3"),
        ready=("python3", "-c", "import socket; socket.create_connection(('127.0.0.1', {port}), 2)"))
    agent = dataclasses.replace(agents["noop"], name="dying-service", network="service", service=dying,
                                command=("sleep", "6"))
    tier = local_home / "evals" / "aider"
    t = Trial(agent=agent, task_dir=tier / "tasks" / "python-hello", run_dir=tier / "runs" / agent.name / "python-hello",
              scratch=local_home / ".lab" / "trials" / agent.name, agent_image=agents["noop"].tag(images.GRADER),
              grader_image=images.GRADER, grade_limits=Limits(cpus=1, memory=1024**3, pids=256, timeout=60), tries=1)
    r = run_trial(t, environ={})
    assert r["status"] == "error" and "stopped during the trial (exit code 3)" in r["error"], r
    assert "[lab: the service's container had stopped before it was removed: exit code 3]" in (
        t.run_dir / "service.log").read_text()
    assert lab_containers(**{"lab.agent": agent.name}) == []


@docker
def test_aider_local_runs_the_fixture_tasks_end_to_end_with_real_tokens(local_home):
    start = time.monotonic()
    res = run_doit(local_home, "agent=aider-local", "jobs=1", timeout=3000)  # `doit run agent=aider-local`
    seconds = time.monotonic() - start
    runs = local_home / "evals" / "aider" / "runs" / "aider-local"
    results = {t: json.loads((runs / t / "result.json").read_text()) for t in TASKS if (runs / t / "result.json").exists()}
    assert set(results) == set(TASKS), doit_failure(res)
    logs = {t: (runs / t / "agent-1.log").read_text()[-1500:] for t in TASKS if (runs / t / "agent-1.log").exists()}
    for task, r in results.items():
        assert r["status"] in ("pass", "fail"), (task, r.get("error"), logs.get(task))
        # tokens sent by every trial; a reply may be empty (SmolLM2 sometimes ends at once: aider's "Empty
        # response received"), which is the model's doing, not an error: received tokens are counted over the run
        assert r["usage"] and r["usage"]["tokens_sent"] > 0, (task, logs.get(task))
        assert r["service"]["image"].startswith("lab/service-llama:")
        assert "Uvicorn running" in (runs / task / "service.log").read_text()
        assert r["service"]["cache"].startswith(".lab/cache/service-llama-"), r["service"]
        first = r["tries"][0]  # aider's chat history, read by its adapter, is the try's trajectory
        trajectory = json.loads((runs / task / first["trajectory"]).read_text())
        assert trajectory["schema_version"] == "ATIF-v1.7"
        assert [s["source"] for s in trajectory["steps"]].count("user") >= 1, trajectory
        for log in runs.glob(f"{task}/agent-*.log"):  # nothing in aider tried to reach outside
            text = log.read_text()
            assert not [w for w in ("githubusercontent", "Failed to resolve", "NameResolutionError") if w in text], text
        # tokens received agree with the transcript, try by try: a reply aider wrote down was counted, and a
        # count of 0 is an empty reply aider itself reported (SmolLM2 sometimes ends at once; a one-task run
        # may hold only such replies, so "received > 0 over the run" would test the model, not lab)
        replied, said_empty = False, True
        for n, one in enumerate(r["tries"], 1):
            steps = json.loads((runs / task / one["trajectory"]).read_text())["steps"]
            replied = replied or any(s["source"] == "agent" and s["message"] for s in steps)
            said_empty = said_empty and "Empty response" in (runs / task / f"agent-{n}.log").read_text()
        if replied:  # the trial's usage (summed over its tries) counts the replies aider wrote down
            assert r["usage"]["tokens_received"] > 0, (task, r["usage"], logs.get(task))
        else:
            assert r["usage"]["tokens_received"] == 0 and said_empty, (task, r["usage"], logs.get(task))
    assert lab_containers(**{"lab.agent": "aider-local"}) == []
    # the prompt cache outlives each trial's server: a later trial's server loaded a state an earlier one saved
    # (aider's system prompt is the same for every task)
    caches = list((local_home / ".lab" / "cache").glob("service-llama-*/.cache/llama_cache/*"))
    assert caches, sorted(p.name for p in (local_home / ".lab").iterdir())
    hits = [t for t in TASKS if "cache hit" in (runs / t / "service.log").read_text()]
    assert len(TASKS) < 2 or hits, "no trial's model server loaded a saved prompt state"
    passed = sum(r["status"] == "pass" for r in results.values())
    tokens = sum(r["usage"]["tokens_sent"] + r["usage"]["tokens_received"] for r in results.values())
    print(f"\naider-local on {len(results)} fixture tasks: {passed} passed, {seconds:.0f} s in all, "
          f"{sum(r['seconds'] for r in results.values()) / len(results):.0f} s and {tokens / len(results):.0f} "
          f"tokens per trial")
    assert res.code == 0, doit_failure(res)
    assert "aider-local" in (local_home / "evals" / "aider" / "report.md").read_text()  # then `run` reports


# ---- model=local: any agent against lab's local model, behind lab's gateway (no Docker) ----

TOMO_LOCAL = '''
[tomo]
image = "noop"
command = ["tomo"]
env_optional = ["TOMO_KEY", "TOMO_BASE"]
env_any = ["TOMO_KEY", "TOMO_BASE"]
network = "bridge"
[tomo.settings]
model = { env = "TOMO_MODEL" }
[tomo.local]
env_set = { TOMO_BASE = "http://127.0.0.1:4000/v1", TOMO_KEY = "sk-lab-gateway" }
'''


def _with_tomo(tmp_path: Path, extra: str = TOMO_LOCAL) -> Path:
    path = tmp_path / "agents.toml"
    path.write_text(AGENTS.read_text() + extra)
    return path


def test_model_local_runs_an_agent_beside_the_local_model_behind_the_gateway(tmp_path):
    agents = load_agents(_with_tomo(tmp_path))
    tomo, source = agents["tomo"], agents["aider-local"]
    local = tomo.resolve({"model": "local"})
    assert (local.run, local.label, local.network) == ("tomo.local", "tomo (local)", "service")
    assert local.service == source.service and local.gateway is not None
    gateway = " ".join(local.gateway.command)
    assert f"--upstream http://127.0.0.1:{source.service.port}/v1 --model smollm2-135m" in gateway
    # the gateway's URL and key, and the served model's name, whatever the caller's shell holds
    env = local.environment({"TOMO_KEY": "a-real-key", "TOMO_BASE": "https://api.example.com", "TOMO_MODEL": "x"})
    assert (env["TOMO_KEY"], env["TOMO_BASE"], env["TOMO_MODEL"]) == (
        "sk-lab-gateway", "http://127.0.0.1:4000/v1", "smollm2-135m")
    remote = tomo.resolve({"model": "gpt-4o"})
    assert remote.network == "bridge" and remote.service is None and remote.gateway is None
    assert local.digest != remote.digest and "local" not in tomo.definition()
    assert local.definition()["service"] == source.service.definition()  # its results name the model they ran


@pytest.mark.parametrize("extra, message", [
    (TOMO_LOCAL.replace('[tomo.local]\nenv_set = { TOMO_BASE = "http://127.0.0.1:4000/v1", TOMO_KEY = '
                        '"sk-lab-gateway" }\n', ""), "has no [tomo.local] table, so model=local cannot reach"),
    (TOMO_LOCAL + 'served_by = "nobody"\n', "the [service] of agent 'nobody', which evals/agents.toml does not define"),
])
def test_model_local_without_a_way_to_the_local_model_says_what_to_add(tmp_path, extra, message):
    tomo = load_agents(_with_tomo(tmp_path, extra))["tomo"]
    with pytest.raises(AgentError, match=re.escape(message)):
        tomo.resolve({"model": "local"})


def test_a_local_table_needs_env_set_and_a_model_setting(tmp_path):
    head, _, _ = TOMO_LOCAL.partition("[tomo.local]")
    with pytest.raises(AgentError, match=r"\[tomo.local\]: missing field\(s\) env_set"):
        load_agents(_with_tomo(tmp_path, head + '[tomo.local]\nmodel = "m"\n'))
    no_setting = TOMO_LOCAL.replace('[tomo.settings]\nmodel = { env = "TOMO_MODEL" }\n', "")
    with pytest.raises(AgentError, match=r"a \[tomo.local\] table needs a model setting"):
        load_agents(_with_tomo(tmp_path, no_setting))


@docker
def test_model_local_runs_a_shipped_agent_against_the_local_model_with_tokens_counted_at_the_gateway(local_home):
    """mini-swe-agent with model=local (its text-based config: the local server answers with text, not tool
    calls) on one fixture task: a finished trial, never an error, with tokens counted by the gateway."""
    from rules.agents import load_agents

    agent = load_agents(local_home / "evals" / "agents.toml")["mini-swe-agent"]
    run = agent.resolve({"model": "local", "config": "mini_textbased.yaml"}).run
    res = run_doit(local_home, f"eval:{run}/python-hello", "model=local", "config=mini_textbased.yaml", "tries=1",
                   timeout=1800)
    path = local_home / "evals" / "aider" / "runs" / run / "python-hello" / "result.json"
    assert path.is_file(), doit_failure(res)
    r = json.loads(path.read_text())
    log = (path.parent / "agent-1.log").read_text()[-2000:] if (path.parent / "agent-1.log").exists() else ""
    assert r["status"] in ("pass", "fail", "timeout"), (r.get("error"), log)
    gateway = r["tries"][0].get("gateway_usage") or {}
    assert gateway.get("requests", 0) >= 1 and gateway.get("tokens_sent", 0) > 0, (gateway, log)
    assert r["service"]["image"].startswith("lab/service-llama:"), r["service"]
    assert lab_containers(**{"lab.agent": "mini-swe-agent"}) == []


def test_a_local_table_gives_model_local_runs_a_budget_and_settings_of_their_own(tmp_path):
    """``[NAME.local]`` requests/tokens: the per-try budget at the gateway on a model=local run only (an agent
    looping against a model that never calls its finishing tool is stopped there), and settings: the values its
    other settings take on such a run unless the command line or their variable gives one."""
    extra = TOMO_LOCAL.replace('[tomo.settings]\nmodel = { env = "TOMO_MODEL" }\n',
                               '[tomo.settings]\nmodel = { env = "TOMO_MODEL" }\n'
                               'config = { env = "TOMO_CONFIG", default = "tools.yaml" }\n')
    extra += 'requests = 12\ntokens = 50000\nreply_tokens = 700\nsettings = { config = "text.yaml" }\n'
    tomo = load_agents(_with_tomo(tmp_path, extra))["tomo"]
    local = tomo.resolve({"model": "local"})
    assert local.budget == Budget(requests=12, tokens=50000, reply_tokens=700) and local.definition()["budget"] == {
        "requests": 12, "tokens": 50000, "reply_tokens": 700}
    assert "--requests 12 --tokens 50000 --reply-tokens 700" in " ".join(local.gateway.command)
    assert dict(local.values) == {"model": "local", "config": "text.yaml"} and local.run == "tomo.local.text.yaml"
    assert dict(tomo.resolve({"model": "local", "config": "mine.yaml"}).values)["config"] == "mine.yaml"
    assert dict(tomo.resolve({}, environ={"TOMO_MODEL": "local"}).values)["config"] == "text.yaml"
    from_env = tomo.resolve({}, environ={"TOMO_MODEL": "local", "TOMO_CONFIG": "env.yaml"})
    assert dict(from_env.values)["config"] == "env.yaml"
    remote = tomo.resolve({"model": "gpt-4o"})  # neither reaches a run against another model
    assert remote.budget == Budget() and dict(remote.values)["config"] == "tools.yaml"
    assert "budget" not in remote.definition()


def test_a_local_table_gives_model_local_runs_a_timeout_of_their_own(tmp_path):
    """``[NAME.local] timeout``: the seconds of a try on a model=local run (the local model answers on the
    machine's own CPU, far slower than a provider), in the run's definition; no other run of the agent gets it."""
    tomo = load_agents(_with_tomo(tmp_path, TOMO_LOCAL + "timeout = 2400\n"))["tomo"]
    local, remote = tomo.resolve({"model": "local"}), tomo.resolve({"model": "gpt-4o"})
    assert local.limits.timeout == 2400 and local.definition()["limits"]["timeout"] == 2400
    assert remote.limits.timeout == tomo.limits.timeout != 2400 and remote.limits == tomo.limits
    assert load_agents(_with_tomo(tmp_path, TOMO_LOCAL))["tomo"].resolve({"model": "local"}).limits == tomo.limits


@pytest.mark.parametrize("extra, message", [
    ('timeout = 0\n', "timeout must be a number of seconds above 0, got 0"),
    ('timeout = "long"\n', "timeout must be a number of seconds above 0, got 'long'"),
    ('requests = -1\n', "requests must be a whole number (0: no budget), got -1"),
    ('tokens = "many"\n', "tokens must be a whole number (0: no budget), got 'many'"),
    ('settings = { model = "x" }\n', "settings: model is not one of the agent's other settings (none)"),
    ('settings = { edit = "x" }\n', "settings: edit is not one of the agent's other settings (none)"),
])
def test_a_local_tables_budget_and_settings_are_checked(tmp_path, extra, message):
    with pytest.raises(AgentError, match=re.escape(message)):
        load_agents(_with_tomo(tmp_path, TOMO_LOCAL + extra))


def test_the_shipped_agents_run_on_the_local_model_with_a_budget_and_with_one_setting():
    """Every shipped agent with a [NAME.local] table has a per-try budget on model=local (cline looped 685
    requests in two minutes against a model that never called its finishing tool), and model=local alone is
    enough: mini-swe-agent takes its text-based config there (the local server answers tool calls with text)."""
    agents = load_agents(ROOT / "evals" / "agents.toml")  # as test_agents_scripted: the shipped tables themselves
    names = ("aider", "claude-code", "codex", "gemini-cli", "opencode", "qwen-code", "cline", "mini-swe-agent")
    local = {name: agents[name].resolve({"model": "local"}) for name in names}
    assert all(a.budget.requests > 0 and a.budget.reply_tokens > 0 for a in local.values()), {
        n: a.budget for n, a in local.items()}
    assert dict(local["mini-swe-agent"].values)["config"] == "mini_textbased.yaml"


def test_codex_on_the_local_model_waits_for_a_slow_first_answer():
    """codex drops a stream silent for 300 s (its stream_idle_timeout_ms) and sends the request again from the
    start; on a busy machine the local model's first answer took longer (2026-12-07): on model=local its config
    says a day, and the try's own timeout ends the try. Elsewhere it keeps codex's own 300 s."""
    from rules.config import ROOT

    codex = load_agents(ROOT / "evals" / "agents.toml")["codex"]
    local = codex.resolve({"model": "local"})
    assert dict(local.env_set)["CODEX_STREAM_IDLE_TIMEOUT_MS"] == "86400000"
    assert "CODEX_STREAM_IDLE_TIMEOUT_MS" not in dict(codex.resolve({"model": "gpt-4o"}).env_set)
    script = local.argv([])[-1]
    assert 'stream_idle_timeout_ms = %s' in script and '"${CODEX_STREAM_IDLE_TIMEOUT_MS:-300000}"' in script


def test_the_tests_run_the_local_model_that_ships():
    """tests/agents.toml is the tests' own copy of the shipped agents: its aider-local serves the local model as
    evals/agents.toml does (the server's command, image and build, the window aider is told, the gateway asked
    without streaming), so a test of the local model tests the one a user runs (the copy served 8,192 tokens
    after the shipped table went to 16,384, 2026-12-07)."""
    tests, shipped = load_agents(AGENTS)["aider-local"], load_agents(ROOT / "evals" / "agents.toml")["aider-local"]
    assert tests.service == shipped.service
    assert dict(tests.build)["context_tokens"] == dict(shipped.build)["context_tokens"] == "16384"
    served = shipped.service.argv()
    assert served[served.index("--n_ctx") + 1] == "16384" and served[served.index("--rope_freq_scale") + 1] == "0.5"
