"""``doit prune:swe``: the environment images no published swe task needs, and the agent images built FROM them, are
removed (``dry=1``: listed), only those this lab home built, with what went and the bytes freed.

Images here are tiny ones built at test time under tags of their own (never another test's or home's images)."""
from __future__ import annotations

import json
import os
import re
import secrets
from pathlib import Path

import pytest

from conftest import run_doit
from fixture_swe import make_calc, write_swe_suite

docker = pytest.mark.docker


def _image(tag: str, base: str) -> str:
    from rules import sandbox

    blob = os.urandom(2_000_000)  # a layer of its own: removing the image frees it
    return sandbox.build_image(tag, f"FROM {base}\nCOPY blob /blob\n", {"blob": blob}, log=open(os.devnull, "w"))


def _stamp(home: Path, name: str, **fields) -> Path:
    path = home / ".lab" / "images" / f"{name}.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(fields))
    return path


@docker
def test_prune_removes_only_the_unneeded_images_this_home_built_and_says_the_bytes(tmp_path):
    from rules import sandbox

    uid = secrets.token_hex(4)
    tags = {k: f"lab/swe-env:prunetest-{k}-{uid}" for k in ("keep", "drop", "foreign", "gone", "reused")}
    tags["agent"] = f"lab/agent-prunetest:on-drop-{uid}"
    make_calc(tmp_path / "src")
    home = tmp_path / "home"
    write_swe_suite(home, tmp_path / "src")
    base = sandbox.ensure_base_image("debian:bookworm")
    try:
        ids = {k: _image(tags[k], base) for k in ("keep", "drop", "foreign", "reused")}
        ids["agent"] = _image(tags["agent"], tags["drop"])
        stamps = {k: _stamp(home, f"swe-env-prunetest-{k}-{uid}", image=tags[k], id=ids.get(k, "sha256:0"))
                  for k in ("keep", "drop", "gone")}
        stamps["foreign"] = _stamp(home, f"swe-env-prunetest-foreign-{uid}", image=tags["foreign"],
                                   id="sha256:" + "1" * 64)  # the tag was built again elsewhere since
        stamps["agent"] = _stamp(home, f"agent-prunetest-on-drop-{uid}", image=tags["agent"], id=ids["agent"],
                                 base=tags["drop"])
        # another home made it; this home's gen found it whole in the cache and said so in its stamp
        stamps["reused"] = _stamp(home, f"swe-env-prunetest-reused-{uid}", image=tags["reused"], id=ids["reused"],
                                  built_here=False)
        task = home / "evals" / "swe" / "tasks" / "lab__calc-1"
        task.mkdir(parents=True)
        (task / "task.json").write_text(json.dumps({"task": "lab__calc-1", "image": tags["keep"]}))
        (task / "tests.json").write_text('{"version": 1, "tests": []}')

        dry = run_doit(home, "prune:swe", "dry=1", timeout=300)
        said = dry.stdout + dry.stderr
        assert dry.code == 0, said
        assert "(dry run): 2 image(s) no published task needs would be removed, freeing 4.0 MB" in said, said
        assert f"{tags['reused']}: left alone (this home's build found" in said
        assert f"{tags['drop']}: would be removed (environment image" in said
        assert f"{tags['agent']}: would be removed (agent image" in said
        assert all(sandbox.image_id(tags[k]) == ids[k] for k in ids) and all(p.exists() for p in stamps.values())

        res = run_doit(home, "prune:swe", timeout=300)
        said = res.stdout + res.stderr
        assert res.code == 0, said
        m = re.search(r"prune:swe: removed 2 image\(s\) no published task needs, freeing ([\d.]+) MB \(their layers",
                      said)
        assert m and 3.9 <= float(m.group(1)) <= 4.3, said  # two 2 MB blobs: the Debian base's layers stay
        assert f"{tags['foreign']}: left alone" in said and f"{tags['gone']}: already gone" in said
        assert sandbox.image_id(tags["drop"]) is None and sandbox.image_id(tags["agent"]) is None
        assert all(sandbox.image_id(tags[k]) == ids[k] for k in ("keep", "foreign", "reused"))
        assert {k for k, p in stamps.items() if p.exists()} == {"keep", "foreign", "reused"}

        again = run_doit(home, "prune:swe", timeout=300)
        assert "every image this home built is needed by a published task or left alone; nothing removed" in (
            again.stdout + again.stderr)
    finally:
        for tag in tags.values():
            try:
                sandbox.remove_image(tag)
            except sandbox.SandboxError:
                pass


