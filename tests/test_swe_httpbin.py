"""The local httpbin of the requests environments (``rules/tiers/swe/envs/requests.py``): a grading's container has
no network, and the server on its loopback, started by root as ``nobody`` before any graded code runs, is what the
tests' ``HTTPBIN_URL`` names. A fixture repository made at test time (a package whose ``status`` of a URL is wrong
for an error status; its tests ask the local httpbin) is proved in the real engine: the FAIL_TO_PASS test is decided
by the server's answer, and a test run as the tester tries to kill the server and take its port, and cannot."""
from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))
from fixture_swe import fixture_instance, lay_answers, lay_rendered  # noqa: E402

from rules.tiers.swe import swebench  # noqa: E402
from rules.tiers.swe.envs import requests as requests_envs  # noqa: E402

docker = pytest.mark.docker

BASE = {
    "fetch/__init__.py": "import urllib.error\nimport urllib.request\n\n\ndef status(url):\n"
                         "    try:\n        return urllib.request.urlopen(url, timeout=10).status\n"
                         "    except urllib.error.HTTPError as e:\n        return 200\n",
    "tests/test_fetch.py": "import os\n\nimport fetch\n\nHTTPBIN = os.environ.get('HTTPBIN_URL', 'http://httpbin.org/')"
                           "\n\n\ndef test_get():\n    assert fetch.status(HTTPBIN + 'get') == 200\n",
}
FIX = {"fetch/__init__.py": BASE["fetch/__init__.py"].replace("return 200", "return e.code")}
# run by the tester in every grading: the server is another user's, unkillable and its port taken
REACH = '''

def _server():
    for pid in os.listdir("/proc"):
        if pid.isdigit():
            try:
                with open(f"/proc/{pid}/cmdline", "rb") as f:
                    if b"httpbin.core" in f.read().split(b"\\0")[:4]:
                        return int(pid)
            except OSError:
                pass


def test_teapot():
    assert fetch.status(HTTPBIN + 'status/418') == 418


def test_the_server_is_out_of_the_testers_reach():
    assert os.getuid() == 1000 and HTTPBIN.startswith("http://127.0.0.1:")
    pid = _server()
    assert pid and os.stat(f"/proc/{pid}").st_uid == 65534
    with pytest.raises(PermissionError):
        os.kill(pid, signal.SIGKILL)
    s = socket.socket()
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
    with pytest.raises(OSError):
        s.bind(("127.0.0.1", int(HTTPBIN.rsplit(":", 1)[1].strip("/"))))
    assert fetch.status(HTTPBIN + 'get') == 200
'''
TESTS = {"tests/test_fetch.py": BASE["tests/test_fetch.py"].replace(
    "import os\n", "import os\nimport signal\nimport socket\n\nimport pytest\n") + REACH}
FILE = "tests/test_fetch.py"


def make_fetch(root: Path) -> tuple[Path, dict]:
    """``root/lab/fetch``: the base commit, then the fix; returns the repos folder and the instance's record."""
    record = fixture_instance(root / "lab" / "fetch", BASE, {**FIX, **TESTS}, source="fetch",
                              message="an error status is the status", instance_id="lab__fetch-1",
                              problem_statement="418 reads 200", FAIL_TO_PASS=[f"{FILE}::test_teapot"],
                              PASS_TO_PASS=[f"{FILE}::test_get", f"{FILE}::test_the_server_is_out_of_the_testers_reach"])
    return root, record


def fetch_env() -> swebench.Env:
    """An environment with the requests environments' local httpbin (their install steps, prepare line and
    HTTPBIN_URL), on the same Debian and Python."""
    return swebench.Env("httpbin-test", "lab/fetch", ("0.1",), "3.9", "bullseye",
                        install=("pip install pytest==7.4.4",) + requests_envs.httpbin_install(), setup_source=False,
                        prepare=(requests_envs.HTTPBIN_START,),
                        test_env=(("HTTPBIN_URL", requests_envs.HTTPBIN_URL),))


def test_the_server_starts_as_root_before_the_tester_has_the_tree_and_only_the_httpbin_versions_change():
    by_name = {e.name: e for e in swebench.ENVS}
    for name in ("requests-0.14", "requests-2.4", "requests-2.7"):
        env = by_name[name]
        assert env.prepare == (requests_envs.HTTPBIN_START,) and dict(env.test_env) == {
            "HTTPBIN_URL": requests_envs.HTTPBIN_URL}
    # the versions without the server keep their entries, and so their images and proofs
    for name, digest in (("requests-2.3", "6b960c4c6bc0debd"), ("requests-2.10", "a592d21b58037dff")):
        assert not by_name[name].prepare and by_name[name].digest() == digest


def test_check_sh_starts_the_server_before_the_canaries_and_the_tester(tmp_path):
    repos, record = make_fetch(tmp_path)
    rendered = swebench.render(swebench._instance(record), fetch_env(), str(repos))
    check = rendered.task_files["check.sh"][0].decode()
    start = check.index(requests_envs.HTTPBIN_START + "\n")
    assert check.index("git apply") < start < check.index("LAB_CANARIES_PY") < check.index("chown -R $tester")
    assert f"HTTPBIN_URL={requests_envs.HTTPBIN_URL}" in check[check.index("-m pytest") - 300:]
    assert rendered.meta["test_cmd"].startswith(requests_envs.HTTPBIN_START + " && ")


@pytest.fixture(scope="module")
def fetch(tmp_path_factory):
    from rules.config import Limits

    root = tmp_path_factory.mktemp("fetch")
    repos, record = make_fetch(root / "src")
    env = fetch_env()
    rendered = swebench.render(swebench._instance(record), env, str(repos))
    lay_rendered(rendered, root)
    answers = lay_answers(rendered, root)
    swebench.build_env(env, repos / "lab" / "fetch", record["base_commit"], log=open("/dev/null", "w"))
    limits = Limits(cpus=1.0, memory=2 * 1024**3, pids=512, timeout=300)
    logs = root / "logs"
    logs.mkdir()
    return swebench.prove(root / "task", answers, image=env.tag, limits=limits, meta=rendered.meta, log_dir=logs)


@docker
def test_a_test_needing_httpbin_is_decided_offline_and_the_tester_cannot_kill_the_server(fetch):
    proof = fetch
    # kept: offline (every grading has no network), the base answered 200 for the teapot and the fix 418; the
    # tester's attempt to kill the server and take its port failed in every run, base and gold
    assert proof["status"] == "kept", proof
    assert proof["tests"] == ["tests.test_fetch::test_get", "tests.test_fetch::test_teapot",
                              "tests.test_fetch::test_the_server_is_out_of_the_testers_reach"]
    assert proof["before"]["fail_to_pass_passed"] == [] and proof["before"]["pass_to_pass_failed"] == []
