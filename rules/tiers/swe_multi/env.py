"""One environment image of the swe-multi tier: a repository at one dataset version (in SWE-bench Multilingual
each instance has a version of its own) with its language's toolchain and its dependencies fetched at build time,
so that every grading runs offline."""
from __future__ import annotations

import hashlib
from dataclasses import dataclass

IMAGE_PREFIX = "lab/swe-multi-env"
STAMP_PREFIX = "swe-multi-env-"  # an image's stamp: .lab/images/<this><name>.json
RECIPE = 1  # raise when an image's recipe changes in a way its templates do not show (its digest changes)


@dataclass(frozen=True)
class Env:
    """``name`` (its tag suffix: ``gin-4003``), the ``repo`` and dataset ``version`` it serves, its ``language``
    (a runner of ``rules.tiers.swe_multi.RUNNERS``), the ``toolchain`` version (Go: ``1.23.8``) and the Debian
    ``suite`` it is built on."""

    name: str
    repo: str
    version: str
    language: str
    toolchain: str
    suite: str = "bookworm"

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
        return hashlib.sha256(f"{self!r} recipe={RECIPE}".encode()).hexdigest()[:16]


def env_name(repo: str, version: str) -> str:
    """``gin-gonic/gin`` at ``4003`` → ``gin-4003`` (a tag suffix: lower case, ``[a-z0-9.-]``)."""
    short = repo.split("/", 1)[-1].lower()
    return "".join(c if c.isalnum() or c in ".-" else "-" for c in f"{short}-{version}")


def table_toolchain(repo: str, version: str, extra: dict | None, table: dict) -> str | None:
    """The toolchain a runner's environment of ``repo`` at dataset ``version`` takes: suite.toml's
    ``[toolchains."owner/name"]`` (``extra``: repo → {version: toolchain}) ahead of the runner's own ``table`` (the
    same shape); None when neither names one. Each runner checks the value its own way."""
    return ((extra or {}).get(repo) or {}).get(version) or table.get(repo, {}).get(version)
