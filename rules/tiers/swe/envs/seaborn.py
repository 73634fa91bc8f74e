"""The environments of mwaskom/seaborn.

Pins: SWE-bench v4.1.0's frozen environment of mwaskom__seaborn-3187 (``swebench/resources/swebench-og/
mwaskom__seaborn/3187/environment.yml``, the pip section of its ``conda env export``; Python 3.9.20 there, Debian
bullseye's 3.9.2 here). Version 0.13 has no frozen environment; SWE-bench v4.1.0 gives 0.12 and 0.13 one spec
(``SPECS_SEABORN``: ``pip install -e .[dev]`` with the same pip pins), so 0.13 takes 0.12's freeze.
Test command: SWE-bench's ``pytest --no-header -rA`` is lab's pytest route as it is."""
from __future__ import annotations

from rules.tiers.swe.env import Env

# mwaskom__seaborn/3187/environment.yml, pip section (every pin; only those '.[dev]' asks for are installed)
_PINS = (
    "certifi==2024.8.30", "cfgv==3.4.0", "charset-normalizer==3.4.0", "contourpy==1.1.0", "coverage==7.6.4",
    "cycler==0.11.0", "distlib==0.3.9", "docutils==0.21.2", "exceptiongroup==1.2.2", "execnet==2.1.1",
    "filelock==3.16.1", "flake8==7.1.1", "flit==3.9.0", "flit-core==3.9.0", "fonttools==4.42.1", "identify==2.6.1",
    "idna==3.10", "importlib-resources==6.0.1", "iniconfig==2.0.0", "kiwisolver==1.4.5", "matplotlib==3.7.2",
    "mccabe==0.7.0", "mypy==1.13.0", "mypy-extensions==1.0.0", "nodeenv==1.9.1", "numpy==1.25.2", "packaging==23.1",
    "pandas==2.0.0", "pandas-stubs==2.2.2.240807", "pillow==10.0.0", "platformdirs==4.3.6", "pluggy==1.5.0",
    "pre-commit==4.0.1", "pycodestyle==2.12.1", "pyflakes==3.2.0", "pyparsing==3.0.9", "pytest==8.3.3",
    "pytest-cov==5.0.0", "pytest-xdist==3.6.1", "python-dateutil==2.8.2", "pytz==2023.3.post1", "pyyaml==6.0.2",
    "requests==2.32.3", "scipy==1.11.2", "six==1.16.0", "tomli==2.0.2", "tomli-w==1.1.0",
    "types-pytz==2024.2.0.20241003", "typing-extensions==4.12.2", "tzdata==2023.1", "urllib3==2.2.3",
    "virtualenv==20.27.0", "zipp==3.16.2",
)
# SWE-bench's spec installs these beside '.[dev]' (scipy: the stats tests; the rest are matplotlib's and pandas's)
_INSTALL = ("pip install -c /opt/lab/constraints.txt '.[dev]' scipy",)


def _seaborn(version: str) -> Env:
    return Env(f"seaborn-{version}", "mwaskom/seaborn", (version,), "3.9", "bullseye", install=_INSTALL, pins=_PINS,
               pythonpath=".")


ENVS: tuple[Env, ...] = (_seaborn("0.12"), _seaborn("0.13"))
