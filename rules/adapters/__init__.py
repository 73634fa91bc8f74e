"""Agent adapters: what lab knows of one built-in agent's output, one module per agent.

An agent's table in ``evals/agents.toml`` names its adapter (``adapter = "claude-code"``); the module is
``rules.adapters.<name with "-" as "_">``, found by name, so adding an agent's adapter is adding one file. A
module exports:

``usage(output: str, out_dir: Path) -> dict | None``
    the tokens and cost of one try from the agent's console ``output`` and the files it left in ``/lab/out``
    (``out_dir`` on the host): ``{"tokens_sent": int, "tokens_received": int, "tokens_cached": int | None,
    "cost": float | None}`` (USD). ``cost`` is None unless the agent reports a price of a model it knows:
    unknown cost stays unknown, never 0. None when the agent reported nothing.
``ERRORS``
    ``((kind, regex), ...)`` tried in order on each output line: what the agent prints when its model
    provider refused or never answered (kinds: auth, rate_limit, quota, connection, unavailable, model,
    provider). Such a try, with no tokens sent, makes the trial an ``error``, not a ``fail``.
``trajectory(output: str, out_dir: Path) -> dict | None`` (optional)
    the try's steps in one shape for every agent, after Harbor's ATIF v1.7
    (docs/content/docs/agents/trajectory-format.mdx in harbor-framework/harbor): ``{"schema_version",
    "agent": {"name", "version", "model_name"}, "steps": [{"step_id", "source" ("user" | "agent" | "system"),
    "message", "tool_calls": [{"tool_call_id", "function_name", "arguments"}], "observation": {"results":
    [{"source_call_id", "content"}]}, "metrics": {"prompt_tokens", "completion_tokens", "cached_tokens",
    "cost_usd"}}], "final_metrics": {...}}``; keys without a value are left out.
"""
from __future__ import annotations

import importlib
import pkgutil
import re
from functools import lru_cache
from pathlib import Path
from types import ModuleType

from rules.config import ConfigError

TRAJECTORY_SCHEMA = "ATIF-v1.7"
USAGE_KEYS = ("tokens_sent", "tokens_received", "tokens_cached", "cost")
ERROR_KINDS = ("auth", "rate_limit", "quota", "connection", "unavailable", "model", "provider")
_NAME = re.compile(r"^[a-z][a-z0-9-]{0,40}$")


class AdapterError(ConfigError):
    """An adapter that does not exist or is malformed."""


def names() -> list[str]:
    """The adapters lab has, by the name an agent's table gives (``claude-code``), sorted."""
    here = Path(__file__).parent
    return sorted(m.name.replace("_", "-") for m in pkgutil.iter_modules([str(here)]) if not m.name.startswith("_"))


@lru_cache(maxsize=None)
def get(name: str) -> ModuleType:
    """The adapter module called ``name``. Raises AdapterError naming the known adapters when there is none,
    or when the module lacks ``usage`` or ``ERRORS``."""
    if not _NAME.match(name or "") or name not in names():
        raise AdapterError(f"adapter {name!r} is unknown; known: {', '.join(names())} "
                           "(one module each in rules/adapters/)")
    module = importlib.import_module(f"{__name__}.{name.replace('-', '_')}")
    missing = [n for n in ("usage", "ERRORS") if not hasattr(module, n)]
    if missing:
        raise AdapterError(f"rules/adapters/{module.__name__.rsplit('.', 1)[1]}.py lacks {', '.join(missing)}")
    bad = [kind for kind, _ in module.ERRORS if kind not in ERROR_KINDS]
    if bad:
        raise AdapterError(f"{module.__name__}: error kinds {bad} are not among {', '.join(ERROR_KINDS)}")
    return module


@lru_cache(maxsize=None)
def _error_res(name: str) -> tuple[tuple[str, re.Pattern], ...]:
    return tuple((kind, re.compile(rx)) for kind, rx in get(name).ERRORS)


def provider_error(name: str, output: str) -> dict | None:
    """The first provider error in an agent's ``output`` by adapter ``name``'s ``ERRORS``: ``{"kind",
    "message"}`` (the line, stripped, at most 300 characters); None when no line matches."""
    rows = _error_res(name)
    for line in output.splitlines():
        for kind, rx in rows:
            if rx.search(line):
                return {"kind": kind, "message": line.strip()[:300]}
    return None


def usage(name: str, output: str, out_dir: Path) -> dict | None:
    """Adapter ``name``'s reading of one try's usage (see the module's docstring), with every key of
    ``USAGE_KEYS`` present; None when the agent reported nothing."""
    found = get(name).usage(output, Path(out_dir))
    return None if found is None else {key: found.get(key) for key in USAGE_KEYS}


def trajectory(name: str, output: str, out_dir: Path) -> dict | None:
    """Adapter ``name``'s trajectory of one try (ATIF-shaped, see the module's docstring), with the try's
    ``final_metrics`` from its usage unless the adapter gives them; None when the adapter has none or the agent
    left nothing to read."""
    make = getattr(get(name), "trajectory", None)
    if make is None:
        return None
    found = make(output, Path(out_dir))
    if found is None:
        return None
    found.setdefault("schema_version", TRAJECTORY_SCHEMA)
    totals = usage(name, output, out_dir) if "final_metrics" not in found else None
    if totals:  # the try's totals, as its usage reads them, unless the adapter gave its own
        found["final_metrics"] = {key: value for key, value in (
            ("total_prompt_tokens", totals["tokens_sent"]), ("total_completion_tokens", totals["tokens_received"]),
            ("total_cached_tokens", totals["tokens_cached"]), ("total_cost_usd", totals["cost"])) if value is not None}
    return found
