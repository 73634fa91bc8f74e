"""The environments of scikit-learn/scikit-learn, for SWE-bench Lite's 23 instances (0.20: 5, 0.21: 7, 0.22: 7,
1.3: 4).

Pins: SWE-bench v4.1.0's frozen environments (tag v4.1.0 = commit 726c5461e2ef52d83cf1ea2107870a8bb3328d57 of
SWE-bench/SWE-bench), ``swebench/resources/swebench-og/scikit-learn__scikit-learn/<n>/environment.yml``, the
Python packages of the file named beside each entry (conda's, there: conda is not at hand, so they come from PyPI
at the same versions). 0.20-0.22 run on pyenv's 3.6.15 (the files: 3.6.13), 1.3 on pyenv's 3.9.18 (3.9.20). Where
PyPI has no such build, the nearest that is, recorded: numpy 1.19.5 and scipy 1.5.4 for 1.3's conda builds of
1.19.2 and 1.5.2 (no cp39 wheels of those); numexpr and bottleneck, pandas' optional accelerators, left out.

Compiled extensions. scikit-learn is Cython and C/C++; SWE-bench builds it in the image (``pip install -e .``
with ``--no-build-isolation``) and grades in that build, which is only sound because it rebuilds nothing: a patch
to a ``.pyx`` would run unbuilt. Lab installs no copy of scikit-learn (the work tree is first on the path, as for
django) and builds the graded tree's own extensions in every grading, as the tester, before the tests
(``Env.build``; a build that fails leaves every test to fail on ``import sklearn``). A whole build takes minutes on
one core, so it runs behind two caches that the image fills by building one tree of the version, and that give
back only what the same inputs made:

- Cython's own cache (``cythonize(cache=...)``, which scikit-learn's setup does not ask for: lab's build line passes
  it): a ``.pyx``'s C output is reused when the fingerprint of its transitive Cython inputs (the ``.pyx``, every
  ``.pxd``/``.pxi`` it cimports or includes, by path and content; the Cython version; the compile options) is the
  one the image recorded; otherwise Cython runs. The cache is copied to /tmp for each build (Cython touches a hit).
- ccache (read-only in a grading): a C/C++ compile is reused when ccache's hash of the compiler, its arguments and
  the source with every header it includes (direct mode) or its preprocessed text matches; otherwise gcc runs.
  Links always run.

So a tree whose compiled sources are the cached tree's builds in about a minute (44-67 s measured at load 20 on
2 cores, everything from the caches), and a patch to a ``.pyx``, a ``.pxd``, a ``.c``/``.h`` or their compile
options rebuilds what it touches, from its own sources. So does a base whose compiled sources differ from the
cached tree's: minutes per grading (a base 8 ``.pyx`` files away: 296-461 s), the cost that caching only one tree
per version leaves (evals/swe/NOTES.md, scikit-learn: filling the caches from every served base is the fix). What the
caches hold is built from ``setup_commit``: the earliest of the version's Lite base commits, an ancestor of every
other's (``git merge-base --octopus`` of the version's Lite bases is that commit), so no cache holds code that
came after any instance's base (a fix among it). A ``.c`` output from the cache embeds its ``.pyx``'s lines:
readable by an agent, and older than its base. SWE-bench's environment-setup commits of 0.20-0.22 are not in
the fork lab reads; 1.3's is later than its bases, so it is not used either. Forging a cache hit would need an
md5 collision on Cython's fingerprint and would only bring back the older tree's code.
"""
from __future__ import annotations

from rules.tiers.swe.env import Env

# the image's caches; a grading's build copies Cython's (it writes to a hit) and reads ccache's in place
_CYCACHE, _CCACHE = "/opt/lab/cycache", "/opt/lab/ccache"
# scikit-learn's own setup.py, run in-place with Cython's cache given to its cythonize call (cache dir: argv[1])
_SETUP = ("python -c 'import functools, runpy, sys, Cython.Build as b; "
          "b.cythonize = functools.partial(b.cythonize, cache=sys.argv[1]); "
          "sys.argv = [\"setup.py\", \"build_ext\", \"--inplace\"]; runpy.run_path(\"setup.py\", run_name=\"__main__\")'")
# a pyenv build links extensions against libpython in the folder it was built in (absent here): /opt/lab/python/lib
_CC = "LDFLAGS=-L/opt/lab/python/lib PATH=/usr/lib/ccache:$PATH"
# in the image: build the setup tree at /work (the path every grading builds at: ccache hashes the folder) to fill both
# caches, then leave nothing of it
_PREBUILD = (
    f"mkdir -p /work && cp -R /opt/lab/setup/. /work/ && cd /work && CCACHE_DIR={_CCACHE} CCACHE_MAXSIZE=4G {_CC} "
    f"{_SETUP} {_CYCACHE} > /opt/lab/prebuild.log 2>&1 || {{ tail -n 60 /opt/lab/prebuild.log; exit 1; }}",
    f"cd / && rm -rf /work && CCACHE_DIR={_CCACHE} ccache -s && chmod -R a+rX {_CYCACHE} {_CCACHE}",
)
# in a grading (and first in the agents' test command): the work tree's own build
_BUILD = (f"rm -rf /tmp/lab-cycache /tmp/lab-ccache.log && cp -R {_CYCACHE} /tmp/lab-cycache",
          f"CCACHE_DIR={_CCACHE} CCACHE_READONLY=1 CCACHE_NOSTATS=1 CCACHE_TEMPDIR=/tmp/lab-ccache "
          f"CCACHE_LOGFILE=/tmp/lab-ccache.log {_CC} {_SETUP} /tmp/lab-cycache > /tmp/lab-build.log 2>&1 "
          "|| { tail -n 40 /tmp/lab-build.log; false; }",
          # what came from the image's caches, for the log (nothing decides on it)
          "echo \"lab-build: $(grep -c 'Found compiled .* in cache' /tmp/lab-build.log) Cython output(s) and "
          "$(grep -c 'Result: .*cache_hit' /tmp/lab-ccache.log) compile(s) from the caches, "
          "$(grep -c 'Result: cache_miss' /tmp/lab-ccache.log) compile(s) made, in ${SECONDS} s\"")
