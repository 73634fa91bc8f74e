"""An image's digest covers its rendered Dockerfile and every file it COPYs/ADDs from the build context
(rules/context.py): a changed copied file (the gateway's lab_usage.py, an agent's prefix script) gives the
service another tag, makes the agent's image task out of date and redoes the agent's trials; with Docker, the
changed file is really built into a new image."""
from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from rules import context
from rules.agents import load_agents
from rules.config import TEMPLATES
from rules.services import Service, gateway_service

FIXTURE = Path(__file__).resolve().parent / "scripted_model"
SHIPPED = TEMPLATES.parent / "evals" / "agents.toml"


def test_copied_sources_are_read_from_every_copy_and_add_but_other_stages():
    text = ("FROM x AS prefix\n# COPY commented.txt /x\nCOPY --chown=0:0 a.sh \\\n  dir/b.py /opt/\n"
            "COPY --from=prefix /opt/lab /opt/lab\nADD [\"c d.txt\", \"/e\"]\nadd https://example.org/f /f\n"
            "RUN echo COPY not.txt /x\n")
    assert context.copied_sources(text) == ["a.sh", "dir/b.py", "c d.txt"]
    files = {"a.sh": b"1", "dir/b.py": b"2", "dir/c.py": b"3", "c d.txt": b"4"}
    assert context.copied_files(text, files) == {"a.sh": b"1", "dir/b.py": b"2", "c d.txt": b"4"}
    assert context.copied_files("COPY dir /d\nCOPY *.sh missing.txt /e\n", files) == \
        {"dir/b.py": b"2", "dir/c.py": b"3", "a.sh": b"1", "missing.txt": None}


def test_the_digest_changes_with_a_copied_file_and_not_with_another_or_the_host_ca():
    text = "FROM x\nCOPY ca-certificates.crt /ca\nCOPY a.sh /a\n"
    files = {"a.sh": b"1", "other": b"x", "ca-certificates.crt": b"ca"}
    base = context.build_digest(text, files)
    assert context.build_digest(text, {**files, "a.sh": b"2"}) != base
    assert context.build_digest(text, {**files, "other": b"y"}) == base
    assert context.build_digest(text, {**files, "ca-certificates.crt": b"another machine"}) == base
    assert context.build_digest(text + "RUN true\n", files) != base


@pytest.fixture
def templates(tmp_path, monkeypatch) -> Path:
    """A copy of templates/images/ that the build context (and the service templates) are read from."""
    copy = tmp_path / "templates"
    shutil.copytree(TEMPLATES / "images", copy / "images", ignore=shutil.ignore_patterns("__pycache__"))
    monkeypatch.setattr(context, "TEMPLATES", copy)
    monkeypatch.setattr("rules.services.SERVICE_TEMPLATES", copy / "images" / "services")
    return copy / "images"


def test_a_changed_gateway_script_is_another_gateway_tag(templates):
    upstream = Service(image="llama", command=("serve",), port=8080)
    before = gateway_service(upstream, "m")
    tag, stamp = before.tag(), before.stamp_name  # read from the files as they are now
    (templates / "services" / "gateway" / "lab_usage.py").write_text("# changed\n", encoding="utf-8")
    after = gateway_service(upstream, "m")
    assert after.tag() != tag and after.stamp_name != stamp
    assert after.tag().startswith("lab/service-gateway:")


def test_a_changed_copied_agent_file_rebuilds_its_image_and_redoes_its_trials(templates):
    from rules.tasks import _agent_image_task
    from rules.trial import template_digest

    agents = load_agents(SHIPPED)
    mini, noop = agents["mini-swe-agent"], agents["noop"]
    before = {a.name: (a.image_digest(), template_digest(a), _agent_image_task(a.name, a, None)["uptodate"][0])
              for a in (mini, noop)}
    (templates / "agents" / "python-prefix.sh").write_text("#!/bin/sh\necho changed\n", encoding="utf-8")
    after = {a.name: (a.image_digest(), template_digest(a), _agent_image_task(a.name, a, None)["uptodate"][0])
             for a in (mini, noop)}
    assert after["mini-swe-agent"][0] != before["mini-swe-agent"][0]
    assert after["mini-swe-agent"][1] != before["mini-swe-agent"][1]  # the run key: its trials are redone
    # doit's config_changed: the agent_image task's recorded config differs, so doit rebuilds the image
    assert after["mini-swe-agent"][2].config != before["mini-swe-agent"][2].config
    assert after["noop"][:2] == before["noop"][:2] and after["noop"][2].config == before["noop"][2].config


def test_a_changed_gateway_script_redoes_the_trials_of_an_agent_behind_the_gateway(templates):
    from rules.agents import parse_agent
    from rules.trial import template_digest

    raw = {"image": "noop", "command": ["true"], "network": "service", "gateway": {"model": "scripted"},
           "service": {"image": str(FIXTURE / "scripted.Dockerfile.j2"), "command": ["serve"], "port": 8080}}
    before = template_digest(parse_agent("gw", raw))
    (templates / "services" / "gateway" / "start.py").write_text("# changed\n", encoding="utf-8")
    assert template_digest(parse_agent("gw", raw)) not in ("", before)


@pytest.mark.docker
def test_a_changed_copied_file_is_built_into_a_new_image(tmp_path):
    """The scripted fixture's Dockerfile (it COPYs its folder's server.py and tools.py) from a copy of its
    folder: changing tools.py gives another tag, and the image built under it holds the new file."""
    import subprocess

    from conftest import docker_available
    from rules import images

    if not docker_available():
        pytest.fail("no Docker engine answers: start dockerd (`bash .ci/run` does) before the docker tests")

    folder = tmp_path / "fixture"
    shutil.copytree(FIXTURE, folder, ignore=shutil.ignore_patterns("__pycache__"))
    service = Service(image=str(folder / "scripted.Dockerfile.j2"), command=("true",), port=8080)
    tag = service.tag()
    first = images.build_service(service, "debian:bookworm")
    with open(folder / "tools.py", "a", encoding="utf-8") as f:
        f.write("\nLAB_DIGEST_TEST = 1\n")
    changed = Service(image=str(folder / "scripted.Dockerfile.j2"), command=("true",), port=8080)
    assert changed.tag() != tag
    second = images.build_service(changed, "debian:bookworm")
    assert second["id"] != first["id"]
    out = subprocess.run(["docker", "run", "--rm", "--network", "none", changed.tag(), "tail", "-1",
                          "/opt/lab/scripted/tools.py"], capture_output=True, text=True, timeout=120)
    assert out.stdout.strip() == "LAB_DIGEST_TEST = 1", out
    for name in (tag, changed.tag()):
        subprocess.run(["docker", "rmi", "-f", name], capture_output=True, timeout=120)
