"""The swe tier's interpreters: an environment whose Python Debian does not ship takes it from an interpreter
folder in pyenv's layout (``pythons=DIR``, default ``$PYENV_ROOT/versions``), laid into its image.

The unit tests build fake interpreter folders; the Docker test builds a real environment image around this
machine's pyenv build of 3.8 (skipped, saying so, on a machine without one)."""
from __future__ import annotations

import dataclasses
import subprocess
from pathlib import Path

import pytest

from conftest import docker_available
from rules.tier import Rejected
from rules.tiers.swe import swebench

ENV = swebench.Env("demo-3.8", "demo/demo", ("1.0",), "3.8", "bookworm", install=("true",), setup_source=False)


def _interpreter(root: Path, version: str) -> Path:
    folder = root / version
    (folder / "bin").mkdir(parents=True)
    (folder / "bin" / f"python{version.rsplit('.', 1)[0]}").write_text("#!/bin/sh\n")
    return folder


def test_the_newest_patch_release_of_the_version_is_taken_and_is_part_of_the_image_identity(tmp_path):
    for v in ("3.8.1", "3.8.18", "3.9.0", "3.8.x"):
        _interpreter(tmp_path, v)
    (tmp_path / "3.8.20").mkdir()  # no bin/python3.8: not an interpreter
    env = swebench.with_interpreter(ENV, tmp_path)
    assert env.interpreter == "3.8.18" and env.interpreter_dir == str(tmp_path / "3.8.18") and env.suite == "bookworm"
    older = dataclasses.replace(env, interpreter="3.8.1", interpreter_dir=str(tmp_path / "3.8.1"))
    assert older.digest() != env.digest()  # another interpreter is another image, and its tasks are proved again
    elsewhere = dataclasses.replace(env, interpreter_dir="/elsewhere/3.8.18")
    assert elsewhere.digest() == env.digest()  # the same interpreter in another folder is the same image
    text = swebench.env_dockerfile(env, "debian:bookworm")
    assert "ADD python.tar /opt/lab/python/" in text and "/opt/lab/python/bin/python3.8 -m venv /opt/lab/venv" in text
    assert "python3-venv" not in text and "libssl3" in text


def test_a_python_debian_ships_needs_no_interpreter_folder(tmp_path):
    debian = dataclasses.replace(ENV, python="3.11")
    assert swebench.with_interpreter(debian, tmp_path / "missing") is debian
    text = swebench.env_dockerfile(debian, "debian:bookworm")
    assert "python.tar" not in text and "python3 -m venv /opt/lab/venv" in text


def test_a_missing_version_stops_with_one_line_naming_it_and_the_fix(tmp_path):
    _interpreter(tmp_path, "3.9.18")
    with pytest.raises(Rejected) as exc:
        swebench.with_interpreter(ENV, tmp_path)
    said = str(exc.value)
    assert "\n" not in said and f"{tmp_path} has no 3.8.* interpreter" in said, said
    assert "environment demo-3.8: Python 3.8 is not Debian bookworm's" in said and "pythons=DIR" in said, said
    assert "pyenv install 3.8" in said


def test_pythons_is_a_variable_of_the_swe_tier():
    from rules import tiers

    assert "pythons" in tiers.get("swe").variables


PYENV = swebench.default_pythons()


def test_a_test_writes_its_image_stamps_in_a_lab_home_of_its_own(own_image_stamps):
    from conftest import PROJECT
    from rules import images

    path = images.stamp_path(ENV.stamp_name)  # where build_env writes this environment's stamp
    assert path.parent == own_image_stamps and PROJECT not in path.parents, path


@pytest.mark.skipif(not docker_available(), reason="needs Docker")
@pytest.mark.skipif(not any(PYENV.glob("3.8.*/bin/python3.8")),
                    reason=f"no pyenv build of Python 3.8 in {PYENV} on this machine")
def test_an_environment_image_runs_the_interpreter_from_the_folder_as_an_unprivileged_user():
    from rules import sandbox

    env = swebench.with_interpreter(dataclasses.replace(ENV, name="demo-pyenv-3.8"), PYENV)
    stamp = swebench.build_env(env, Path("."), "")
    try:
        probe = ("import sys, ssl, sqlite3, ctypes, lzma, bz2, zlib, hashlib; "
                 "print(sys.version.split()[0], sys.prefix, sys.base_prefix, ssl.OPENSSL_VERSION[:9].replace(' ', '_'))")
        out = sandbox.run(env.tag, ["python", "-c", probe], network="none", user="65534:65534")
        assert out.exit_code == 0, out.output
        version, prefix, base, openssl = out.output.strip().splitlines()[-1].split(maxsplit=3)
        assert (version, prefix, base, openssl) == (env.interpreter, "/opt/lab/venv", "/opt/lab/python", "OpenSSL_3"), out.output
        assert any(p.startswith("pip==") for p in stamp["packages"]), stamp
    finally:
        subprocess.run(["docker", "rmi", "-f", env.tag], capture_output=True)
