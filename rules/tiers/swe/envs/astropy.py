"""The environments of astropy/astropy.

Pins: SWE-bench v4.1.0's frozen environments (``swebench/resources/swebench-og/astropy__astropy/<n>/
environment.yml``, tag v4.1.0 = commit 726c5461e2ef), the pip section whole: for 4.3 and 5.1 the freezes of the
Lite instances themselves (n = 12907, 14182 and 14365), one and the same list (Python 3.9.20 there, Debian
bullseye's 3.9.2 here), as is 5.2's (14995). They leave out what ``pip install -e .[test]`` built with in its
isolated build environment (pyproject's ``build-system.requires``): each version's own Cython pin (0.29.22 for
4.3, 0.29.30 for 5.1, 0.29.34 for 5.2), and extension-helpers, setuptools_scm and wheel, pinned here to releases
of the era (extension-helpers 1.0.0 of March 2022, setuptools_scm 7.1.0, wheel 0.40.0); the extensions are built
against the pinned numpy 1.25.2, the one they run with (SWE-bench's isolated build took ``oldest-supported-numpy``).

The extensions are the work tree's own. No copy of astropy is installed in the image (an installed copy could
hold the fix, and its extensions would be another commit's): the work tree is first on the path, and before the
tests check.sh runs ``/opt/lab/build-ext`` (a ``prepare`` line), which builds every extension of the graded tree
in place (``setup.py build_ext --inplace``) as the unprivileged tester, never as root (setup.py is graded code),
from the tree's own ``.pyx`` and ``.c`` sources, a patched one included. What makes that cheaper is ccache, and
only ccache:

- The image builds one tree the same way, at the same path (``/work``), with ``CC="ccache gcc"``, which fills
  ``/opt/lab/ccache``; then the tree is removed: nothing of it is left in the image but that cache.
- A grading compiles through the same cache, read-only (``CCACHE_READONLY``; the grading's root is read-only
  anyway). ccache gives back an object only for a compilation whose inputs hash the same: the preprocessed source
  (every header included), the compiler's flags and the compiler itself. A ``.c`` file the patch changed, or one
  including a changed header, misses and is compiled afresh. Cython runs on every ``.pyx`` every time (Cython
  0.29's distutils command has no cache), and its output reaches gcc, where it hits only when byte-identical.
  Linking always runs. So every extension a grading imports is built from its own tree; the cache saves
  recompiling C whose every input is byte-identical.
- The tree that fills the cache is the earliest base commit of the version's Lite instances (``setup_commit``),
  not SWE-bench's environment-setup commit: that one is its version's last commit, after the fixes, so its cache
  would hold a fixed C file compiled, readable by an agent whose image is built FROM this one (the instances here
  fix Python files only, but the rule must not depend on it); and it is far from the base commits (4.3's shared
  too little preprocessed C with 12907's base: a grading's build took 391 s at load 26, against 904 s for the
  image's whole cold build).

Measured (evals/swe/NOTES.md, "requests and astropy"): a grading's build of a tree whose C the cache holds takes
45 to 116 s at load 14 to 30 (every compilation a hit; Cython and the links are the rest), so a proof's four
gradings spend 3 to 8 minutes building; images: 546 to 728 s each (pip's installs and one cold build).
Not done: 1.3 (astropy__astropy-6938 and 7746: Python 3.6, Cython 0.27.3, numpy 1.16.0, and the
``astropy_helpers`` git submodule, which a tree laid from git has not: astropy-helpers 2.0.2 for 6938, a
3.1.dev commit for 7746). 14365 (5.1) and 14995 (5.2, no entry) cannot be laid here: their base commits' 6 MB IERS
table (``astropy/utils/iers/data/eopc04.1962-now``) is not in the stored snapshot (``rules.upstream.tree_tar``).

SWE-bench's test command for these versions is ``pytest -rA`` (TEST_PYTEST), here the lab pytest route with the
base commit's ``setup.cfg`` settings (doctest-plus, open-files and remote-data plugins from the pins)."""
from __future__ import annotations

import shlex

from rules.tiers.swe.env import Env

# astropy__astropy/{12907,14182,14365,14995}/environment.yml, pip section (the same list in the four)
_PINS_39 = (
    "attrs==23.1.0", "coverage==7.6.2", "exceptiongroup==1.1.3", "execnet==2.0.2", "hypothesis==6.82.6",
    "iniconfig==2.0.0", "numpy==1.25.2", "packaging==23.1", "pluggy==1.3.0", "psutil==5.9.5", "pyerfa==2.0.0.3",
    "pytest==7.4.0", "pytest-arraydiff==0.5.0", "pytest-astropy==0.10.0", "pytest-astropy-header==0.2.2",
    "pytest-cov==4.1.0", "pytest-doctestplus==1.0.0", "pytest-filter-subpackage==0.1.2", "pytest-mock==3.11.1",
    "pytest-openfiles==0.5.0", "pytest-remotedata==0.4.0", "pytest-xdist==3.3.1", "pyyaml==6.0.1",
    "setuptools==68.0.0", "sortedcontainers==2.4.0", "tomli==2.0.1",
)
# what the isolated build had besides its Cython (see above)
_BUILD_39 = ("extension-helpers==1.0.0", "setuptools-scm==7.1.0", "wheel==0.40.0")

