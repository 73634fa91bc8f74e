"""The trial seam (rules.backends): a trial as data, run here or on a node of a Ray cluster, written back by
the driver.

Without Docker: what crosses the seam (no host path, no secret in a repr or in what Ray stores), the task
folder round trip, how a record is written, the node check's messages. With Docker: a trial through the local
backend. With Docker and Ray (``pip install -e '.[ray]'``; skipped without it): Ray's in-process test cluster
with two nodes of one CPU each (labelled ``LAB_NODE=a`` and ``b``, bound to 127.0.0.1, token authentication
on), a ``noop`` run over the fixture tier through ``doit ... backend=ray`` that uses both nodes and gives the
local run's results, a node removed mid-run, and a key that reaches the node but no file. The cluster is
stopped by its own processes (``Cluster.shutdown``), never ``ray stop``.
"""
from __future__ import annotations

import json
import os
import pickle
import secrets
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import replace
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
from conftest import PROJECT, run_doit, write_suite  # noqa: E402
from fixture_swe import make_calc, write_swe_suite  # noqa: E402
from fixture_upstream import make_upstream  # noqa: E402
from test_swerun import BROKEN_MUL, _writes  # noqa: E402
from test_swerun import FIXED_SOURCE, TASK as SWE_TASK  # noqa: E402
from test_trial import GOOD, lab_containers, make_tier  # noqa: E402

docker = pytest.mark.docker
cluster = pytest.mark.cluster
TASKS = ["python-hello", "python-ledger", "python-thrice", "python-twice"]
SECRET = "sk-lab-" + secrets.token_hex(12)
BACKEND_AGENTS = f"""
[nap]
image = "noop"
command = ["sh", "-c", "sleep 8"]
[nap.limits]
cpus = 1
memory = "512m"

[keyed]
image = "noop"
command = ["sh", "-c", '''test -n "$LAB_TEST_API_KEY" || exit 3
echo "the key is $LAB_TEST_API_KEY"; echo "key=$LAB_TEST_API_KEY" > {{out}}/note.txt; {GOOD} > {{files}}''']
env = ["LAB_TEST_API_KEY"]
[keyed.limits]
cpus = 1
memory = "512m"
"""


# the swe tier's scripted agents (tests/test_swerun.py's), sized for a test node (one CPU, 3 GiB)
SWE_AGENTS = "".join(f"""
[{name}]
image = "noop"
command = ["sh", "-c", '''{_writes(source)}''']
network = "none"
[{name}.limits]
cpus = 1
memory = "512m"
""" for name, source in (("breaker", BROKEN_MUL), ("fixer", FIXED_SOURCE)))


def spec_for(tmp_path, env=None):
    from rules.agents import parse_agent
    from rules.backends import make_spec
    from rules.config import Limits
    from rules.trial import Trial

    task = tmp_path / "tasks" / "python-hello"
    (task / "workspace").mkdir(parents=True)
    (task / "prompt.txt").write_text("Do it.\n")
    (task / "setup.sh").write_text("#!/bin/sh\ncp -r \"$1\"/workspace/. \"$2\"\n")
    (task / "setup.sh").chmod(0o755)
    (task / "task.json").write_text('{"task": "python-hello", "solution_files": ["hello.py"]}\n')
    (task / "workspace" / "hello.py").write_text("def double(n):\n    pass\n")
    agent = parse_agent("keyed", {"image": "noop", "command": ["true"], "env": ["LAB_TEST_API_KEY"],
                                  "env_optional": ["LAB_MAYBE"]})
    t = Trial(agent=agent, task_dir=task, run_dir=tmp_path / "runs" / "keyed" / "python-hello",
              scratch=tmp_path / ".lab" / "trials" / "x", agent_image="lab/agent-keyed:latest",
              grader_image="lab/grader:latest", grade_limits=Limits(cpus=2, memory=1024**3), tries=2)
    environ = {"LAB_TEST_API_KEY": SECRET, "HOME": "/root", "OTHER_TOKEN": "not-the-agents"} if env is None else env
    return t, make_spec(t, {"agent": "sha256:aa", "grader": "sha256:gg"}, environ)


