"""The environments of pytest-dev/pytest."""
from __future__ import annotations

from rules.tiers.swe.env import Env

PYTEST_VERSION_FILE = ("printf 'version = __version__ = \"{version}.0\"\\nversion_tuple = __version_tuple__ = ({major}, {minor}, 0)\\n'"
                       " > src/_pytest/_version.py",)


def _pytest(version: str, python: str, pins: tuple[str, ...], only: tuple[str, ...] = (), pre: tuple[str, ...] = ()) -> Env:
    """pytest's own repository: the package at the environment-setup commit (for its metadata; the work tree's
    copy is what runs) with the pins of its era; no test extras (tests needing them skip, as in the dataset's
    own runs)."""
    suite = "bookworm" if python == "3.11" else "bullseye"
    name = f"pytest-{version}" + (f"-py{python}" if only else "")
    return Env(name, "pytest-dev/pytest", (version,), python, suite,
               install=pre + (f"SETUPTOOLS_SCM_PRETEND_VERSION={version}.0 pip install . " + " ".join(pins),),
               pins=(), pythonpath="src", prepare=PYTEST_VERSION_FILE, only=only)


_PY4 = ("atomicwrites==1.4.1", "attrs==23.1.0", "more-itertools==10.1.0", "py==1.11.0")
_PY5 = _PY4 + ("packaging==23.1", "pluggy==0.13.1", "wcwidth==0.2.6")
_PY8 = ("iniconfig==2.0.0", "packaging==23.1", "pluggy==1.3.0", "exceptiongroup==1.1.3", "tomli==2.0.1")


ENVS: tuple[Env, ...] = (
    _pytest("4.4", "3.9", _PY4 + ("pluggy==0.13.1", "setuptools==68.0.0", "six==1.16.0")),
    # 4.5's setup.py asks for pluggy>=0.12, so its era's 0.11 cannot be had with it
    _pytest("4.5", "3.9", _PY4 + ("pluggy==0.13.1", "setuptools==68.0.0", "six==1.16.0", "wcwidth==0.2.6")),
    # 4.6 imports importlib_metadata on every Python; releases before 1.x break the standard library's on 3.9
    _pytest("4.6", "3.9", _PY5 + ("six==1.16.0", "importlib-metadata==4.13.0")),
    _pytest("5.0", "3.9", _PY5),
    _pytest("5.1", "3.9", _PY5),
    _pytest("5.2", "3.9", _PY5),
    _pytest("5.3", "3.9", ("attrs==23.1.0", "more-itertools==10.1.0", "packaging==23.1", "pluggy==0.13.1",
                           "py==1.11.0", "wcwidth==0.2.6")),
    _pytest("5.4", "3.9", ("py==1.11.0", "packaging==23.1", "attrs==23.1.0", "more-itertools==10.1.0",
                           "pluggy==0.13.1", "wcwidth==0.2.6")),  # its terminal writer imports wcwidth
    _pytest("6.0", "3.9", ("attrs==23.1.0", "iniconfig==2.0.0", "more-itertools==10.1.0", "packaging==23.1",
                           "pluggy==0.13.1", "py==1.11.0", "toml==0.10.2")),
    _pytest("6.3", "3.9", ("attrs==23.1.0", "iniconfig==2.0.0", "packaging==23.1", "pluggy==0.13.1", "py==1.11.0",
                           "toml==0.10.2"), pre=("sed -i 's/>=>=/>=/' setup.cfg",)),
    _pytest("7.0", "3.11", ("attrs==23.1.0", "iniconfig==2.0.0", "packaging==23.1", "pluggy==0.13.1", "py==1.11.0"),
            only=("pytest-dev__pytest-9359",)),
    _pytest("7.0", "3.9", ("attrs==23.1.0", "iniconfig==2.0.0", "packaging==23.1", "pluggy==0.13.1", "py==1.11.0")),
    _pytest("8.0", "3.11", _PY8),
)