# Built in place as the tester (uid 1000) when run as root (check.sh), as whoever runs it otherwise (an agent's
# {test_cmd}); the version setuptools_scm would read from git, which the work tree has not.
_BUILD_EXT = r"""#!/bin/sh
# The work tree's compiled extensions, built in place from its own sources through the image's read-only ccache
# (rules/tiers/swe/envs/astropy.py). Run from the work tree's root.
set -eu
if [ "$(id -u)" = 0 ]; then
  chown -R 1000:1000 .
  exec setpriv --reuid=1000 --regid=1000 --clear-groups --inh-caps=-all --bounding-set=-all --no-new-privs -- \
    env HOME=/tmp "$0" "$@"
fi
export CC="ccache gcc" CCACHE_DIR=/opt/lab/ccache CCACHE_READONLY=1 CCACHE_NOSTATS=1 CCACHE_NOHASHDIR=1 CCACHE_TEMPDIR=/tmp/lab-ccache
export SETUPTOOLS_SCM_PRETEND_VERSION="${LAB_VERSION:-0.0}" PYTHONDONTWRITEBYTECODE=1
start=$(date +%s)
if python setup.py build_ext --inplace > /tmp/lab-build-ext.log 2>&1; then
  echo "lab: extensions built in $(( $(date +%s) - start )) s ($(grep -c 'ccache' /tmp/lab-build-ext.log || true) compile lines)"
else
  echo "lab: the extensions did not build:"; tail -n 40 /tmp/lab-build-ext.log
fi
"""


BUILD_EXT = "/opt/lab/build-ext"  # the prepare line: builds the work tree's extensions in place


def build_ext_install(install: str, version: str) -> tuple[str, ...]:
    """The install steps of an environment whose repository builds compiled extensions in place (``setup.py
    build_ext --inplace``): ``install`` (the pins), then ``BUILD_EXT`` written, then the tree the steps see (the
    setup commit's, or ``Env.setup_commit``'s) built at ``/work`` through ccache into ``/opt/lab/ccache`` (the
    cache every grading reads) and removed. ``version``: what setuptools_scm is told the version is (no git)."""
    return (
        install,
        # one printf argument a line: a Dockerfile's RUN holds no raw newline
        "printf '%s\\n' " + " ".join(shlex.quote(line) for line in
                                    _BUILD_EXT.replace("${LAB_VERSION:-0.0}", version).splitlines())
        + f" > {BUILD_EXT}",
        f"chmod 755 {BUILD_EXT}",
        "mkdir -p /opt/lab/ccache && CCACHE_DIR=/opt/lab/ccache ccache --set-config=max_size=2G",
        "rm -rf /work && cp -a /opt/lab/setup /work && cd /work",
        f"CC='ccache gcc' CCACHE_DIR=/opt/lab/ccache CCACHE_NOHASHDIR=1 SETUPTOOLS_SCM_PRETEND_VERSION={version} "
        "python setup.py build_ext --inplace -j 2 > /opt/lab/build-ext-image.log 2>&1 || "
        "{ tail -n 60 /opt/lab/build-ext-image.log; exit 1; }",
        "CCACHE_DIR=/opt/lab/ccache ccache -s",
        "cd / && rm -rf /work && chmod -R a+rX /opt/lab/ccache",
    )


def _astropy(version: str, cython: str, scm_version: str, setup_commit: str = "") -> Env:
    pins = _PINS_39 + _BUILD_39 + (f"cython=={cython}",)
    names = " ".join(p.split("==")[0] for p in pins)
    return Env(f"astropy-{version}", "astropy/astropy", (version,), "3.9", "bullseye",
               install=build_ext_install(f"pip install -c /opt/lab/constraints.txt {names}", scm_version), pins=pins,
               apt=("ccache",), pythonpath=".", prepare=(BUILD_EXT,), setup_commit=setup_commit)


ENVS: tuple[Env, ...] = (
    # the cache is filled from the earliest base commit of the version's Lite instances (see above)
    _astropy("4.3", "0.29.22", "4.3.dev0", setup_commit="d16bfe05a744909de4b27f5875fe0d4ed41ce607"),  # 12907
    _astropy("5.1", "0.29.30", "5.1.dev0", setup_commit="a5917978be39d13cd90b517e1de4e7a539ffaa48"),  # 14182
    # no 5.2: its one Lite instance, 14995, has a base commit that cannot be laid from the stored snapshot (see
    # above); with a whole clone, _astropy("5.2", "0.29.34", "5.2.dev0", setup_commit=<14995's base>) serves it
)