_INSTALL = "LDFLAGS=-L/opt/lab/python/lib pip install -r /opt/lab/constraints.txt"


def compiled(name: str, repo: str, version: str, python: str, pins: tuple[str, ...], setup_commit: str) -> Env:
    """The environment ``name`` of ``repo`` at ``version`` whose tree is built in place by its own ``setup.py``
    (``build_ext --inplace``, Cython and C behind the image's caches, filled from ``setup_commit``'s tree): Debian
    bookworm, Python ``python`` (pyenv's when not bookworm's), ``pins`` installed, nothing of the repository."""
    apt = ("g++", "ccache") + (("python3",) if python == "3.6" else ())  # Debian's python3: the canaries' script
    return Env(name, repo, (version,), python, "bookworm", install=(_INSTALL,) + _PREBUILD, pins=pins, apt=apt,
               pythonpath=".", build=_BUILD, setup_commit=setup_commit)


def _sklearn(version: str, python: str, pins: tuple[str, ...], setup_commit: str) -> Env:
    return compiled(f"sklearn-{version}", "scikit-learn/scikit-learn", version, python, pins, setup_commit)


# 0.20 and 0.21: environment.yml of scikit-learn__scikit-learn-10297 (4 of 0.20's 5 files, all 8 of 0.21's; the
# fifth, 11578, adds joblib 1.1.1, which these trees vendor)
_PY36 = (
    "attrs==21.4.0", "cycler==0.11.0", "cython==0.29.24", "importlib-metadata==4.8.1", "iniconfig==1.1.1",
    "kiwisolver==1.3.1", "matplotlib==3.3.4", "more-itertools==8.12.0", "numpy==1.19.2", "olefile==0.46",
    "packaging==21.3", "pandas==1.1.5", "pillow==8.3.1", "pluggy==0.13.1", "py==1.11.0", "pyparsing==3.0.4",
    "pytest==6.2.4", "python-dateutil==2.8.2", "pytz==2021.3", "scipy==1.5.2", "setuptools==58.0.4", "six==1.16.0",
    "toml==0.10.2", "tornado==6.1", "typing-extensions==4.1.1", "wheel==0.37.1", "zipp==3.6.0",
)
# 0.22: environment.yml of scikit-learn__scikit-learn-13779 (all 12 of 0.22's files): the same, and joblib from pip
_PY36_22 = _PY36 + ("joblib==1.1.1",)
# 1.3: environment.yml of scikit-learn__scikit-learn-25747 (the one 1.3 file that is SWE-bench's 1.3 spec: numpy
# 1.19.2, scipy 1.5.2, cython 3.0.10, pandas < 2, matplotlib < 3.9; the other six were frozen later, with numpy 1.26.4)
_PY39_13 = (
    "contourpy==1.0.5", "cycler==0.11.0", "cython==3.0.10", "exceptiongroup==1.2.0", "fonttools==4.51.0",
    "iniconfig==1.1.1", "joblib==1.4.2", "kiwisolver==1.4.4", "matplotlib==3.6.2", "numpy==1.19.5",
    "packaging==24.1", "pandas==1.4.4", "pillow==11.0.0", "pluggy==1.0.0", "pyparsing==3.2.0", "pytest==7.4.4",
    "python-dateutil==2.9.0.post0", "pytz==2024.1", "scipy==1.5.4", "setuptools==75.1.0", "six==1.16.0",
    "threadpoolctl==3.5.0", "tomli==2.0.1", "wheel==0.44.0",
)

ENVS: tuple[Env, ...] = (
    # setup commits: the earliest Lite base of each version (c753b77a is 10508's, 02dc9ed6 12471's, b34751b7
    # 13779's, 4db04923 25500's), each the merge-base of all of its version's Lite bases
    _sklearn("0.20", "3.6", _PY36, "c753b77ac49e72ebc0fe5e3c2369fe628f975017"),
    _sklearn("0.21", "3.6", _PY36, "02dc9ed680e7f53f1b0d410dcdd37341c7958eb1"),
    _sklearn("0.22", "3.6", _PY36_22, "b34751b7ed02b2cfcc36037fb729d4360480a299"),
    _sklearn("1.3", "3.9", _PY39_13, "4db04923a754b6a2defa1b172f55d492b85d165e"),
)
