"""The environments of sphinx-doc/sphinx: one per version (each installs the repository's own ``.[test]`` from
that version's environment-setup commit, with the pins below as constraints), Python 3.9 (Debian bullseye's 3.9.2;
SWE-bench's were 3.9.20).

Pins: SWE-bench v4.1.0's frozen environments (``swebench/resources/swebench-og/sphinx-doc__sphinx/<n>/
environment.yml``, the pip section of each ``conda env export``), by version: 3.1 to 3.5 from n = 8595 (3.5; the
freezes of 7757, 7985, 8269 and 8459 for 3.1 to 3.4 hold the same pins, plus ``typed-ast``, which ``.[test]``
asks for on Python < 3.8 only); 4.0 from 9229 (4.1): the one freeze labelled 4.0, 8638, is of a tree on the 3.x
line (docutils 0.21.2), which 4.0's ``docutils<0.18`` refuses, and 9229's differs from 8595's in docutils
(0.17.1) alone; 5.0 from 10323, 5.1 from 10449, 7.1 from 11445. They pin
docutils, which ``.[test]`` leaves open and whose newest releases break these trees (docutils 0.23 has no
``roman`` module that sphinx 3.4 imports: ../shared/notes/swe-coverage.md, section 0).

The ``sphinxcontrib-*`` builders are missing from every freeze (``conda env export`` leaves them out) yet every
version imports them at start-up: pinned here to the last releases that do not require Sphinx >= 5
(applehelp 1.0.4, devhelp 1.0.2, htmlhelp 2.0.1, qthelp 1.0.3, serializinghtml 1.1.5, jsmath 1.0.1: what SWE-bench's
``<=`` caps of its ``pre_install`` resolve to for Sphinx 3.x and 4.x), and kept for 5.x and 7.1, whose pins
they meet (releases of 2020 to January 2023, before these instances' data was made).

Test command: SWE-bench runs ``tox --current-env -epy39 -v --``, that is the instance's tox.ini ``commands``
(``[python -X dev [-X warn_default_encoding] -m] pytest --durations 25``) with its ``setenv``; lab's pytest route
runs the same pytest with the same warnings filter (``PYTHONWARNINGS``) and ``-X dev`` as ``PYTHONDEVMODE=1``
(``test_env``); ``-X warn_default_encoding`` is a Python 3.10 option, without effect on 3.9."""
from __future__ import annotations

from rules.tiers.swe.env import Env

_CONTRIB = ("sphinxcontrib-applehelp==1.0.4", "sphinxcontrib-devhelp==1.0.2", "sphinxcontrib-htmlhelp==2.0.1",
            "sphinxcontrib-qthelp==1.0.3", "sphinxcontrib-serializinghtml==1.1.5", "sphinxcontrib-jsmath==1.0.1")

# sphinx-doc__sphinx/8595/environment.yml (3.5): 3.1 to 3.5; with docutils 0.17.1, 9229's (4.1): 4.0
_PINS_3 = (
    "alabaster==0.7.11", "babel==2.16.0", "cachetools==5.5.0", "certifi==2024.8.30", "chardet==5.2.0",
    "charset-normalizer==3.4.0", "colorama==0.4.6", "coverage==7.6.4", "cython==3.0.11", "distlib==0.3.9",
    "docutils==0.21.2", "exceptiongroup==1.2.2", "filelock==3.16.1", "html5lib==1.1", "idna==3.10",
    "imagesize==1.4.1", "iniconfig==2.0.0", "jinja2==2.11.3", "markupsafe==2.0.1", "packaging==24.1",
    "platformdirs==4.3.6", "pluggy==1.5.0", "pygments==2.18.0", "pyproject-api==1.8.0", "pytest==8.3.3",
    "pytest-cov==5.0.0", "requests==2.32.3", "six==1.16.0", "snowballstemmer==2.2.0", "tomli==2.0.2", "tox==4.16.0",
    "tox-current-env==0.0.11", "urllib3==2.2.3", "virtualenv==20.26.6", "webencodings==0.5.1",
)
# sphinx-doc__sphinx/10449/environment.yml (5.1) less docutils: the freezes of 10323 (5.0) and 11445 (7.1) differ
# from it only in docutils, and 10323 in coverage and pytest-cov too
_PINS_5 = (
    "alabaster==0.7.16", "babel==2.16.0", "cachetools==5.5.0", "certifi==2024.8.30", "chardet==5.2.0",
    "charset-normalizer==3.4.0", "colorama==0.4.6", "cython==3.0.11", "distlib==0.3.9",
    "exceptiongroup==1.2.2", "filelock==3.16.1", "html5lib==1.1", "idna==3.10", "imagesize==1.4.1",
    "importlib-metadata==8.5.0", "iniconfig==2.0.0", "jinja2==3.1.4", "markupsafe==3.0.2", "packaging==24.1",
    "platformdirs==4.3.6", "pluggy==1.5.0", "pygments==2.18.0", "pyproject-api==1.8.0", "pytest==8.3.3",
    "requests==2.32.3", "six==1.16.0", "snowballstemmer==2.2.0", "tomli==2.0.2", "tox==4.16.0",
    "tox-current-env==0.0.11", "urllib3==2.2.3", "virtualenv==20.26.6", "webencodings==0.5.1", "zipp==3.20.2",
)

# each version's tox.ini setenv PYTHONWARNINGS (at its environment-setup commit)
_WARN_3 = ("all,ignore::ImportWarning:importlib._bootstrap_external,ignore::DeprecationWarning:site,"
           "ignore::DeprecationWarning:distutils")
_WARN_34 = _WARN_3 + ",ignore::DeprecationWarning:pip._vendor.packaging.version"


def _sphinx(version: str, pins: tuple[str, ...], warnings: str, dev: bool) -> Env:
    """Sphinx ``version``: ``.[test]`` at its environment-setup commit; ``dev``: its tox.ini runs ``python -X dev``."""
    test_env = (("PYTHONWARNINGS", warnings),) + ((("PYTHONDEVMODE", "1"),) if dev else ())
    return Env(f"sphinx-{version}", "sphinx-doc/sphinx", (version,), "3.9", "bullseye",
               install=("pip install -c /opt/lab/constraints.txt '.[test]'",), pins=pins + _CONTRIB,
               pythonpath=".", test_env=tuple(sorted(test_env)))


ENVS: tuple[Env, ...] = (
    _sphinx("3.1", _PINS_3, _WARN_3, dev=False),
    _sphinx("3.2", _PINS_3, _WARN_3, dev=False),
    _sphinx("3.3", _PINS_3, _WARN_3, dev=False),
    _sphinx("3.4", _PINS_3, _WARN_34, dev=True),
    _sphinx("3.5", _PINS_3, _WARN_34, dev=True),
    _sphinx("4.0", tuple(p for p in _PINS_3 if not p.startswith("docutils==")) + ("docutils==0.17.1",), _WARN_34,
            dev=True),
    _sphinx("5.0", _PINS_5 + ("docutils==0.17.1", "coverage==7.6.4", "pytest-cov==5.0.0"), "all", dev=True),
    _sphinx("5.1", _PINS_5 + ("docutils==0.18.1",), "all", dev=True),
    _sphinx("7.1", _PINS_5 + ("docutils==0.20.1",), "error", dev=True),
)
