"""Which language each repository of SWE-bench Multilingual is in, and why an instance cannot be built here.

Every one of the dataset's 41 repositories is named here with its language (SWE-bench v4.1.0 groups them so in
``swebench/harness/constants/{c,go,java,javascript,php,ruby,rust}.py``; C++'s fmt and nlohmann/json sit with C).
``blocked(repo)`` is the reason an instance of a repository cannot be built on this machine kind, naming what is
missing (../shared/notes/swe-coverage.md, section 4: the package registries reachable here are Debian's, PyPI,
npm, crates.io, Maven Central and the Go module proxy); None when its language has a runner
(``rules.tiers.swe_multi.RUNNERS``). So every instance of the dataset is either a candidate or rejected with a
reason, and ``doit gen:swe-multi all=1`` accounts for all of them.
"""
from __future__ import annotations

LANGUAGES = {
    # C and C++ (SWE-bench's c.py)
    "redis/redis": "c", "jqlang/jq": "c", "micropython/micropython": "c", "valkey-io/valkey": "c",
    "fmtlib/fmt": "c", "nlohmann/json": "c",
    # Go (go.py)
    "caddyserver/caddy": "go", "gin-gonic/gin": "go", "prometheus/prometheus": "go", "gohugoio/hugo": "go",
    "hashicorp/terraform": "go",
    # Java (java.py)
    "projectlombok/lombok": "java", "apache/lucene": "java", "google/gson": "java", "apache/druid": "java",
    "javaparser/javaparser": "java", "reactivex/rxjava": "java",
    # JavaScript and TypeScript (javascript.py)
    "preactjs/preact": "javascript", "axios/axios": "javascript", "babel/babel": "javascript",
    "facebook/docusaurus": "javascript", "vuejs/core": "javascript", "mrdoob/three.js": "javascript",
    "immutable-js/immutable-js": "javascript",
    # PHP (php.py)
    "laravel/framework": "php", "briannesbitt/carbon": "php", "php-cs-fixer/php-cs-fixer": "php",
    "phpoffice/phpspreadsheet": "php",
    # Ruby (ruby.py)
    "rubocop/rubocop": "ruby", "fluent/fluentd": "ruby", "fastlane/fastlane": "ruby", "jekyll/jekyll": "ruby",
    "faker-ruby/faker": "ruby", "jordansissel/fpm": "ruby",
    # Rust (rust.py)
    "tokio-rs/tokio": "rust", "sharkdp/bat": "rust", "astral-sh/ruff": "rust", "tokio-rs/axum": "rust",
    "nushell/nushell": "rust", "uutils/coreutils": "rust", "burntsushi/ripgrep": "rust",
}

NAMES = {"c": "C/C++", "go": "Go", "java": "Java", "javascript": "JavaScript/TypeScript", "php": "PHP",
         "ruby": "Ruby", "rust": "Rust"}

