"""What an image is built from: the build context lab gives ``docker build`` and the digest of a rendered
Dockerfile together with every file it takes from that context (``COPY`` / ``ADD``).

An image's identity is that digest, not the Dockerfile's text alone: a Dockerfile that copies a script (the
gateway's ``lab_usage.py``, an agent's prefix script) builds another image when the script changes, though its
own text is the same. This module reads files and Dockerfile text only; it knows nothing of Docker or doit.
"""
from __future__ import annotations

import fnmatch
import hashlib
import json
import shlex
from pathlib import Path
from typing import Iterator, Mapping

from rules.config import TEMPLATES

HOST_CA = Path("/etc/ssl/certs/ca-certificates.crt")
HOST_CA_NAME = "ca-certificates.crt"  # the host's CA bundle in the build context
# Left out of the digest: the host's CA bundle is this machine's trust store (differs per machine, changes with
# the OS's updates) and changes nothing an agent or service does; were it in the digest, every result made on
# one machine would be stale on another.
NOT_DIGESTED = (HOST_CA_NAME,)


def image_files(templates: Path | None = None) -> list[Path]:
    """Every file under ``<templates>/images/`` (default: lab's ``templates/``) but Python's bytecode caches (a
    test that imports the grader's lab_grader writes them beside it: they must neither rebuild the image nor
    enter it)."""
    return sorted(p for p in ((templates or TEMPLATES) / "images").rglob("*")
                  if p.is_file() and "__pycache__" not in p.parts and p.suffix != ".pyc")


def context_files(templates: Path | None = None) -> dict[str, bytes]:
    """The build context: every file under ``<templates>/images/`` (default: lab's ``templates/``; no bytecode
    cache), by its path relative to that folder, and the host's CA bundle as ``ca-certificates.crt`` (empty if
    none)."""
    root = (templates or TEMPLATES) / "images"
    files = {p.relative_to(root).as_posix(): p.read_bytes() for p in image_files(templates)}
    files[HOST_CA_NAME] = HOST_CA.read_bytes() if HOST_CA.is_file() else b""
    return files


class Context(Mapping):
    """The build context as a read-only mapping (path → bytes) that reads a file only when asked for it: a
    digest takes a few files of the context, and listing it costs no read. ``extra`` adds files (a test
    fixture's folder: ``rules.services.Service.context_files``)."""

    def __init__(self, extra: Mapping[str, bytes] | None = None):
        self._paths = {p.relative_to(TEMPLATES / "images").as_posix(): p for p in image_files()}
        self._paths[HOST_CA_NAME] = HOST_CA
        self._extra = dict(extra or {})

    def __getitem__(self, key: str) -> bytes:
        if key in self._extra:
            return self._extra[key]
        path = self._paths[key]
        return path.read_bytes() if path.is_file() else b""

    def __iter__(self) -> Iterator[str]:
        return iter(dict.fromkeys([*self._paths, *self._extra]))

    def __len__(self) -> int:
        return len(set(self._paths) | set(self._extra))


def _instructions(dockerfile: str) -> list[str]:
    """The Dockerfile's instructions, one string each: continuation lines (a trailing ``\\``) joined, comments
    and blank lines dropped."""
    out, current = [], ""
    for line in dockerfile.splitlines():
        if not current and line.lstrip().startswith("#"):
            continue
        if line.rstrip().endswith("\\"):
            current += line.rstrip()[:-1] + " "
            continue
        current += line
        if current.strip():
            out.append(current.strip())
        current = ""
    if current.strip():
        out.append(current.strip())
    return out


def copied_sources(dockerfile: str) -> list[str]:
    """The build-context sources of every ``COPY`` and ``ADD`` in ``dockerfile`` (rendered text), in order:
    the arguments but the last (the destination), flags left out, the JSON form read too. A ``COPY --from=``
    takes from another stage or image, not the context: it has none. URLs (``ADD https://...``) are not in the
    context either and are left out."""
    out: list[str] = []
    for instruction in _instructions(dockerfile):
        word, _, rest = instruction.partition(" ")
        if word.upper() not in ("COPY", "ADD"):
            continue
        rest = rest.strip()
        args: list[str]
        flags = []
        while rest.startswith("--"):
            flag, _, rest = rest.partition(" ")
            flags.append(flag)
            rest = rest.strip()
        if any(f.startswith("--from") for f in flags):
            continue
        if rest.startswith("["):
            try:
                args = [str(a) for a in json.loads(rest)]
            except ValueError:
                args = shlex.split(rest)
        else:
            args = shlex.split(rest)
        out += [a for a in args[:-1] if "://" not in a]
    return out


def copied_files(dockerfile: str, context: Mapping[str, bytes]) -> dict[str, bytes | None]:
    """The files of ``context`` (path → bytes, as given to ``docker build``) that ``dockerfile``'s ``COPY`` and
    ``ADD`` take: a source names a file, a folder (every file below it) or a glob pattern. A source that matches
    nothing maps to None (the build fails on it; the digest still names it)."""
    out: dict[str, bytes | None] = {}
    for source in copied_sources(dockerfile):
        src = source.strip("/").removeprefix("./") if source not in (".", "./") else ""
        matched = [k for k in context if not src or k == src or k.startswith(src.rstrip("/") + "/")
                   or fnmatch.fnmatchcase(k, src)]
        for k in matched:
            out[k] = context[k]
        if not matched:
            out[source] = None
    return out


def build_digest(dockerfile: str, context: Mapping[str, bytes]) -> str:
    """SHA-256 (hex) of what an image is built from: the rendered ``dockerfile`` and every file it copies from
    ``context`` (their sorted paths and bytes), but ``NOT_DIGESTED`` (the host's CA bundle)."""
    h = hashlib.sha256()
    h.update(b"dockerfile\0" + dockerfile.encode() + b"\0")
    for path, data in sorted(copied_files(dockerfile, context).items()):
        if path in NOT_DIGESTED:
            continue
        h.update(path.encode() + b"\0")
        h.update(b"-\0" if data is None else hashlib.sha256(data).hexdigest().encode() + b"\0")
    return h.hexdigest()