def test_prune_of_a_tier_without_images_of_its_own_says_so(tmp_path):
    home = tmp_path / "home"
    (home / "evals" / "aider").mkdir(parents=True)
    (home / "evals" / "aider" / "suite.toml").write_text('upstream = "x"\nref = "main"\nlanguages = ["python"]\n')
    res = run_doit(home, "prune:aider", timeout=120)
    assert res.code != 0 and "the aider tier builds no images of its own to prune" in res.stdout + res.stderr


def test_each_tier_prunes_only_its_own_environment_stamps(tmp_path, monkeypatch):
    """swe and swe-multi share the mechanism (``rules.tiers.swe.prune``), each named by its tier's stamp prefix:
    neither takes the other's environment images, nor an image a published task of its own needs."""
    from rules import config, tiers
    from rules.tiers.swe.prune import candidates

    home = tmp_path / "home"
    stamps = home / ".lab" / "images"
    for tier, env in (("swe", "a-1"), ("swe", "b-1"), ("swe-multi", "c-1"), ("swe-multi", "d-1")):
        tag = f"lab/{tier}-env:{env}"
        _stamp(home, f"{tiers.get(tier).env_stamp_prefix}{env}", image=tag, id=f"sha256:{env}")
    _stamp(home, "agent-x-on-lab-swe-multi-env-d-1", image="lab/agent-x:on-d", id="sha256:x",
           base="lab/swe-multi-env:d-1")
    for tier, env in (("swe", "a-1"), ("swe-multi", "c-1")):  # each tier's one published task
        task = home / "evals" / tier / "tasks" / "t"
        task.mkdir(parents=True)
        (task / "task.json").write_text(json.dumps({"task": "t", "image": f"lab/{tier}-env:{env}"}))
        (task / "tests.json").write_text('{"version": 1, "tests": []}')
    monkeypatch.setattr(config, "EVALS", home / "evals")  # the suites' task folders: this home's
    got = {tier: [(c.tag, c.kind) for c in candidates(config.Suite(tier, "", "", ()), stamps,
                                                       tiers.get(tier).env_stamp_prefix)]
           for tier in ("swe", "swe-multi")}
    assert got == {"swe": [("lab/swe-env:b-1", "environment")],
                   "swe-multi": [("lab/agent-x:on-d", "agent"), ("lab/swe-multi-env:d-1", "environment")]}


def test_prune_of_a_home_that_built_no_image_says_it_built_none(tmp_path, monkeypatch):
    from rules import config
    from rules.tiers.swe.prune import prune

    home = tmp_path / "home"
    (home / ".lab" / "images").mkdir(parents=True)
    _stamp(home, "agent-x", image="lab/agent-x:latest", id="sha256:x")  # no swe stamp among them
    monkeypatch.setattr(config, "EVALS", home / "evals")
    said = prune(config.Suite("swe", "", "", ()), home / ".lab" / "images", "swe-env-", dry=True)
    assert said.startswith("prune:swe (dry run): this home built no swe image (no stamp swe-env-*.json under "), said


def test_a_stamp_from_before_built_here_was_recorded_is_judged_by_its_image_time(tmp_path):
    """A stamp without ``built_here``: an image made before the build that wrote the stamp began (its mtime less
    its seconds) was found in the cache; one made during it, or a stamp without seconds, is this home's."""
    from rules.tiers.swe.prune import Candidate, made_elsewhere

    path = _stamp(tmp_path, "swe-env-a", image="lab/swe-env:a", id="sha256:a", seconds=1.6)
    os.utime(path, (1_000_000, 1_000_000))
    c = Candidate("lab/swe-env:a", path, "sha256:a", "environment")
    assert made_elsewhere(c, created=1_000_000 - 3600)
    assert not made_elsewhere(c, created=1_000_000 - 1.0)
    bare = Candidate("lab/swe-env:b", _stamp(tmp_path, "swe-env-b", image="lab/swe-env:b", id="sha256:b"), "sha256:b",
                     "environment")
    assert not made_elsewhere(bare, created=0.0)
    said = Candidate("c", _stamp(tmp_path, "swe-env-c", image="c", id="c", built_here=False), "c", "environment")
    assert made_elsewhere(said, created=None)