# What no build here can have: the registry or distribution each needs is not reachable from this machine kind
UNREACHABLE = {
    "php": "needs Packagist (PHP's package registry, for its composer dependencies), not reachable here",
    "ruby": "needs rubygems.org (Ruby's gem registry, for its bundler dependencies), not reachable here",
}
# Gradle builds: the wrapper downloads the Gradle distribution from Gradle's own distribution server, whose name
# does not resolve here (checked 2026-12-07: curl answers "Could not resolve host"; Debian's gradle is 4.4.1, far
# older than these builds need). The plugin portal did answer then, but no build starts without the distribution.
GRADLE = frozenset({"apache/lucene", "reactivex/rxjava"})
GRADLE_REASON = "needs the Gradle distribution (its wrapper's download), whose server is not reachable here"
# Ant and Ivy builds: lab's Java runner builds Maven projects (rules/tiers/swe_multi/java.py)
ANT = frozenset({"projectlombok/lombok"})
ANT_REASON = "builds with Ant and Ivy; lab's Java runner builds Maven projects only (no Ant runner yet)"
# Repositories of a language that has a runner, whose build or test format that runner does not handle yet, and
# why (C/C++'s runner, rules/tiers/swe_multi/c.py, builds CMake projects with googletest binaries: fmt;
# JavaScript's, rules/tiers/swe_multi/javascript.py, npm projects tested with jest or mocha)
PENDING = {
    "jqlang/jq": "lab's C/C++ runner reads googletest reports only; jq's automake `make check` results (.trs) "
                 "have no reader yet",
    "redis/redis": "lab's C/C++ runner reads googletest reports only; redis's Tcl test suite (./runtest) has no "
                   "reader yet",
    "valkey-io/valkey": "lab's C/C++ runner reads googletest reports only; valkey's Tcl test suite (./runtest) has "
                        "no reader yet",
    "micropython/micropython": "lab's C/C++ runner reads googletest reports only; micropython's run-tests.py "
                               "results have no reader yet",
    "nlohmann/json": "lab's C/C++ runner reads googletest reports only; nlohmann/json's doctest XML has no reader "
                     "yet",
    "preactjs/preact": "its tests run in a browser through karma (SWE-bench: Chrome headless); lab's JavaScript "
                       "runner has no browser (Debian's chromium could serve: not built yet)",
    "babel/babel": "a yarn-berry monorepo built by `make bootstrap` before jest; lab's JavaScript runner installs "
                   "with npm only (not built yet)",
    "facebook/docusaurus": "a yarn-workspaces monorepo; lab's JavaScript runner installs with npm only (not built "
                           "yet)",
    "vuejs/core": "a pnpm monorepo tested with vitest; lab's JavaScript runner installs with npm and runs jest or "
                  "mocha only (not built yet)",
    "mrdoob/three.js": "tested with QUnit (TAP names); lab's JavaScript runner runs jest or mocha only (not built "
                       "yet)",
}


def language(repo: str, extra: dict | None = None) -> str | None:
    """The language of ``repo`` (``owner/name``): one of ``NAMES``' keys, or None for a repository not in
    SWE-bench Multilingual. ``extra``: more repositories (suite.toml's ``[languages]``), ahead of the table."""
    return (extra or {}).get(repo) or LANGUAGES.get(repo)


def blocked(repo: str, runners: frozenset[str] | set[str], extra: dict | None = None) -> str | None:
    """Why an instance of ``repo`` cannot be built here (one line naming what is missing), given the languages
    lab has a runner for (``runners``) and ``extra`` repositories (as ``language``); None when it is a
    candidate."""
    lang = language(repo, extra)
    if lang is None:
        return (f"{repo} is not a repository of SWE-bench Multilingual; lab's table "
                "(rules/tiers/swe_multi/languages.py) names no language for it: give it in evals/swe-multi/suite.toml "
                "[languages]")
    if lang not in NAMES:
        return f"{repo}: language {lang!r} is none of {', '.join(NAMES)} (evals/swe-multi/suite.toml [languages])"
    if lang in UNREACHABLE:
        return UNREACHABLE[lang]
    if repo in GRADLE:
        return GRADLE_REASON
    if repo in ANT and lang in runners:
        return ANT_REASON
    if lang not in runners:
        return (f"{NAMES[lang]} is not supported by lab's swe-multi tier yet (no runner module for it in "
                "rules/tiers/swe_multi/)")
    if repo in PENDING and not (extra or {}).get(repo):
        return PENDING[repo]
    return None


def accounting(instances, runners, extra: dict | None = None) -> dict:
    """How a dataset's ``instances`` (``rules.tiers.swe.swebench.Instance`` records, or anything with ``id`` and
    ``repo``) divide: ``{"total": n, "candidates": [ids], "rejected": {id: reason}, "by_language": {language:
    {"total", "candidates"}}, "reasons": {reason: count}}``."""
    out = {"total": 0, "candidates": [], "rejected": {}, "by_language": {}, "reasons": {}}
    for inst in instances:
        out["total"] += 1
        lang = language(inst.repo, extra) or "?"
        row = out["by_language"].setdefault(lang, {"total": 0, "candidates": 0})
        row["total"] += 1
        why = blocked(inst.repo, runners, extra)
        if why is None:
            out["candidates"].append(inst.id)
            row["candidates"] += 1
        else:
            out["rejected"][inst.id] = why
            out["reasons"][why] = out["reasons"].get(why, 0) + 1
    return out