def test_a_spec_holds_no_host_path_and_shows_no_secret(tmp_path):
    t, spec = spec_for(tmp_path)
    assert spec.env == {"LAB_TEST_API_KEY": SECRET}, "only the variables the agent passes through travel"
    assert SECRET not in repr(spec) and SECRET not in str(spec)
    data = pickle.dumps(spec)
    assert str(tmp_path).encode() not in data, "no host path crosses the seam"
    assert SECRET.encode() not in pickle.dumps(replace(spec, env={})), "what Ray stores holds no key"
    assert spec.resources() == (2.0, 4 * 1024**3), "the larger of the agent's and the grader's limits"
    assert (spec.run, spec.repeat, spec.tries, spec.task) == ("keyed", 1, 2, "python-hello")


def test_the_task_folder_crosses_as_bytes_with_its_digest_and_exec_bits(tmp_path):
    from rules.backends import pack_folder, unpack_folder
    from rules.trial import task_digest

    t, spec = spec_for(tmp_path)
    assert pack_folder(t.task_dir) == spec.task_files, "one folder, one byte string"
    unpack_folder(spec.task_files, tmp_path / "there")
    assert task_digest(tmp_path / "there") == task_digest(t.task_dir)
    assert os.access(tmp_path / "there" / "setup.sh", os.X_OK)


def test_a_record_is_written_whole_with_its_node_and_result_last(tmp_path):
    from rules.backends import BackendError, TrialRecord, write_record

    run_dir = tmp_path / "runs" / "noop" / "python-hello"
    run_dir.mkdir(parents=True)
    (run_dir / "agent-2.log").write_text("from an older trial\n")
    rec = TrialRecord(result={"status": "fail", "task": "python-hello"},
                      files={"agent-1.log": b"hi\n", "out-1/usage.json": b"{}", "work-1.tar.gz": b"\x1f\x8b"},
                      node="b")
    r = write_record(run_dir, rec, "ray")
    assert r["backend"] == {"name": "ray", "node": "b"}
    assert json.loads((run_dir / "result.json").read_text()) == r
    assert sorted(p.relative_to(run_dir).as_posix() for p in run_dir.rglob("*") if p.is_file()) == [
        "agent-1.log", "out-1/usage.json", "result.json", "work-1.tar.gz"], "the old folder is replaced whole"
    assert not list(run_dir.parent.glob(".*")), "no staging folder left"
    with pytest.raises(BackendError, match="outside"):
        write_record(run_dir, TrialRecord(result={}, files={"../../evil": b"x"}, node="b"), "ray")
    assert not (tmp_path / "runs" / "evil").exists() and (run_dir / "result.json").is_file()


def test_the_node_check_names_each_node_that_cannot_serve_and_the_fix():
    from rules.backends import check_reports

    want = {"lab/grader:latest": "sha256:" + "1" * 64, "lab/agent-noop:latest": "sha256:" + "2" * 64}
    good = {"node": "a", "host": "h1", "lab_version": "0.1.0+abc", "engine": "", "images": dict(want)}
    assert check_reports([good], want, "0.1.0+abc") == []
    assert check_reports([{**good, "images": {}}], {t: "" for t in want}, "0.1.0+abc") == [], \
        "an image missing here too is each trial's error, as in a local run"
    bad = [good,
           {**good, "node": "b", "images": {**want, "lab/grader:latest": None}},
           {**good, "node": "c", "images": {**want, "lab/agent-noop:latest": "sha256:" + "3" * 64}},
           {**good, "node": "d", "lab_version": "0.1.0+old"},
           {**good, "node": "e", "engine": "no Docker engine answers (...)"},
           {"node": "f", "error": "node died"}]
    problems = check_reports(bad, want, "0.1.0+abc")
    assert [p.split(":")[0].split(" (")[0] for p in problems] == ["node b", "node c", "node d", "node e", "node f"]
    assert "lab/grader:latest is missing" in problems[0] and "docker save lab/grader:latest" in problems[0]
    assert "docker load" in problems[1] and "another build" in problems[1]
    assert "install this lab there" in problems[2]
    assert "no Docker engine" in problems[3]


