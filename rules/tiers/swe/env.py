"""One environment image of the swe tier: the ``Env`` record every repository's table (``rules/tiers/swe/envs/``)
is made of."""
from __future__ import annotations

import hashlib
from dataclasses import dataclass, field

IMAGE_PREFIX = "lab/swe-env"
STAMP_PREFIX = "swe-env-"  # an image's stamp: .lab/images/<this><name>.json
# what an environment's ``build_trees`` leave out of the build context: test images, documentation and examples,
# which no build reads (the paths start with one of these folders, or hold ``/baseline_images/``)
BUILD_TREE_SKIP = ("doc/", "examples/", "galleries/", "tutorials/", "plot_types/", ".github/", ".circleci/")


@dataclass(frozen=True)
class Env:
    """One environment image: ``name`` (its tag suffix), the ``repo``, the ``versions`` it serves, the Debian
    ``suite`` giving its ``python``, the ``install`` shell steps run in ``/opt/lab/setup`` (the repository at the
    instance's environment-setup commit, when ``setup_source``) or ``/opt/lab``, ``pins`` (pip constraints),
    extra ``apt`` packages, the ``pythonpath`` folder of the work tree put first on the path (``src``, ``.``; empty: none, the
    test run's working folder /work is on it anyway), ``prepare`` shell lines check.sh runs as root in the work tree before the tests (``{version}`` is
    the instance's version), ``test_env`` (extra environment of the test run), ``only`` (the instance ids it
    serves, ahead of entries matched by version), ``exclude`` (test names dropped from every expectation) and
    ``runner``: how check.sh runs the tests and names them (``rules.tiers.swe.runners``: "pytest", or "django" for
    django's own ``tests/runtests.py``); ``build``: shell lines the tester runs in the work tree after the canaries
    are laid and before the tests (check.sh), and first in the agents' test command: a repository with compiled
    extensions builds the graded tree's own there (``envs/sklearn.py``); ``setup_commit``: the commit whose tree is
    ``/opt/lab/setup`` in place of the instance's environment-setup commit (one every served base commit descends
    from, when the image keeps anything built from it); ``build_trees``: commits of the repository whose trees (less
    ``BUILD_TREE_SKIP``) the image's install steps find at ``/opt/lab/trees/<commit>/``, e.g. to compile them once so that a grading's
    build of its own work tree reuses the outputs of byte-identical sources (``envs/matplotlib.py``)."""

    name: str
    repo: str
    versions: tuple[str, ...]
    python: str
    suite: str
    install: tuple[str, ...]
    pins: tuple[str, ...] = ()
    apt: tuple[str, ...] = ()
    pythonpath: str = ""
    setup_source: bool = True
    prepare: tuple[str, ...] = ()
    test_env: tuple[tuple[str, str], ...] = ()
    only: tuple[str, ...] = ()  # when given: the instances it serves (before any entry serving by version)
    exclude: tuple[str, ...] = ()  # SWE-bench test names never expected (they need a network): recorded in task.json
    # set by ``with_interpreter`` when Debian's suite lacks ``python``: the interpreter's version (part of the
    # image's identity) and its folder on this machine (not: the same interpreter elsewhere is the same image)
    interpreter: str = ""
    interpreter_dir: str = field(default="", repr=False, compare=False)
    # out of repr so that the entries running pytest keep the digest they had before runners were named
    runner: str = field(default="pytest", repr=False)
    # out of repr for the same reason: the entries without them keep their digests
    build: tuple[str, ...] = field(default=(), repr=False)
    setup_commit: str = field(default="", repr=False)
    build_trees: tuple[str, ...] = field(default=(), repr=False)

    @property
    def tag(self) -> str:
        return f"{IMAGE_PREFIX}:{self.name}"

    @property
    def stamp_name(self) -> str:
        return f"{STAMP_PREFIX}{self.name}"

    @property
    def base(self) -> str:
        return f"debian:{self.suite}"

    def digest(self) -> str:
        """What a change of this entry must rebuild (the image) and re-prove (its tasks)."""
        text = repr(self) + ("" if self.runner == "pytest" else f" runner={self.runner}")
        text += (f" build={self.build!r}" if self.build else "") + (f" setup_commit={self.setup_commit}"
                                                                   if self.setup_commit else "")
        text += f" build_trees={','.join(self.build_trees)}" if self.build_trees else ""
        return hashlib.sha256(text.encode()).hexdigest()[:16]
