"""The tiers lab knows: built in (``BUILT_IN``) and declared by a lab home (``evals/<name>/suite.toml``).

A tier is a class with the interface of ``rules.tier.Tier``. Built-in tiers are named here by import path and
imported on first use (a command about one tier never imports another's modules). Any other tier is declared
by its own folder: ``evals/<name>/suite.toml`` with ``plugin = "module:Class"``; the module is imported with
that folder first on ``sys.path``, so a tier can live entirely in its folder (README.md, Adding a tier). The
generic modules reach tiers only through ``get`` and ``names``.
"""
from __future__ import annotations

import importlib
import sys

from rules.config import EVALS, ConfigError, load_suite

BUILT_IN = {"aider": "rules.tiers.aider:AiderTier", "swe": "rules.tiers.swe:SweTier"}  # name → "module:Class"
_MADE: dict[str, object] = {}


def names() -> list[str]:
    """The tiers of this lab home: the built-in ones, then those with a folder ``evals/<name>/suite.toml``
    (sorted)."""
    here = sorted(p.parent.name for p in EVALS.glob("*/suite.toml"))
    return list(BUILT_IN) + [n for n in here if n not in BUILT_IN]


def present() -> list[str]:
    """The tiers this lab home has a folder for (``evals/<name>/suite.toml``), in ``names()`` order."""
    return [n for n in names() if (EVALS / n / "suite.toml").is_file()]


def _path(name: str) -> str:
    """The ``module:Class`` of tier ``name``: its suite.toml's ``plugin``, else the built-in one."""
    if (EVALS / name / "suite.toml").is_file():
        plugin = load_suite(name).table.get("plugin")
        if plugin:
            return str(plugin)
    if name in BUILT_IN:
        return BUILT_IN[name]
    if (EVALS / name / "suite.toml").is_file():
        raise ConfigError(f"{EVALS / name / 'suite.toml'}: tier {name!r} is not built in; give its class as "
                          "plugin = \"module:Class\" (README.md, Adding a tier)")
    raise ConfigError(f"unknown tier {name!r}; the tiers here: {', '.join(names())}")


def get(name: str):
    """The tier ``name`` (made once per process). Raises ConfigError naming the known tiers when there is no
    such tier, and naming the plugin when its module or class cannot be loaded."""
    if name in _MADE:
        return _MADE[name]
    path = _path(name)
    module_name, _, cls_name = path.partition(":")
    folder = str(EVALS / name)
    if folder not in sys.path:
        sys.path.insert(0, folder)  # a tier's own module may live in its folder
    try:
        cls = getattr(importlib.import_module(module_name), cls_name)
    except (ImportError, AttributeError) as exc:
        raise ConfigError(f"tier {name!r}: plugin {path!r} does not load ({exc}); give plugin = \"module:Class\" "
                          f"importable from {folder} or the Python path") from None
    tier = cls()
    if getattr(tier, "name", None) != name:
        raise ConfigError(f"tier {name!r}: its class {path} says its name is {getattr(tier, 'name', None)!r}; "
                          "the two must be the same")
    _MADE[name] = tier
    return tier


def made() -> dict[str, object]:
    """The tiers this process has made so far (name → tier), for tests of what a command imports."""
    return dict(_MADE)


def groups_of(name: str | None) -> tuple[str, ...]:
    """The group keys of tier ``name`` (its ``groups``: the labels its records carry as top-level keys); () for
    a record that names no tier. Raises ConfigError, as ``get``, for an unknown tier."""
    return tuple(get(name).groups) if name else ()