class FakeBackend:
    """A backend whose executor returns ``record`` or raises ``error`` (no Docker, no cluster)."""

    name = "fake"

    def __init__(self, record=None, error=None):
        self.record, self.error = record, error

    def submit(self, spec):
        import concurrent.futures

        f = concurrent.futures.Future()
        f.set_exception(self.error) if self.error else f.set_result(self.record(spec))
        return f


def test_a_trial_whose_executor_never_answers_is_an_infrastructure_error(tmp_path, monkeypatch):
    from rules import backends
    from rules.trial import trial_state

    t, _ = spec_for(tmp_path)
    monkeypatch.setattr(backends, "_image_id", lambda tag: "sha256:x")
    monkeypatch.setattr(backends, "get_backend", lambda *a: FakeBackend(error=RuntimeError("node 9 died, twice")))
    r = backends.run_through(t, "fake", environ={"LAB_TEST_API_KEY": SECRET})
    assert (r["status"], r["error_kind"], r["backend"]["name"]) == ("error", "infrastructure", "fake")
    assert "node 9 died, twice" in r["error"] and r["tries"] == [] and r["task"] == "python-hello"
    assert json.loads((t.run_dir / "result.json").read_text()) == r
    assert trial_state(r, t, "sha256:x") == "rerun", "the next run redoes it"


def test_a_record_from_a_node_that_saw_another_trial_is_not_counted(tmp_path, monkeypatch):
    from rules import backends

    t, _ = spec_for(tmp_path)
    monkeypatch.setattr(backends, "_image_id", lambda tag: "sha256:x")
    other = {**t.run_key(), "task_digest": "0" * 64}
    record = lambda spec: backends.TrialRecord(result={"status": "pass", "key": {"run": other}, "error": None},
                                               files={"agent-1.log": b"ok"}, node="b")
    monkeypatch.setattr(backends, "get_backend", lambda *a: FakeBackend(record=record))
    r = backends.run_through(t, "fake", environ={"LAB_TEST_API_KEY": SECRET})
    assert (r["status"], r["error_kind"]) == ("error", "infrastructure") and "node b saw another trial" in r["error"]
    assert r["backend"] == {"name": "fake", "node": "b"}


class NodesBackend:
    """A cluster of nodes that each hold some images: ``on_each_node`` runs the real ``node_report`` as it would
    run there, seeing that node's images only (no Docker, no cluster)."""

    name = "ray"

    def __init__(self, held: dict[str, dict[str, str]]):
        self.held = held  # node -> {tag: id}

    def install(self, monkeypatch):
        from rules import backends, sandbox

        node = {"name": ""}
        monkeypatch.setattr(backends, "node_name", lambda: node["name"])
        monkeypatch.setattr(backends, "clean_scratch", lambda root=None: 0)
        monkeypatch.setattr(sandbox, "client", lambda: None)
        monkeypatch.setattr(sandbox, "cleanup", lambda only_dead_owners=True: 0)
        monkeypatch.setattr(sandbox, "image_id", lambda tag: self.held[node["name"]].get(tag))
        monkeypatch.setattr(sandbox, "image_labels", lambda tag: {})
        monkeypatch.setattr(backends.RayBackend, "connect", lambda b: None)
        calls = []

        def on_each_node(b, fn):
            calls.append(1)
            out = {}
            for name in self.held:
                node["name"] = name
                out[name] = fn()
            return out

        monkeypatch.setattr(backends.RayBackend, "on_each_node", on_each_node)
        monkeypatch.setattr(backends, "_open", {})
        return calls


