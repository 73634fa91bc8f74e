"""A runaway agent (issue 18, item 7): a try that goes over its budget of model requests at lab's gateway ends
then, not at its wall-clock timeout, with an outcome of its own (``over_budget``): not a timeout, not an
error. Without Docker: the outcome and status rules and the report's words. With Docker (the real engine, no
network): a fixture agent that never stops asking, against the scripted model fixture in its ``never-finish``
mode (every reply calls the writing tool again), behind lab's gateway."""
from __future__ import annotations

import json
import sys
import time
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
from conftest import run_doit  # noqa: E402
from fixture_upstream import STUB_PY  # noqa: E402
from test_trial import make_tier, trial  # noqa: E402

from rules.report import _counts, cell, finished, word_short  # noqa: E402
from rules.trial import FINISHED, trial_status, try_outcome  # noqa: E402

FIXTURE = Path(__file__).resolve().parent / "scripted_model"


def test_a_try_over_its_budget_is_over_budget_unless_its_work_passes():
    failed, passed = {"passed": False, "verdict": "fail"}, {"passed": True, "verdict": "pass"}
    assert try_outcome(failed, timed_out=False, over_budget=True) == "over_budget"
    assert try_outcome(failed, timed_out=True, over_budget=True) == "over_budget"  # the budget ended it
    assert try_outcome(None, timed_out=False, over_budget=True) == "over_budget"  # not graded (e.g. a huge tree)
    assert try_outcome(passed, timed_out=False, over_budget=True) == "pass"
    assert try_outcome({"passed": False, "verdict": "tampered"}, False, True) == "tampered"
    assert try_outcome(failed, timed_out=True) == "timeout" and try_outcome(failed, False) == "fail"


def test_a_trial_whose_last_try_went_over_budget_is_over_budget_and_finished():
    assert trial_status([{"outcome": "fail"}, {"outcome": "over_budget"}]) == "over_budget"
    assert trial_status([{"outcome": "over_budget"}, {"outcome": "fail"}]) == "fail"
    assert trial_status([{"outcome": "over_budget"}, {"outcome": "pass"}]) == "pass"
    assert "over_budget" in FINISHED  # finished like a timeout: never retried as an error
    word = cell({"status": "over_budget", "tries": []})
    assert word == "over_budget" and finished(word) and word_short(word) == "BUD"
    counts = _counts(["over_budget", "timeout", "fail", "error:agent"])
    assert counts["over_budget"] == 1 and counts["timeouts"] == 1 and counts["errors"] == 1
    assert counts["finished"] == 3


# ---- Docker: a runaway agent against the scripted model, behind the gateway ----

# The fixture agent: asks the model again and again, forever, whatever it is answered (a refusal too: it
# waits a second and asks again), writes each file the model's tool call gives, and reports its own tokens in
# /lab/out/usage.json after each answer. Only lab can end it: at its budget, or at its timeout.
RUNAWAY = r"""
import json, time, urllib.error, urllib.request
tools = [{"type": "function", "function": {"name": "lab_fixture_write", "parameters": {"type": "object",
          "properties": {"path": {"type": "string"}, "content": {"type": "string"}}}}}]
messages = [{"role": "user", "content": open("/lab/in/prompt.txt").read()}]
sent = received = 0
while True:
    body = json.dumps({"model": "scripted", "messages": messages, "tools": tools}).encode()
    request = urllib.request.Request("http://127.0.0.1:4000/v1/chat/completions", body,
                                     {"Content-Type": "application/json", "Authorization": "Bearer sk-lab-gateway"})
    try:
        answer = json.load(urllib.request.urlopen(request, timeout=60))
    except urllib.error.HTTPError as exc:
        print("runaway: refused", exc.code, exc.read()[:200], flush=True)
        time.sleep(1)
        continue
    sent, received = sent + answer["usage"]["prompt_tokens"], received + answer["usage"]["completion_tokens"]
    json.dump({"tokens_sent": sent, "tokens_received": received}, open("/lab/out/usage.json", "w"))
    message = answer["choices"][0]["message"]
    messages.append(message)
    for call in message.get("tool_calls") or []:
        arguments = json.loads(call["function"]["arguments"])
        open(arguments["path"], "w").write(arguments["content"])
        messages.append({"role": "tool", "tool_call_id": call["id"], "content": "written"})
    print("runaway: answered", flush=True)
"""
# The same, reporting no tokens of its own and printing each refusal as litellm names a provider's refusal of a
# request (aider's error table reads it as a provider error of kind "model"): what an agent that had its answers
# prints when its budget is spent must not make the try one that never had a chance.
MUTE = (RUNAWAY.replace('    json.dump({"tokens_sent": sent, "tokens_received": received}, open("/lab/out/usage.json", "w"))\n', "")
        .replace('print("runaway: refused", exc.code', 'print("litellm.BadRequestError: refused", exc.code'))
