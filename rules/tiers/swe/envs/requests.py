"""The environments of psf/requests."""
from __future__ import annotations

from rules.tiers.swe.env import Env

ENVS: tuple[Env, ...] = (
    Env("requests-2.10", "psf/requests", ("2.10",), "3.9", "bullseye",
        install=("pip install . pytest",),
        # these connect to a private-range address (TARPIT) by design: never run with a network, never expected
        exclude=("tests/test_requests.py::TestTimeout::test_connect_timeout",
                 "tests/test_requests.py::TestTimeout::test_total_timeout_connect")),
)