def test_every_node_is_checked_for_every_image_of_the_run_before_the_first_trial(tmp_path, monkeypatch):
    """The swe tier's node check covers each published task's environment image and each agent's image on it,
    not only the first trial's; a node lacking one stops the command in one line naming it, the image and the
    fix; a node holding them all serves, and the trials' own lookups ask the nodes nothing more."""
    from types import SimpleNamespace

    from rules import backends
    from rules.agents import parse_agent
    from rules.tiers.swe import _run_images

    tasks = tmp_path / "tasks"
    for task, env in (("a__x-1", "x-1.0"), ("a__x-2", "x-1.0"), ("b__y-1", "y-2.0")):
        (tasks / task).mkdir(parents=True)
        (tasks / task / "task.json").write_text(json.dumps({"image": f"lab/swe-env:{env}"}))
    agent = parse_agent("fixer", {"image": "noop", "command": ["true"]})
    ctx = SimpleNamespace(tasks=sorted(p.name for p in tasks.iterdir()), suite=SimpleNamespace(tasks_dir=tasks))
    tags = _run_images(ctx, [agent])
    assert tags == ["lab/swe-env:x-1.0", "lab/swe-env:y-2.0", agent.tag("lab/swe-env:x-1.0"),
                    agent.tag("lab/swe-env:y-2.0")]
    ids = {tag: "sha256:" + str(i) * 64 for i, tag in enumerate(tags)}
    monkeypatch.setattr(backends, "_ids", dict(ids))
    lacking = {k: v for k, v in ids.items() if k != agent.tag("lab/swe-env:y-2.0")}  # the last task's agent image
    NodesBackend({"a": dict(ids), "b": lacking}).install(monkeypatch)
    with pytest.raises(backends.BackendError) as err:
        backends.check_nodes("ray", "127.0.0.1:1", tags)
    message = str(err.value)
    assert "\n" not in message, "one line"
    assert message.startswith("a node cannot serve trials: node b") and \
        f"image {agent.tag('lab/swe-env:y-2.0')} is missing" in message
    assert f"docker save {agent.tag('lab/swe-env:y-2.0')} | ssh <b> docker load" in message
    assert "node a " not in message and "node a:" not in message

    later = {"lab/swe-env:z-3.0": "sha256:" + "9" * 64}  # built after the check, for a later trial
    calls = NodesBackend({"a": {**ids, **later}, "b": {**ids, **later}}).install(monkeypatch)
    backends.check_nodes("ray", "127.0.0.1:1", tags)
    assert backends.get_backend("ray", "127.0.0.1:1", {tags[1]: ids[tags[1]], tags[3]: ids[tags[3]]}).nodes == ["a", "b"]
    assert len(calls) == 1, "an image every node was found to hold is not looked up again"
    backends.get_backend("ray", "127.0.0.1:1", later)
    assert len(calls) == 2, "an image no check covered is checked on every node before its first trial"


def test_a_node_lacking_several_images_is_one_line_naming_them(monkeypatch):
    from rules.backends import check_reports

    want = {f"lab/swe-env:{v}": "sha256:" + str(i) * 64 for i, v in enumerate(("a-1", "b-2", "c-3"))}
    report = {"node": "b", "lab_version": "v", "engine": "", "images": {"lab/swe-env:a-1": want["lab/swe-env:a-1"]}}
    problems = check_reports([report], want, "v")
    assert problems == ["node b: 2 images are missing (lab/swe-env:b-2, lab/swe-env:c-3): `docker save "
                        "lab/swe-env:b-2 lab/swe-env:c-3 | ssh <b> docker load` from this machine (the same id there), "
                        "or build them on that node and on this one from the same lab"]


