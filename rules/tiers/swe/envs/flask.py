"""The environments of pallets/flask."""
from __future__ import annotations

from rules.tiers.swe.env import Env

ENVS: tuple[Env, ...] = (
    Env("flask-2.3", "pallets/flask", ("2.3",), "3.11", "bookworm",
        install=("pip install -c /opt/lab/constraints.txt -r requirements/tests.txt .",),
        pins=("setuptools==70.0.0", "click==8.1.3", "itsdangerous==2.1.2", "Jinja2==3.1.2", "MarkupSafe==2.1.1",
              "Werkzeug==2.3.7"),
        pythonpath="src"),
    Env("flask-2.0", "pallets/flask", ("2.0",), "3.9", "bullseye",
        # its setup.cfg reads the version by importing flask: the dependencies first
        install=("pip install -c /opt/lab/constraints.txt -r requirements/tests.txt setuptools Werkzeug Jinja2 "
                 "itsdangerous click MarkupSafe", "pip install -c /opt/lab/constraints.txt ."),
        pins=("setuptools==70.0.0", "Werkzeug==2.3.7", "Jinja2==3.0.1", "itsdangerous==2.1.2", "click==8.0.1",
              "MarkupSafe==2.1.3"),
        pythonpath="src"),
)
