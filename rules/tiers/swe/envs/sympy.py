"""The environments of sympy/sympy."""
from __future__ import annotations

from rules.tiers.swe.env import Env

ENVS: tuple[Env, ...] = (
    Env("sympy-py3.11", "sympy/sympy", ("1.2", "1.4", "1.5", "1.6", "1.7", "1.8", "1.9", "1.10", "1.11", "1.12",
                                         "1.13"), "3.11", "bookworm",
        install=("pip install -c /opt/lab/constraints.txt mpmath pytest",), pins=("mpmath==1.3.0",),
        setup_source=False),
    Env("sympy-py3.9", "sympy/sympy", ("0.7", "1.0", "1.1"), "3.9", "bullseye",
        install=("pip install -c /opt/lab/constraints.txt mpmath 'pytest<8'",), pins=("mpmath==1.3.0",),
        setup_source=False),
)