def test_scratch_folders_of_dead_executors_are_removed_and_live_ones_kept(tmp_path):
    from rules.backends import OWNER, clean_scratch
    from rules.files import write_json
    from rules.sandbox import run_labels

    dead = subprocess.Popen(["true"])
    dead.wait()
    here = run_labels()
    for name, labels in (("gone", {**here, "lab.pid": str(dead.pid)}), ("live", here)):
        base = tmp_path / "noop" / f"python-{name}.0123456789ab"
        (base / "scratch" / "work").mkdir(parents=True)
        write_json(base / OWNER, labels)
    (tmp_path / "noop" / "python-older").mkdir()  # no owner file: not provably gone, left alone
    assert clean_scratch(tmp_path) == 1
    assert sorted(p.name for p in (tmp_path / "noop").iterdir()) == ["python-live.0123456789ab", "python-older"]


def test_backend_variables_are_known_and_checked(lab_home):
    from rules.agents import LAB_VARIABLES

    assert {"backend", "cluster"} <= set(LAB_VARIABLES)
    res = run_doit(lab_home, "list", "backend=nope")
    assert res.code != 0 and "backend=nope: unknown; give one of local, ray" in res.stderr + res.stdout
    res = run_doit(lab_home, "list", "backend=ray")
    assert res.code != 0 and "backend=ray needs cluster=HOST:PORT" in res.stderr + res.stdout


# ---- Docker ----

def make_home(base: Path) -> Path:
    home = base / "home"
    make_tier(home)
    with open(home / "evals" / "agents.toml", "a") as f:
        f.write(BACKEND_AGENTS)
    return home


@pytest.fixture(scope="module")
def homes(tmp_path_factory, grader_image) -> tuple[Path, Path]:
    """Two lab homes with the fixture tier and the test agents (one for local runs, one for the cluster),
    their images built through doit."""
    out = []
    for name in ("local", "cluster"):
        home = make_home(tmp_path_factory.mktemp(name))
        res = run_doit(home, "agent_image:noop", "agent_image:nap", "agent_image:keyed", "jobs=1", timeout=1200)
        assert res.code == 0, res.stdout[-2000:] + res.stderr[-2000:]
        out.append(home)
    return out[0], out[1]


def results(home: Path, run: str) -> dict[str, dict]:
    runs = home / "evals" / "aider" / "runs" / run
    return {p.parent.name: json.loads(p.read_text()) for p in sorted(runs.glob("*/result.json"))}


def outcome(r: dict) -> tuple:
    """What must not depend on where a trial ran."""
    return (r["status"], r["passed_try"], r["tests"], [t["outcome"] for t in r["tries"]], r["key"], r["error"])


def files_holding(root: Path, text: str) -> list[str]:
    needle = text.encode()
    found = []
    for folder, _dirs, names in os.walk(root):  # a folder that vanishes while walked is passed over
        for name in names:
            p = Path(folder) / name
            try:
                if p.is_file() and not p.is_symlink() and needle in p.read_bytes():
                    found.append(str(p))
            except OSError:
                pass
    return found


@docker
def test_a_trial_through_the_local_backend_keeps_the_key_out_of_every_file(homes):
    from rules import images
    from rules.agents import load_agents
    from rules.backends import run_through
    from rules.config import Limits
    from rules.trial import Trial, trial_state

    home = homes[0]
    agent = load_agents(home / "evals" / "agents.toml")["keyed"]
    tier = home / "evals" / "aider"
    t = Trial(agent=agent, task_dir=tier / "tasks" / "python-hello", run_dir=tier / "runs" / "keyed" / "python-hello",
              scratch=home / ".lab" / "unused", agent_image=agent.tag(images.GRADER), grader_image=images.GRADER,
              grade_limits=Limits(cpus=1, memory=1024**3, pids=256, timeout=60), tries=2)
    r = run_through(t, "local", environ={"LAB_TEST_API_KEY": SECRET})
    assert (r["status"], r["passed_try"]) == ("pass", 1), r
    assert r["backend"]["name"] == "local" and r["backend"]["node"]
    assert "the key is ***" in (t.run_dir / "agent-1.log").read_text(), "the key reached the agent, redacted"
    assert (t.run_dir / "out-1" / "note.txt").read_text() == "key=***\n"
    assert (t.run_dir / "work-1.tar.gz").is_file() and "return number * 2" in (t.run_dir / "work.diff").read_text()
    assert trial_state(json.loads((t.run_dir / "result.json").read_text()), t) == "current"
    assert files_holding(home, SECRET) == []
    assert not (home / ".lab" / "unused").exists()


