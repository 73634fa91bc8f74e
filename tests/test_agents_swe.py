"""Every built-in agent on the swe tier (docker), end to end against the scripted model fixture
(tests/scripted_model/, a test fixture, not a model) behind lab's gateway, with no network: each agent's shipped
table from evals/agents.toml, its image built FROM the fixture instance's environment image (Debian with the
repository's own Python, 3.11, and its packages), its network a service namespace holding only the fixture and
the gateway. The fixture calls the agent's own writing tool with the instance's fix; the instance must be
resolved, and the agent must have run from its own prefix (/opt/lab/agents/<agent>/: its own Node or Python)
while no process ran the environment's Python: the agent's command is wrapped in a sampler that records the
executable of every process in its container while it runs."""
from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
from conftest import run_doit, write_suite  # noqa: E402
from fixture_swe import BASE, FIXED_SOURCE, make_calc, write_swe_suite  # noqa: E402
from fixture_upstream import make_upstream  # noqa: E402
from test_agents_scripted import GATEWAY, KEY, MODEL, REACH, SHIPPED, scripted_table  # noqa: E402

docker = pytest.mark.docker
TASK = "lab__calc-1"
# the agents REACH has, and the litellm-based ones that test_agents_scripted leaves to tests of their own
SWE_REACH = {**REACH,
             "aider": {"OPENAI_API_BASE": f"{GATEWAY}/v1", "OPENAI_API_KEY": KEY},
             "mini-swe-agent": {"OPENAI_API_BASE": f"{GATEWAY}/v1", "OPENAI_API_KEY": KEY}}
MODEL.update({"aider": "openai/scripted", "mini-swe-agent": "openai/scripted"})
AGENTS = sorted(SWE_REACH)
EXES = "0-lab-exes.txt"  # first in {out}'s sorted listing, so it is among the files a trial keeps
# sh -c SAMPLER sh OUT COMMAND...: runs COMMAND, and until it exits writes the executable of every process in the
# container (/proc/<pid>/exe) to OUT/0-lab-exes.txt, one a line, each once; exits with COMMAND's status
SAMPLER = r"""out=$1; shift
"$@" & p=$!
while [ -r /proc/$p/status ] && ! grep -q '^State:[[:space:]]*Z' /proc/$p/status; do
  for e in /proc/[0-9]*/exe; do readlink "$e"; done >> /tmp/lab-exes.raw 2>/dev/null; sleep 0.2
done
wait $p; s=$?; sort -u /tmp/lab-exes.raw > "$out/""" + EXES + """"; exit $s"""


def test_every_built_in_agent_but_noop_is_here():
    """A new agent in evals/agents.toml is run on the swe tier too (aider-local is aider against the local
    model, whose image is aider's)."""
    assert set(AGENTS) == {n for n, t in SHIPPED.items() if t.get("image") not in ("noop", "aider-local")}


def scripted_swe_table(agent: str, name: str, path: str, content: str, old: str) -> str:
    """``agent``'s shipped table as agent ``name``, answered by the scripted model fixture (it writes ``content``
    over ``old`` in ``path`` with the agent's own writing tool), its command wrapped in ``SAMPLER``."""
    command = ["sh", "-c", SAMPLER, "sh", "{out}", *SHIPPED[agent]["command"]]
    return scripted_table(agent, name, "solve", reach=SWE_REACH[agent], path=path, content=content, old=old,
                          command=command)


def assert_resolved_from_own_prefix(trial: Path, agent: str, res) -> None:
    """The trial in folder ``trial`` (a swe trial's record, ``res`` the doit run that made it) resolved its
    instance with tokens counted, and ``agent`` ran from its own prefix (/opt/lab/agents/<agent>/) while no
    Python outside that prefix ran."""
    r = json.loads((trial / "result.json").read_text())
    logs = "".join(p.read_text()[-2000:] for p in sorted(trial.glob("attempt-*/agent-*.log")))
    assert (r["status"], r["resolved"]) == ("pass", True), (r, logs, res.stdout[-2000:])
    assert r["usage"]["tokens_sent"] > 0, (r["usage"], logs)
    exes = [line for p in trial.glob(f"attempt-*/out-*/{EXES}") for line in p.read_text().splitlines()]
    assert exes, f"no {EXES} kept: {sorted(str(p.relative_to(trial)) for p in trial.rglob('*'))}"
    prefix = f"/opt/lab/agents/{agent}/"
    assert any(e.startswith(prefix) for e in exes), exes
    env_pythons = [e for e in exes if "python" in e.rsplit("/", 1)[-1] and not e.startswith(prefix)]
    assert not env_pythons, f"the environment's Python ran: {env_pythons}"


@pytest.fixture(scope="module")
def home(tmp_path_factory, grader_image) -> Path:
    """A lab home with the fixture swe tier generated (its environment image, its proof) and each agent's
    scripted table, ``<agent>-swe``."""
    root = tmp_path_factory.mktemp("agents-swe")
    make_calc(root / "src")
    home = root / "home"
    write_suite(home, make_upstream(root / "upstream"))
    write_swe_suite(home, root / "src")
    with open(home / "evals" / "agents.toml", "a") as f:
        for agent in AGENTS:
            f.write(scripted_swe_table(agent, f"{agent}-swe", "calc/__init__.py", FIXED_SOURCE,
                                       BASE["calc/__init__.py"]))
    res = run_doit(home, "gen:swe", timeout=1800)
    assert res.code == 0, res.stdout[-3000:] + res.stderr[-3000:]
    return home


@docker
@pytest.mark.parametrize("agent", AGENTS)
def test_it_resolves_the_instance_from_its_own_prefix_on_the_environment_image(home, agent):
    name = f"{agent}-swe"
    res = run_doit(home, "run", "suite=swe", f"agent={name}", "jobs=1", timeout=2400)
    # the run's folder is <name>.<model> (its model setting's value: runs/aider-swe.openai-scripted)
    found = list((home / "evals" / "swe" / "runs").glob(f"{name}.*/{TASK}/result.json"))
    assert len(found) == 1, (found, res.stdout[-3000:] + res.stderr[-3000:])
    assert_resolved_from_own_prefix(found[0].parent, agent, res)
