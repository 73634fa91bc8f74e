"""The environments of pylint-dev/pylint."""
from __future__ import annotations

from rules.tiers.swe.env import Env

_PYLINT = ("grep -v '^-e' requirements_test_min.txt > /tmp/requirements.txt",
           "pip install -c /opt/lab/constraints.txt -r /tmp/requirements.txt '.[testutils,spelling]' py==1.11.0 toml")


ENVS: tuple[Env, ...] = (
    Env("pylint-2.15", "pylint-dev/pylint", ("2.15",), "3.11", "bookworm", install=_PYLINT, pins=("setuptools<71",),
        pythonpath=".", only=("pylint-dev__pylint-7114", "pylint-dev__pylint-7228", "pylint-dev__pylint-7993")),
    Env("pylint-2.13", "pylint-dev/pylint", ("2.13",), "3.9", "bullseye", install=_PYLINT, pins=("setuptools<71",),
        pythonpath="."),
    Env("pylint-2.14", "pylint-dev/pylint", ("2.14",), "3.9", "bullseye", install=_PYLINT, pins=("setuptools<71",),
        pythonpath="."),
    Env("pylint-2.15-py3.9", "pylint-dev/pylint", ("2.15",), "3.9", "bullseye", install=_PYLINT,
        pins=("setuptools<71",), pythonpath="."),
)