# ---- a two-node Ray cluster on this machine ----

@pytest.fixture(scope="module")
def ray_cluster():
    """Ray's in-process test cluster: head ``a`` and node ``b``, one CPU each, on 127.0.0.1 only, token
    authentication on, usage stats off, its files in a private temp folder. Yields (cluster, node b, env for
    the drivers, temp folder). Stopped by its own processes, and checked gone, even when a test fails."""
    import importlib.util

    from rules.sandbox.owners import _process_start

    if importlib.util.find_spec("ray") is None:
        pytest.skip("Ray is not installed: `pip install -e '.[test,ray]'` (.ci/setup does)")

    tmp = tempfile.mkdtemp(prefix="lab-ray-", dir="/tmp")  # short: Ray's socket paths must stay < 108 bytes
    env = {"RAY_USAGE_STATS_ENABLED": "0", "RAY_AUTH_MODE": "token", "RAY_AUTH_TOKEN": secrets.token_hex(32),
           "RAY_TMPDIR": tmp,
           # one machine: Ray binds to 127.0.0.1 (and reads it as such) only in its single-host mode
           "RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER": "0"}
    saved = {k: os.environ.get(k) for k in env}
    os.environ.update(env)  # before Ray is imported: it reads its settings once
    from ray.cluster_utils import Cluster

    c = None
    pids: list[int] = []
    try:
        node = dict(num_cpus=1, memory=3 * 1024**3, object_store_memory=100 * 1024**2, node_ip_address="127.0.0.1")
        # each node keeps its state (scratch folders, the swe tier's pre-existing test baselines) in a lab home
        # of its own, never the project's
        c = Cluster(initialize_head=True, head_node_args=dict(include_dashboard=False, env_vars={
            "LAB_NODE": "a", "LAB_HOME": f"{tmp}/node-a"}, **node))
        b = c.add_node(env_vars={"LAB_NODE": "b", "LAB_HOME": f"{tmp}/node-b"}, **node)
        c.wait_for_nodes()
        pids = [p.process.pid for n in c.list_all_nodes() for ps in n.all_processes.values() for p in ps]
        yield c, b, {**os.environ, **env}, Path(tmp)
    finally:
        if c is not None:
            c.shutdown()  # its own processes only; never `ray stop` (every Ray process on the machine)
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
        deadline = time.time() + 30
        while time.time() < deadline and [p for p in pids if _process_start(p)]:
            time.sleep(0.2)
        left = [p for p in pids if _process_start(p)]
        shutil.rmtree(tmp, ignore_errors=True)
        assert not left, f"Ray processes left running: {left}"


def node_containers(agent: str, tmp: Path) -> list[str]:
    """The containers of ``agent`` started by a process of this test cluster (its environment holds the
    cluster's RAY_TMPDIR; other helpers on a shared engine may run an agent of the same name)."""
    out = subprocess.run(["docker", "ps", "-a", "--filter", f"label=lab.agent={agent}", "--format",
                          '{{.ID}} {{.Label "lab.pid"}}'], capture_output=True, text=True).stdout.split("\n")
    mine = []
    for line in filter(None, out):
        cid, _, pid = line.partition(" ")
        try:
            env = Path(f"/proc/{pid}/environ").read_bytes()
        except OSError:  # its owner is gone: counted (a dead trial of ours would be)
            mine.append(cid)
            continue
        if f"RAY_TMPDIR={tmp}".encode() in env:
            mine.append(cid)
    return mine