TIMEOUT = 600  # the try's wall-clock limit, far above what its budget should take


def runaway_table(name: str, requests: int, code: str = RUNAWAY, errors: str | None = None) -> str:
    script = {"mode": "never-finish", "path": "twice.py", "content": STUB_PY}  # the stub again: never passes
    server = ["python3", "/opt/lab/scripted/server.py", "--port", "{port}", "--script", json.dumps(script)]
    return (f'\n[{name}]\nimage = "noop"\ncommand = {json.dumps(["python3", "-c", code])}\nnetwork = "service"\n'
            + (f'errors = "{errors}"\n' if errors else "") + f'[{name}.limits]\ncpus = 1\nmemory = "512m"\npids = 64\ntimeout = {TIMEOUT}\nrequests = {requests}\n'
            f'[{name}.service]\nimage = {json.dumps(str(FIXTURE / "scripted.Dockerfile.j2"))}\n'
            f'command = {json.dumps(server)}\nport = 8080\n[{name}.gateway]\nmodel = "scripted"\n')


@pytest.fixture(scope="module")
def home(tmp_path_factory, grader_image) -> Path:
    from rules.agents import load_agents

    home = tmp_path_factory.mktemp("budget") / "home"
    make_tier(home)
    with open(home / "evals" / "agents.toml", "a") as f:
        f.write(runaway_table("runaway", requests=3) + runaway_table("runaway-mute", 2, MUTE, errors="aider"))
    agents = load_agents(home / "evals" / "agents.toml")
    images = {t for n in ("runaway", "runaway-mute") for t in [f"agent_image:{n}", *agents[n].service_images()]}
    res = run_doit(home, *sorted(images), "jobs=1", timeout=1800)
    assert res.code == 0, res.stderr[-3000:] + res.stdout[-2000:]
    return home


@pytest.mark.docker
def test_a_runaway_agent_ends_at_its_budget_not_its_timeout_and_is_over_budget(home):
    start = time.monotonic()
    r = trial(home, "runaway", "python-twice", tries=2)
    seconds = time.monotonic() - start
    assert r["status"] == "over_budget", r
    assert seconds < TIMEOUT / 2, seconds  # each try ended at its budget, long before its timeout
    assert len(r["tries"]) == 2  # as after a timeout, the next try follows, with a budget of its own
    for t in r["tries"]:
        gw, agent = t["gateway_usage"], t["agent"]
        assert t["outcome"] == "over_budget" and agent["stopped"] == "over its requests budget", t
        assert not agent["timed_out"] and agent["exit_code"] is None and agent["seconds"] < TIMEOUT / 4, agent
        # the gateway answered exactly the budget and refused what came after
        assert gw["requests"] == 3 and gw["failed"] == 0 and gw["refused"] >= 1 and gw["over_budget"] == "requests"
        # its own count beside the agent's: the agent's three answers are the gateway's three
        assert t["usage"]["tokens_sent"] == gw["tokens_sent"] > 0, (t["usage"], gw)
        assert t["usage"]["tokens_received"] == gw["tokens_received"] > 0, (t["usage"], gw)
        assert t["grade"] is not None and not t["grade"]["passed"]  # graded as its work tree was
        assert "lab ended the agent" in t["note"] and "over its requests budget" in t["note"], t["note"]
    assert r["tries"][1]["agent"]["fresh_container"] and "budget" in r["tries"][1]["note"]


@pytest.mark.docker
def test_an_agent_that_prints_its_refusals_as_provider_errors_is_over_budget_not_an_error(home):
    assert MUTE != RUNAWAY and "usage.json" not in MUTE
    r = trial(home, "runaway-mute", "python-twice", tries=1)
    assert r["status"] == "over_budget" and "litellm.BadRequestError" in (
        home / "evals" / "aider" / "runs" / "runaway-mute" / "python-twice" / "agent-1.log").read_text(), r
    assert r["tries"][0]["gateway_usage"]["requests"] == 2 and r["tries"][0]["usage"] is None


@pytest.mark.docker
def test_the_report_and_the_trial_page_say_over_budget(home):
    res = run_doit(home, "report", timeout=600)
    assert res.code == 0, res.stderr[-2000:]
    tier = home / "evals" / "aider"
    report = json.loads((tier / "report.json").read_text())
    row = next(a for a in report["agents"] if a["run"] == "runaway")
    assert row["over_budget"] == 1 and row["timeouts"] == 0 and row["errors"] == 0, row
    assert next(m for m in report["matrix"] if m["task"] == "python-twice")["outcomes"]["runaway"] == "over_budget"
    assert "| timeouts / over budget |" in (tier / "report.md").read_text()
    pages = [p for p in tier.rglob("*.html") if "runaway" in str(p) and "twice" in str(p)]
    assert pages, sorted(str(p) for p in tier.rglob("*.html"))
    assert any("ended: over its requests budget" in p.read_text() for p in pages), pages
