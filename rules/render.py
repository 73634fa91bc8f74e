"""The Jinja2 environment over ``templates/``: strict about undefined names, with shell-quoting filters."""
from __future__ import annotations

import posixpath
import shlex
from functools import lru_cache
from pathlib import Path

from rules.config import TEMPLATES


@lru_cache(maxsize=1)
def environment():
    """A Jinja2 environment loading from ``templates/``; an undefined variable is an error, not ''.

    Filters: ``q`` quotes a string for POSIX shells; ``dirname`` is the folder of a relative path ('.' at
    the top).
    """
    import jinja2

    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(TEMPLATES)),
        undefined=jinja2.StrictUndefined,
        keep_trailing_newline=True,
        autoescape=False,
    )
    env.filters["q"] = lambda s: shlex.quote(str(s))
    env.filters["dirname"] = lambda s: posixpath.dirname(str(s)) or "."
    return env


def render(template: str, **context) -> str:
    """Render ``templates/<template>`` with ``context``; raises jinja2 errors on a bad template."""
    return environment().get_template(template).render(**context)


def template_files(*folders: str) -> list[Path]:
    """Every file in the given ``templates/`` sub-folders (not recursive into others), sorted: what a render
    that uses them depends on."""
    out: list[Path] = []
    for folder in folders:
        base = TEMPLATES / folder
        out += [p for p in base.glob("*") if p.is_file()]
    return sorted(out)