def doit_on(home: Path, env: dict, *args: str, timeout: float = 900) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "doit", "-f", str(PROJECT / "dodo.py"), *args], cwd=PROJECT,
                          env={**env, "LAB_HOME": str(home)}, capture_output=True, text=True, timeout=timeout)


@docker
@cluster
def test_a_noop_run_uses_both_nodes_and_gives_the_local_results(ray_cluster, homes):
    c, _b, env, tmp = ray_cluster
    local_home, home = homes
    proc = doit_on(home, env, "eval:noop", "backend=ray", f"cluster={c.address}", "jobs=4")
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    assert "2 nodes can serve (a, b)" in proc.stdout, proc.stdout[-2000:]
    on_ray = results(home, "noop")
    assert sorted(on_ray) == TASKS
    assert {r["backend"]["node"] for r in on_ray.values()} == {"a", "b"}, "both nodes ran trials"
    assert all(r["backend"]["name"] == "ray" for r in on_ray.values())
    local = doit_on(local_home, dict(os.environ), "eval:noop", "jobs=2")
    assert local.returncode == 0, local.stdout[-3000:] + local.stderr[-3000:]
    here = results(local_home, "noop")
    assert {t: outcome(r) for t, r in on_ray.items()} == {t: outcome(r) for t, r in here.items()}
    assert on_ray["python-ledger"]["status"] == "pass" and on_ray["python-hello"]["status"] == "fail"
    for task in TASKS:
        folder = home / "evals" / "aider" / "runs" / "noop" / task
        assert sorted(p.name for p in folder.iterdir()) == sorted(
            p.name for p in (local_home / "evals" / "aider" / "runs" / "noop" / task).iterdir())
    assert node_containers("noop", tmp) == [], "no container left"
    again = doit_on(home, env, "eval:noop", "backend=ray", f"cluster={c.address}", "jobs=4")
    assert again.returncode == 0, again.stdout[-2000:] + again.stderr[-2000:]
    assert not [ln for ln in again.stdout.splitlines() if ln.startswith(".  eval:noop/")], "finished trials stay"


@docker
@cluster
def test_an_agent_key_reaches_the_node_but_no_file_or_log(ray_cluster, homes):
    c, _b, env, tmp = ray_cluster
    home = homes[1]
    proc = doit_on(home, {**env, "LAB_TEST_API_KEY": SECRET}, "eval:keyed/python-hello", "backend=ray",
                   f"cluster={c.address}", "jobs=2")
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    r = results(home, "keyed")["python-hello"]
    assert (r["status"], r["backend"]["name"]) == ("pass", "ray"), r
    assert SECRET not in proc.stdout + proc.stderr
    assert files_holding(home, SECRET) == [], "no file of the run holds the key"
    assert files_holding(tmp, SECRET) == [], "no file or log of the Ray cluster holds the key"
    assert files_holding(PROJECT / ".lab" / "trials", SECRET) == []
    assert any((tmp / f"node-{n}" / ".lab" / "trials" / "keyed").is_dir() for n in "ab"), \
        "the nodes keep their scratch in their own homes"


# ---- the swe tier on the cluster ----

@pytest.fixture(scope="module")
def swe_home(tmp_path_factory):
    """A lab home with the fixture swe tier generated (its environment image, its proof) and the scripted agents
    of tests/test_swerun.py."""
    root = tmp_path_factory.mktemp("swe-ray")
    make_calc(root / "src")
    home = root / "home"
    write_suite(home, make_upstream(root / "upstream"))
    write_swe_suite(home, root / "src")
    agents = home / "evals" / "agents.toml"
    agents.write_text(agents.read_text() + SWE_AGENTS)
    res = run_doit(home, "gen:swe")
    assert res.code == 0, res.stdout[-3000:] + res.stderr[-3000:]
    return home