@docker
def test_built_here_tells_a_build_from_one_found_whole_in_the_cache():
    """``images.built_here``: the first build of a Dockerfile made its image; the same build again, under another
    tag (another home's gen), took it whole from Docker's cache and did not."""
    import time

    from rules import images, sandbox

    uid = secrets.token_hex(4)
    tags = [f"lab/swe-env:builthere-{i}-{uid}" for i in (1, 2)]
    base = sandbox.ensure_base_image("debian:bookworm")
    text = f"FROM {base}\nRUN echo {uid} > /uid\n"
    try:
        since = time.time()
        first = sandbox.build_image(tags[0], text, {}, log=open(os.devnull, "w"))
        assert images.built_here(first, since)
        since = time.time()
        again = sandbox.build_image(tags[1], text, {}, log=open(os.devnull, "w"))
        assert again == first and not images.built_here(again, since)
    finally:
        for tag in tags:
            sandbox.remove_image(tag)


def test_the_bytes_a_prune_frees_count_shared_layers_once_and_kept_ones_never():
    """``bounds``: a LABEL-only agent image on its environment image (the same layers) adds nothing; the Debian
    base's layers stay; layers a kept image holds are never freed; siblings' shared layers of unknown size leave
    a range, which a build intermediate of known size closes."""
    from rules.tiers.swe.prune import bounds

    images = {"debian": (("d",), 100, True), "env": (("d", "e"), 130, True), "agent": (("d", "e"), 130, True),
              "other-env": (("d", "o"), 150, True), "kept-on-other": (("d", "o", "k"), 160, True),
              "sib1": (("d", "s", "s1"), 170, True), "sib2": (("d", "s", "s2"), 175, True)}
    assert bounds({"env", "agent"}, images) == (30, 30)  # the newcomer's: 1.22 GB counted twice, and Debian's
    assert bounds({"env"}, images) == (0, 0)  # the agent image on it stays, holding its layers
    assert bounds({"other-env"}, images) == (0, 0)
    assert bounds({"other-env", "kept-on-other"}, images) == (60, 60)
    assert bounds({"sib1", "sib2"}, images) == (0, 145)  # "s" counted in both at most, in neither at least
    assert bounds({"sib1", "sib2"}, {**images, "step": (("d", "s"), 120, False)}) == (125, 125)
    assert bounds({"sib1"}, {**images, "step": (("d", "s"), 120, False)}) == (50, 50)  # sib2 keeps "s"


@docker
def test_an_agent_image_on_a_pruned_environment_image_names_the_image_and_the_gen(tmp_path, monkeypatch):
    """After ``prune:swe-multi``, ``doit run`` building an agent image FROM a missing environment image says that
    image is missing and which gen builds it again, not that the agent needs another Python (a failed pull)."""
    from rules import config, tasks, tiers

    evals = tmp_path / "home" / "evals"
    tag = f"lab/swe-multi-env:gone-{secrets.token_hex(4)}"
    (evals / "swe-multi").mkdir(parents=True)
    (evals / "swe-multi" / "suite.toml").write_text('upstream = "x"\nref = "main"\n')
    task = evals / "swe-multi" / "tasks" / "o__r-7"
    task.mkdir(parents=True)
    (task / "task.json").write_text(json.dumps({"task": "o__r-7", "image": tag}))
    (evals / "swe-multi" / "manifest.json").write_text(json.dumps({"tasks": [{"task": "o__r-7", "status": "kept"}]}))
    for module in (config, tiers):
        monkeypatch.setattr(module, "EVALS", evals)
    failed = tasks._build_agent_on("noop", tag)
    assert f"image cannot be built FROM {tag}: the environment image {tag} is missing" in str(failed.message)
    assert "`doit gen:swe-multi instances=o__r-7`" in str(failed.message) and "Python" not in str(failed.message)


def test_an_unknown_id_names_the_gen_of_its_own_tier(tmp_path):
    """``evaluate suite=swe-multi`` with an id no published task has: the fix is the swe-multi tier's gen."""
    from rules import config
    from rules.tiers.swe.swebench import evaluate_one

    suite = config.Suite("swe-multi", "", "", ())
    report = evaluate_one(suite, {"instance_id": "no__such-1", "model_patch": ""}, tmp_path)
    assert report["status"] == "error" and "`doit gen:swe-multi instances=...`" in report["reason"], report