@docker
@cluster
def test_a_swe_run_checks_every_node_first_and_measures_each_attempt_where_it_ran(ray_cluster, swe_home):
    c, _b, env, tmp = ray_cluster
    run = "breaker+fixer.x2"
    proc = doit_on(swe_home, env, "run", "suite=swe", "agents=breaker,fixer", "attempts=2", "backend=ray",
                   f"cluster={c.address}", "jobs=2")
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    lines = proc.stdout.splitlines()
    assert "2 nodes can serve (a, b)" in proc.stdout, proc.stdout[-2000:]
    check = lines.index(f".  eval:{run}:nodes")
    assert check < lines.index(f".  eval:{run}/{SWE_TASK}"), "the nodes are checked before the first trial"
    folder = swe_home / "evals" / "swe" / "runs" / run / SWE_TASK
    r = json.loads((folder / "result.json").read_text())
    assert [a["plausible"] for a in r["attempts"]] == [False, True]
    assert r["attempts"][0]["broken"] == ["tests.test_calc::test_mul"], "attempt 1 broke a pre-existing test"
    assert (r["chosen"], r["resolved"]) == (1, True)
    ran = [json.loads((folder / f"attempt-{n}" / "result.json").read_text())["backend"] for n in (1, 2)]
    assert {b["name"] for b in ran} == {"ray"} and {b["node"] for b in ran} <= {"a", "b"}
    # the pre-existing tests ran where each attempt ran: its baseline is kept in that node's home, not here
    assert not (swe_home / ".lab" / "swe" / "pretest" / f"{SWE_TASK}.json").exists(), "the driver ran no test"
    for b in ran:
        assert (tmp / f"node-{b['node']}" / ".lab" / "swe" / "pretest" / f"{SWE_TASK}.json").is_file()
    assert "+    return a + b" in (folder / "patch.diff").read_text()
    again = doit_on(swe_home, env, "run", "suite=swe", "agents=breaker,fixer", "attempts=2", "backend=ray",
                    f"cluster={c.address}")
    assert again.returncode == 0, again.stdout[-2000:] + again.stderr[-2000:]
    assert f".  eval:{run}:nodes" not in again.stdout, "nothing to run: no cluster is asked"


# ---- last: it removes node b from the cluster ----

@docker
@cluster
def test_a_node_removed_mid_run_still_gives_every_result(ray_cluster, homes):
    from rules import sandbox

    c, b, env, _tmp = ray_cluster
    home = homes[1]
    cmd = [sys.executable, "-m", "doit", "-f", str(PROJECT / "dodo.py"), "eval:nap", "backend=ray",
           f"cluster={c.address}", "jobs=4"]
    proc = subprocess.Popen(cmd, cwd=PROJECT, env={**env, "LAB_HOME": str(home)}, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.time() + 300
        while time.time() < deadline and len(lab_containers(**{"lab.agent": "nap"})) < 2:
            time.sleep(0.3)
        assert len(lab_containers(**{"lab.agent": "nap"})) >= 2, "both nodes were running a trial"
        c.remove_node(b, allow_graceful=False)  # node b dies with its trial
        out, err = proc.communicate(timeout=600)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 0, out[-3000:] + err[-3000:]
    got = results(home, "nap")
    assert sorted(got) == TASKS, "every result"
    assert {t: r["status"] for t, r in got.items()} == {t: "pass" if t == "python-ledger" else "fail" for t in TASKS}
    assert {r["backend"]["node"] for r in got.values()} == {"a"}, "the lost trial ran again on a"
    deadline = time.time() + 60
    while time.time() < deadline and lab_containers(**{"lab.agent": "nap"}):
        sandbox.cleanup(only_dead_owners=True)  # what the next run's node check does on every node
        time.sleep(1)
    assert lab_containers(**{"lab.agent": "nap"}) == [], "the dead trial's container is cleaned"
    from rules.backends import clean_scratch

    for node in ("a", "b"):  # the node check does this on every node too
        clean_scratch(_tmp / f"node-{node}" / ".lab" / "trials")
        assert not list((_tmp / f"node-{node}" / ".lab" / "trials" / "nap").glob("*")), "no scratch folder left"
