"""Agents: their definitions (``evals/agents.toml``), their images, and how a trial invokes one.

An agent is a few lines of TOML (see the comment at the top of ``evals/agents.toml``): an image (a Dockerfile
template built ``FROM`` the grader image), a command line with placeholders, the names of the environment
variables passed through (their values are read at run time and never written to disk), a network mode and
limits. This module parses and checks definitions, renders the command and the Dockerfile, and reads the
tokens and cost an agent reports. It knows nothing of Docker or doit.

Settings and runs: an agent may declare *settings* (``[NAME.settings]``, e.g. ``model = { env = "AIDER_MODEL" }``),
non-secret values that change its behaviour. Their values come from the command line (``model=X``), else the
environment variable, else the setting's ``default``; they reach the container as that environment variable and
are part of the agent's identity: its digest, and the *run* (``Agent.run``: the agent name, or
``<agent>.<slug of the values>``) that names the results folder ``evals/<tier>/runs/<run>/``. Two models of one
agent are two runs side by side.

Inside the agent's container (the only things mounted; one container for all the tries of a trial unless the
definition says ``container = "try"``):
  ``/work``               the work tree, read-write (the working directory)
  ``/lab/in/prompt.txt``  the prompt of this try, read-only
  ``/lab/out/``           an empty private folder, read-write: ``usage.json`` there reports usage
"""
from __future__ import annotations

import hashlib
import json
import os
import re
import shlex
import stat
import tomllib
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Iterable, Mapping

from rules import adapters
from rules.config import EVALS, ROOT, TEMPLATES, ConfigError, Limits, check_fields, field_problems
from rules.services import (BUDGET_KINDS, GATEWAY_PORT, Budget, Service, gateway_service, parse_budget, parse_gateway,
                            parse_service)

AGENTS_FILE = EVALS / "agents.toml"
DEFINITION_FORMAT = 1  # bump when the meaning of a definition's fields changes: every trial is redone
WORK = "/work"
IN_DIR = "/lab/in"
PROMPT = f"{IN_DIR}/prompt.txt"
OUT_DIR = "/lab/out"
USAGE_FILE = "usage.json"  # in OUT_DIR: {"tokens_sent": N, "tokens_received": N, "cost": USD}
NETWORKS = ("none", "bridge", "host", "service")  # "service": the network namespace of the agent's service
FIELDS = ("image", "command", "env", "env_optional", "env_any", "env_set", "network", "limits", "adapter", "usage", "build",
          "settings", "errors", "service", "container", "gateway", "local")
# how a trial runs the agent's container: "trial" one container for all its tries (each try a command run in it),
# "try" a fresh container for each try
CONTAINER_MODES = ("trial", "try")
REQUIRED = ("image", "command")
NAME = re.compile(r"^[a-z0-9][a-z0-9_.-]{0,62}$")
PLACEHOLDER = re.compile(r"\{(prompt|work|files|out|try|test_cmd)\}")
ENV_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
DEFAULT_GRADER = "lab/grader:latest"
RUN_FORMAT = 1  # version of a run folder's run.json
SETTING_NAME = re.compile(r"^[a-z][a-z0-9_]{0,31}$")
SETTING_FIELDS = ("env", "default")
# lab's own command-line variables (rules/cli.py checks them): a setting may not take one of these names
LAB_VARIABLES = ("agent", "agents", "all", "attempts", "backend", "cluster", "dataset", "dry", "instances", "jobs",
                 "langs", "limit", "predictions", "ref", "repeat", "repos", "reprove", "strict", "suite", "tries",
                 "upstream")
# a setting's value is written to disk (run.json, result.json): one whose variable looks like a secret is refused
SECRET_LIKE = re.compile(r"KEY|TOKEN|SECRET|PASSW|CREDENTIAL|AUTH", re.I)


class AgentError(ConfigError):
    """An agent is unknown, badly defined or cannot run here; the message lists what is known or needed."""


@dataclass(frozen=True)
class Setting:
    """One declared setting of an agent: its name (the command-line variable, ``model=``), the environment
    variable that carries its value into the container (and is read from the caller's shell when the command
    line gives none), and its default (None: a value is required; "": no value unless one is given, and the
    setting is then left out of the run id and the container's environment)."""

    name: str
    env: str
    default: str | None = None


def slug(value: str) -> str:
    """A setting value as a folder-name part: runs of characters outside ``A-Za-z0-9._-`` become one ``-``
    (``openai/gpt-4o`` → ``openai-gpt-4o``); never empty, never starting with a dot."""
    out = re.sub(r"[^A-Za-z0-9._-]+", "-", value).strip("-.")
    return out[:80] or "-"


LOCAL = "local"  # the model setting's value that runs an agent against lab's local model (README.md, model=local)
LOCAL_FIELDS = ("env_set", "model", "served_by", "requests", "tokens", "reply_tokens", "timeout", "settings")
LOCAL_SOURCE = "aider-local"  # the agent whose service is lab's local model, unless a [NAME.local] names another


@dataclass(frozen=True)
class Local:
    """How an agent reaches lab's local model on a ``model=local`` run (its ``[NAME.local]`` table): the
    variables that point it at lab's gateway (``env_set``: its base URL and key), the model name it asks for
    (``model``; default: the name the local server gives its model), ``served_by``, the agent whose
    ``[service]`` runs the local model (its ``service``, attached when agents.toml is loaded), the per-try
    ``budget`` at the gateway on such a run (``requests``, ``tokens``, ``reply_tokens``; none given: the agent's
    ``[NAME.limits]`` one), ``timeout`` (seconds of a try on such a run, in place of ``[NAME.limits]``': a local
    model on the machine's own CPU answers far slower than a provider; None: the agent's own) and
    ``settings``, the values its other settings take on such a run unless the command line or their variable
    gives one (``(("config", "mini_textbased.yaml"),)``: a local model answers tool calls with text)."""

    env_set: tuple[tuple[str, str], ...]
    model: str | None = None
    served_by: str = LOCAL_SOURCE
    service: Service | None = None
    budget: Budget = Budget()
    timeout: float | None = None
    settings: tuple[tuple[str, str], ...] = ()


@dataclass(frozen=True)
class Agent:
    """One agent definition.

    ``image`` names the Dockerfile template (a bare name: ``templates/images/agents/<name>.Dockerfile.j2``; a
    path with a ``/``: relative to the project root); ``command`` is the exec-form command with placeholders;
    ``env`` / ``env_optional`` are names passed through from the caller's environment (``env``: each must be
    set), ``env_any`` names of ``env_optional`` of which at least one must be set (a key or a base URL: an
    agent that has neither would end every trial in a provider error), ``env_set`` fixed values; ``network`` a Docker network mode; ``limits`` the container's limits (``timeout``: seconds per
    try); ``usage`` the adapter (``rules.adapters``) that reads its tokens, cost and trajectory (or None); ``build``
    extra variables for the Dockerfile template; ``errors`` the adapter whose provider-error table reads its
    output (or None); the TOML's ``adapter = NAME`` sets both;
    ``container`` how a trial runs its container (``CONTAINER_MODES``: "trial", one container whose state
    lasts across the trial's tries, or "try", a fresh one per try).
    """

    name: str
    image: str
    command: tuple[str, ...]
    env: tuple[str, ...] = ()
    env_optional: tuple[str, ...] = ()
    env_set: tuple[tuple[str, str], ...] = ()
    env_any: tuple[str, ...] = ()  # not in definition(): what must be set changes nothing a trial does
    network: str = "none"
    limits: Limits = field(default_factory=Limits)
    usage: str | None = None
    build: tuple[tuple[str, str], ...] = ()
    settings: tuple[Setting, ...] = ()
    values: tuple[tuple[str, str], ...] = ()  # the settings' values (declaration order), set by resolve()
    errors: str | None = None
    service: Service | None = None  # a container started beside the agent's for each trial (rules.services)
    container: str = "trial"  # one of CONTAINER_MODES
    gateway: Service | None = None  # lab's model gateway in the service's namespace (rules.services.parse_gateway)
    budget: Budget = Budget()  # per-try requests and tokens at the gateway ([NAME.limits] requests, tokens)
    local: Local | None = None  # how model=local reaches lab's local model; not in definition(): see resolve()
    served_model: str | None = None  # on a model=local run: the model name the agent is given (its model variable)

    def definition(self) -> dict:
        """The definition as plain JSON data (what the run's stamp file holds): env *names*, never env values;
        for an agent with settings, each setting's variable and value (values are not secrets). An agent
        without settings has exactly the definition it had before settings existed (its results stay valid)."""
        out = {
            "format": DEFINITION_FORMAT, "name": self.name, "image": self.image, "command": list(self.command),
            "env": list(self.env), "env_optional": list(self.env_optional), "env_set": dict(self.env_set),
            "network": self.network, "usage": self.usage, "build": dict(self.build), "errors": self.errors,
            "limits": {"cpus": self.limits.cpus, "memory": self.limits.memory, "pids": self.limits.pids,
                       "timeout": self.limits.timeout, "disk": self.limits.disk},
            # only present when declared, so the digests (and trials) of agents without a service stay as they were
            **({"service": self.service.definition()} if self.service else {}),
            **({"container": self.container} if self.container != "trial" else {}),  # likewise
            **({"gateway": self.gateway.definition()} if self.gateway else {}),  # likewise
            **({"budget": self.budget.definition()} if self.budget != Budget() else {}),  # likewise
        }
        if self.settings:
            values = dict(self.values)
            out["settings"] = {s.name: {"env": s.env, "value": values.get(s.name)} for s in self.settings}
        return out

    def resolve(self, variables: Mapping[str, str | None] | None = None,
                environ: Mapping[str, str] = os.environ) -> "Agent":
        """This agent with its settings' values: ``variables[name]`` (the command line), else
        ``environ[setting.env]``, else the setting's default. Raises AgentError naming every setting that has
        no value and how to give one."""
        variables = variables or {}
        values, missing = [], []
        local = dict(self.local.settings) if self.local and self._asks_local(variables, environ) else {}
        for s in self.settings:
            value = variables.get(s.name) or environ.get(s.env) or local.get(s.name) or s.default
            if value:
                values.append((s.name, str(value)))
            elif s.default is None:
                missing.append(s)  # default "" means: left out unless given
        if missing:
            how = "; ".join(f"{s.name}: give {s.name}=VALUE on the command line or set {s.env}" for s in missing)
            raise AgentError(f"agent {self.name!r} needs a value for its setting(s) "
                             f"{', '.join(s.name for s in missing)} ({how})")
        if ("model", LOCAL) in values:
            return self._on_local(tuple(values))
        return replace(self, values=tuple(values))

    def _asks_local(self, variables: Mapping[str, str | None], environ: Mapping[str, str]) -> bool:
        """Whether the model setting's value (command line, else its variable, else its default) is ``local``."""
        model = next((s for s in self.settings if s.name == "model"), None)
        return model is not None and (variables.get("model") or environ.get(model.env) or model.default) == LOCAL

    def local_services(self) -> tuple[Service, ...]:
        """The images a ``model=local`` run of this agent starts beside it (the local model, the gateway in
        front of it); () when it has no ``[NAME.local]`` or the local model is not defined."""
        try:
            on = self._on_local(self.values)
        except AgentError:
            return ()
        return (on.service, on.gateway)

    def _on_local(self, values: tuple) -> "Agent":
        """This agent on a ``model=local`` run: beside each trial lab's local model (the ``[service]`` of
        ``local.served_by``) and lab's gateway in front of it, the agent in their network namespace (no outside
        network), pointed at the gateway by ``local.env_set``, asking for ``local.model``. Its definition (and
        digest, and run) is its own: the service and gateway are in it. Raises AgentError when the agent has no
        ``[NAME.local]`` table or the local model is not defined."""
        local = self.local
        if local is None:
            raise AgentError(f"agent {self.name!r} has no [{self.name}.local] table, so model=local cannot reach lab's "
                             "local model: add one with the variables that point it at lab's gateway (README.md)")
        if local.service is None:
            raise AgentError(f"agent {self.name!r}: model=local runs lab's local model, the [service] of agent "
                             f"{local.served_by!r}, which evals/agents.toml does not define")
        if not local.service.model:
            raise AgentError(f"agent {self.name!r}: model=local needs the name lab's local model is served under: "
                             f"give [{local.served_by}.service] model = \"...\" (the name its server gives it)")
        budget = local.budget if local.budget != Budget() else self.budget
        gateway = gateway_service(local.service, local.service.model, GATEWAY_PORT, budget=budget)
        mine = dict(local.env_set)  # the gateway's URL and key: never a variable of the caller's shell over them
        limits = self.limits if local.timeout is None else replace(self.limits, timeout=local.timeout)
        return replace(self, values=values, service=local.service, gateway=gateway, network="service", budget=budget,
                       limits=limits,
                       env_set=tuple(sorted({**dict(self.env_set), **mine}.items())), env_any=(),
                       env=tuple(n for n in self.env if n not in mine),
                       env_optional=tuple(n for n in self.env_optional if n not in mine),
                       served_model=local.model or local.service.model)

    def with_values(self, values: Mapping[str, str]) -> "Agent":
        """This agent with the given settings' values (e.g. a run.json's ``settings``). Raises AgentError
        when a declared setting has no value or a value names no declared setting."""
        unknown = sorted(set(values) - {s.name for s in self.settings})
        if unknown:
            raise AgentError(f"agent {self.name!r} has no setting(s) {', '.join(unknown)}; "
                             f"its settings: {', '.join(s.name for s in self.settings) or 'none'}")
        return self.resolve(values, environ={})

    @property
    def run(self) -> str:
        """The run id, the results folder's name: the agent's name when it has no setting values, else
        ``<name>.<slug of each value>`` joined by dots (``aider.openai-gpt-4o``)."""
        if not self.values:
            return self.name
        return ".".join([self.name] + [slug(v) for _, v in self.values])

    @property
    def label(self) -> str:
        """How the report names the run: ``aider (openai/gpt-4o)``; the bare name without setting values."""
        if not self.values:
            return self.name
        return f"{self.name} ({', '.join(v for _, v in self.values)})"

    def run_record(self, run: str | None = None) -> dict:
        """The run folder's ``run.json``: ``{"version", "run", "agent", "settings": {name: value}, "label"}``."""
        return {"version": RUN_FORMAT, "run": run or self.run, "agent": self.name, "settings": dict(self.values),
                "label": self.label}

    @property
    def digest(self) -> str:
        """SHA-256 (hex) of the definition: a trial records it, and a trial of another digest is stale."""
        return hashlib.sha256(json.dumps(self.definition(), sort_keys=True).encode()).hexdigest()

    def service_images(self) -> list[str]:
        """The doit tasks that build the images its trials start beside it (its service, its gateway)."""
        return [f"service_image:{s.stamp_name}" for s in (self.service, self.gateway) if s is not None]



    @property
    def stamp_name(self) -> str:
        """The image stamp's name (``.lab/images/agent-<name>.json``)."""
        return f"agent-{self.name}"

    def template_path(self) -> Path:
        """The Dockerfile template's file. Raises AgentError when it does not exist."""
        path = (ROOT / self.image) if "/" in self.image else TEMPLATES / "images" / "agents" / f"{self.image}.Dockerfile.j2"
        if not path.is_file():
            known = sorted(p.name.removesuffix(".Dockerfile.j2") for p in (TEMPLATES / "images" / "agents").glob("*.Dockerfile.j2"))
            raise AgentError(f"agent {self.name!r}: image template {path} does not exist; "
                             f"built-in images: {', '.join(known)} (or give a path relative to {ROOT})")
        return path

    def dockerfile(self, grader: str, debian: str = "debian:bookworm") -> str:
        """The agent image's Dockerfile text, ``FROM`` the image tag ``grader`` (the grader image, or a swe
        task's environment image); ``debian`` is the plain Debian image a template builds the agent's own
        prefix in (``/opt/lab/agents/<name>``, copied into the image with ``COPY --from``), so the agent brings
        its own runtime and works on every base."""
        from rules.render import environment
        text = self.template_path().read_text(encoding="utf-8")
        return environment().from_string(text).render(grader=grader, debian=debian, agent=self.name,
                                                      **dict(self.build))

    def image_digest(self, grader: str = DEFAULT_GRADER, debian: str = "debian:bookworm") -> str:
        """SHA-256 (hex) over what the agent's image is built from (``rules.context.build_digest``): its
        Dockerfile rendered ``FROM`` ``grader`` (the prefix stage ``FROM`` the nominal ``debian``: which Debian
        image a machine has is not the agent's identity) and every file that Dockerfile copies from the build
        context (an adapter or prefix script), so changing a copied file rebuilds the image and redoes the
        agent's trials. Raises AgentError when the template is missing."""
        from rules.context import Context, build_digest

        return build_digest(self.dockerfile(grader, debian), Context())

    def images_digest(self) -> str:
        """SHA-256 (hex) of everything the images of this agent's trials are built from: its own image's
        ``image_digest`` and that of each image started beside it (its service, its gateway: a changed gateway
        script redoes its trials too); "" when its template is missing (the image cannot be built then, and
        its build says why)."""
        try:
            parts = [self.image_digest()] + [s.image_digest for s in (self.service, self.gateway) if s is not None]
        except ConfigError:
            return ""
        return hashlib.sha256("\n".join(parts).encode()).hexdigest()

    def tag(self, grader: str = DEFAULT_GRADER) -> str:
        """The agent image's tag: ``lab/agent-<name>:latest`` on the default grader image; on another grader
        image (``LAB_GRADER_IMAGE``) a tag naming it, so the two never overwrite each other."""
        if grader == DEFAULT_GRADER:
            return f"lab/agent-{self.name}:latest"
        return f"lab/agent-{self.name}:on-" + re.sub(r"[^a-zA-Z0-9_.-]+", "-", grader).strip("-.")[:100]

    def argv(self, files: list[str], try_no: int = 1, test_cmd: str = "") -> list[str]:
        """The command with its placeholders filled (see ``evals/agents.toml``): ``{files}`` alone becomes one
        argument per file, inside a longer string a shell-quoted list; ``{test_cmd}`` the task's command for the
        pre-existing tests (task.json ``test_cmd``; the swe tier: never a held-out test), empty when it has none."""
        values = {"prompt": PROMPT, "work": WORK, "out": OUT_DIR, "try": str(try_no),
                  "files": " ".join(shlex.quote(f) for f in files), "test_cmd": test_cmd}
        out: list[str] = []
        for arg in self.command:
            if arg == "{files}":
                out += list(files)
            else:
                out.append(PLACEHOLDER.sub(lambda m: values[m.group(1)], arg))
        return out

    def missing_env(self, environ: Mapping[str, str] = os.environ) -> list[str]:
        """The required variables that are not set (or empty) in ``environ``; ``env_any`` with none of its
        names set is one entry, "one of A, B, C"."""
        missing = [n for n in self.env if not environ.get(n)]
        if self.env_any and not any(environ.get(n) for n in self.env_any):
            missing.append("one of " + ", ".join(self.env_any))
        return missing

    def environment(self, environ: Mapping[str, str] = os.environ) -> dict[str, str]:
        """The container's environment: ``env_set``, then the passed-through variables from ``environ``, then
        each setting's value in its variable (an agent whose values are not set yet takes them from
        ``environ`` and the defaults).

        Raises AgentError naming every missing required variable or setting.
        """
        agent = self if self.values or not self.settings else self.resolve({}, environ)
        missing = self.missing_env(environ)
        if missing:
            raise AgentError(
                f"agent {self.name!r} needs the environment variable(s) {', '.join(missing)}: set them in the "
                f"shell that runs doit (passed through: {', '.join(self.env + self.env_optional)})")
        out = dict(self.env_set)
        out.update({n: environ[n] for n in self.env + self.env_optional if environ.get(n)})
        env_of = {s.name: s.env for s in self.settings}
        out.update({env_of[name]: value for name, value in agent.values})
        if agent.served_model and "model" in env_of:  # model=local: the name the gateway serves, not "local"
            out[env_of["model"]] = agent.served_model
        return out


def run_id(agent: Agent, runs_dir: Path, taken: Iterable[str] = ()) -> str:
    """The folder name below ``runs_dir`` for ``agent``'s run (its settings' values resolved): ``agent.run``,
    unless that folder's ``run.json`` records another agent or other values (two values with one slug, such as
    ``a/b`` and ``a:b``), or the id is one of ``taken`` (the other agents' names): then ``agent.run`` + ``-`` +
    8 hex digits of the values' SHA-256, so no run's results are ever shown under another's name."""
    from rules.files import read_json

    run = agent.run
    try:
        existing = read_json(Path(runs_dir) / run / "run.json")
    except ValueError:
        existing = None
    clash = run != agent.name and run in set(taken)
    if clash or isinstance(existing, dict) and (existing.get("agent"), existing.get("settings")) != (agent.name, dict(agent.values)):
        raw = json.dumps([agent.name, list(agent.values)]).encode()
        run = f"{run}-{hashlib.sha256(raw).hexdigest()[:8]}"
    return run


def _strings(value, where: str) -> tuple[str, ...]:
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise AgentError(f"{where}: must be a list of strings, got {value!r}")
    return tuple(value)


def _table(value, where: str) -> tuple[tuple[str, str], ...]:
    if not isinstance(value, dict) or not all(isinstance(v, (str, int, float, bool)) for v in value.values()):
        raise AgentError(f"{where}: must be a table of names to strings, got {value!r}")
    return tuple(sorted((str(k), str(v)) for k, v in value.items()))


def _settings(value, at: str, passed: tuple[str, ...], problems: list[str]) -> tuple[Setting, ...]:
    """The settings of the ``[NAME.settings]`` table ``value`` that are well defined; the first problem of each
    other one goes to ``problems``."""
    if not isinstance(value, dict):
        problems.append(f"{at} settings: must be a table ([NAME.settings]) of name = {{ env = \"VAR\" }}")
        return ()
    out = []
    for name, spec in value.items():
        where = f"{at} settings.{name}"
        if not SETTING_NAME.match(name) or name in LAB_VARIABLES:
            problems.append(f"{where}: a setting name is lower-case letters, digits and '_', and not one of lab's "
                            f"own variables ({', '.join(LAB_VARIABLES)})")
        elif not isinstance(spec, dict) or not isinstance(spec.get("env"), str) or not ENV_NAME.match(spec["env"]):
            problems.append(f"{where}: must be {{ env = \"VAR\" }} (optionally default = \"...\"), got {spec!r}")
        elif unknown := sorted(set(spec) - set(SETTING_FIELDS)):
            problems.append(f"{where}: unknown field(s) {', '.join(unknown)}; known: {', '.join(SETTING_FIELDS)}")
        elif SECRET_LIKE.search(spec["env"]):
            problems.append(f"{where}: {spec['env']} looks like a secret, and a setting's value is written to "
                            "disk (run.json, result.json): pass secrets through `env` instead")
        elif spec["env"] in passed:
            problems.append(f"{where}: {spec['env']} is also listed in env/env_optional; list it in one place")
        elif (default := spec.get("default")) is not None and (not isinstance(default, (str, int, float))
                                                               or isinstance(default, bool)):
            problems.append(f"{where}: default must be a string (\"\" = no value unless given), got {default!r}")
        else:
            out.append(Setting(name=name, env=spec["env"], default=None if default is None else str(default)))
    return tuple(out)


def _one_line(at: str, problems: list[str]) -> str:
    """The problems of the table ``at`` as one line: the one alone, or all of them numbered."""
    if len(problems) == 1:
        return problems[0]
    return f"{at}: {len(problems)} problems: " + "; ".join(
        f"({n}) {p[len(at):].lstrip(': ') if p.startswith(at) else p}" for n, p in enumerate(problems, 1))


def parse_agent(name: str, raw: dict, where: str = "evals/agents.toml") -> Agent:
    """Build an Agent from its TOML table ``raw``. Raises AgentError naming the file, the agent and every
    problem of its table in one line (unknown fields, missing ``image``/``command``, bad network, limits, env
    names, settings or usage parser; of a ``service``, ``gateway`` or ``local`` table, its first problem)."""
    at = f"{where} [{name}]"
    if not isinstance(raw, dict):
        raise AgentError(f"{at}: must be a table")
    problems: list[str] = []
    failed = object()  # what ``check`` returns for a part that is not well defined (its problem is recorded)

    def check(make):
        try:
            return make()
        except ConfigError as exc:
            problems.append(str(exc))
            return failed

    if not NAME.match(name):
        problems.append(f"{at}: agent names are lower-case letters, digits, '-', '_' and '.'")
    problems += field_problems(raw, FIELDS, REQUIRED, at)
    if "image" in raw and (not isinstance(raw["image"], str) or not raw["image"]):
        problems.append(f"{at}: image must be a template name such as \"noop\" or a path")
    command = check(lambda: _strings(raw["command"], f"{at} command")) if "command" in raw else failed
    if command == ():
        problems.append(f"{at}: command must not be empty")
    env = check(lambda: _strings(raw.get("env", []), f"{at} env"))
    env_optional = check(lambda: _strings(raw.get("env_optional", []), f"{at} env_optional"))
    passed = (() if env is failed else env) + (() if env_optional is failed else env_optional)
    bad = [n for n in passed if not ENV_NAME.match(n)]
    if bad:
        problems.append(f"{at}: not environment variable names: {', '.join(bad)} (env lists names; values are "
                        "read from the shell that runs doit)")
    env_any = check(lambda: _strings(raw.get("env_any", []), f"{at} env_any"))
    stray = [n for n in env_any if n not in env_optional] if failed not in (env_any, env_optional) else []
    if stray:
        problems.append(f"{at}: env_any names {', '.join(stray)}, which env_optional does not list; list them in "
                        "env_optional (the variables passed through) too")
    network = raw.get("network", "none")
    if network not in NETWORKS:
        problems.append(f"{at}: network {network!r} is not one of {', '.join(NETWORKS)}")
    service = check(lambda: parse_service(raw["service"], f"{where} [{name}.service]")) if "service" in raw else None
    if service is not failed and network in NETWORKS and (network == "service") != (service is not None):
        problems.append(f"{at}: network = \"service\" and a [{name}.service] table go together (the agent's "
                        "container joins its service's network namespace, which has no outside network)")
    adapter = raw.get("adapter")
    usage = raw.get("usage", adapter)
    errors = raw.get("errors", adapter)
    for key, value in (("adapter", adapter), ("usage", usage), ("errors", errors)):
        if value is not None and value not in adapters.names():
            problems.append(f"{at}: {key} {value!r} is unknown; known: {', '.join(adapters.names())} "
                            "(one module each in rules/adapters/)")
    container = raw.get("container", "trial")
    if container not in CONTAINER_MODES:
        problems.append(f"{at}: container {container!r} is not one of {', '.join(map(repr, CONTAINER_MODES))} "
                        "(\"trial\": one container for all the trial's tries; \"try\": a fresh one per try)")
    budget = gateway = limits = failed
    if not isinstance(raw.get("limits", {}), dict):
        problems.append(f"{at}: limits must be a table ([{name}.limits])")
    else:
        parsed = check(lambda: parse_budget(raw.get("limits", {}), f"{at} limits"))
        limits_raw = {k: v for k, v in raw.get("limits", {}).items() if k not in BUDGET_KINDS}
        limits = check(lambda: Limits.parse(limits_raw, f"{at} limits"))  # its problems beside the budget's
        if parsed is not failed:
            budget = parsed[0]
            if service is not failed:
                gateway = (check(lambda: parse_gateway(raw["gateway"], service, budget, f"{where} [{name}.gateway]"))
                           if "gateway" in raw else None)
    if budget is not failed and budget != Budget() and gateway is None:
        problems.append(f"{at} limits: requests and tokens are counted at lab's gateway: add a [{name}.gateway] "
                        "table (the budget is enforced there)")
    if limits is not failed and (nonpositive := [k for k in ("cpus", "memory", "pids", "timeout", "disk")
                                                 if getattr(limits, k) <= 0]):
        problems.append(f"{at} limits: {', '.join(f'{k} = {getattr(limits, k)!r}' for k in nonpositive)}: "
                        f"{'each' if len(nonpositive) > 1 else 'it'} must be positive")
    local = check(lambda: _local(raw["local"], f"{where} [{name}.local]")) if "local" in raw else None
    settings_problems: list[str] = []
    settings = _settings(raw.get("settings", {}), at, passed, settings_problems)
    problems += settings_problems
    declared = [s.name for s in settings]
    if local not in (None, failed) and not settings_problems:
        if "model" not in declared:
            problems.append(f"{at}: a [{name}.local] table needs a model setting ([{name}.settings] model = ...): "
                            "model=local selects it")
        elif stray := [k for k, _ in local.settings if k == "model" or k not in declared]:
            problems.append(f"{where} [{name}.local] settings: {', '.join(stray)} is not one of the agent's other "
                            f"settings ({', '.join(d for d in declared if d != 'model') or 'none'}); model=local "
                            "gives the model")
    env_set = check(lambda: _table(raw.get("env_set", {}), f"{at} env_set"))
    build = check(lambda: _table(raw.get("build", {}), f"{at} build"))
    if problems:
        raise AgentError(_one_line(at, problems))
    return Agent(name=name, image=raw["image"], command=command, env=env, env_optional=env_optional,
                 env_any=env_any, env_set=env_set, network=network, limits=limits, usage=usage, build=build,
                 errors=errors, settings=settings, service=service, container=container, gateway=gateway,
                 budget=budget, local=local)


def _local(raw, where: str) -> Local:
    """The ``[NAME.local]`` table ``raw``. Raises AgentError naming the field."""
    if not isinstance(raw, dict):
        raise AgentError(f"{where}: must be a table with env_set (the variables that point the agent at lab's gateway)")
    try:
        check_fields(raw, LOCAL_FIELDS, ("env_set",), where, AgentError)
    except ConfigError as exc:
        raise AgentError(str(exc)) from None
    for key in ("model", "served_by"):
        if key in raw and (not isinstance(raw[key], str) or not raw[key]):
            raise AgentError(f"{where}: {key} must be a non-empty string, got {raw[key]!r}")
    try:
        budget, _ = parse_budget({k: raw[k] for k in BUDGET_KINDS if k in raw}, where)
    except ConfigError as exc:
        raise AgentError(str(exc)) from None
    timeout = raw.get("timeout")
    if timeout is not None and (isinstance(timeout, bool) or not isinstance(timeout, (int, float)) or timeout <= 0):
        raise AgentError(f"{where}: timeout must be a number of seconds above 0, got {timeout!r}")
    return Local(env_set=_table(raw["env_set"], f"{where} env_set"), model=raw.get("model"),
                 served_by=raw.get("served_by", LOCAL_SOURCE), budget=budget,
                 timeout=float(timeout) if timeout is not None else None,
                 settings=_table(raw.get("settings", {}), f"{where} settings"))


def _attach_local(agents: dict) -> dict:
    """``agents`` with each ``[NAME.local]`` given the service it runs on (that of its ``served_by`` agent)."""
    out = dict(agents)
    for name, agent in agents.items():
        if agent.local is not None and agent.local.served_by in agents:
            out[name] = replace(agent, local=replace(agent.local, service=agents[agent.local.served_by].service))
    return out


def load_agents(path: Path | None = None, broken: dict | None = None) -> dict[str, Agent]:
    """Every agent defined in ``path`` (default ``evals/agents.toml``), by name. Raises AgentError when the
    file is missing or is not TOML, and when it defines agents badly (one line naming every problem of each such
    table), unless ``broken`` is a dict: then each badly defined agent's one-line error goes there (name →
    message) and the others load."""
    path = Path(path or AGENTS_FILE)
    try:
        raw = tomllib.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise AgentError(f"{path}: no agent definitions file; lab ships evals/agents.toml with noop and aider") from None
    except tomllib.TOMLDecodeError as exc:
        raise AgentError(f"{path}: not valid TOML: {exc}") from None
    strict, broken = broken is None, {} if broken is None else broken
    agents = {}
    for name, table in raw.items():
        try:
            agents[name] = parse_agent(name, table, str(path))
        except AgentError as exc:
            broken[name] = str(exc)
    if strict and broken:
        raise AgentError(next(iter(broken.values())) if len(broken) == 1 else
                         f"{path}: {len(broken)} agent tables are badly defined: " + " | ".join(broken.values()))
    return _attach_local(agents)


def get_agent(name: str | None, path: Path | None = None) -> Agent:
    """The agent called ``name``. Raises AgentError with its table's error when that table is badly defined
    (another agent's bad table does not stop this one), and listing the known agents when there is none."""
    broken: dict[str, str] = {}
    agents = load_agents(path, broken=broken)
    if name in broken:
        raise AgentError(broken[name])
    if name not in agents:
        what = "no agent given (agent=NAME)" if not name else f"unknown agent {name!r}"
        raise AgentError(f"{what}; agents defined in {Path(path or AGENTS_FILE)}: {', '.join(sorted(agents)) or 'none'}")
    return agents[name]


# ---- usage, provider errors and trajectories: one adapter module per agent (rules/adapters/) ----

def provider_error(parser: str, output: str) -> dict | None:
    """The first provider error in an agent's ``output`` by the ``ERRORS`` of adapter ``parser``:
    ``{"kind": "auth" | "rate_limit" | "quota" | "connection" | "unavailable" | "model" | "provider",
    "message": the line (stripped, at most 300 characters)}``; None when no line matches. Raises AdapterError
    for an unknown adapter (``parse_agent`` refuses those)."""
    return adapters.provider_error(parser, output)


def read_usage_file(path: Path) -> dict | None:
    """The usage an agent wrote to ``/lab/out/usage.json``: ``{"tokens_sent", "tokens_received", "cost"}``
    (numbers; missing keys None). None when the file is absent, too big or not such an object, or is not a
    regular file: a symlink is never followed (it would be followed on the host, e.g. to ``/dev/zero``) and a
    FIFO never waited on."""
    cap = 64 * 1024
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
        with os.fdopen(fd, "rb") as f:
            st = os.fstat(f.fileno())
            if not stat.S_ISREG(st.st_mode) or st.st_size > cap:
                return None
            data = f.read(cap + 1)
        if len(data) > cap:
            return None
        raw = json.loads(data.decode("utf-8"))
    except (OSError, ValueError, UnicodeDecodeError):
        return None
    if not isinstance(raw, dict):
        return None
    out = {}
    for key in adapters.USAGE_KEYS:
        value = raw.get(key)
        out[key] = value if isinstance(value, (int, float)) and not isinstance(value, bool) and value >= 0 else None
    return out if any(v is not None for v in out.values()) else None


def try_usage(agent: Agent, output: str, usage_file: Path) -> dict | None:
    """One try's usage: the agent's ``usage.json`` when it wrote one, else its adapter's reading of its
    output and of the other files in ``usage_file``'s folder (``/lab/out``)."""
    found = read_usage_file(usage_file)
    if found is None and agent.usage:
        found = adapters.usage(agent.usage, output, usage_file.parent)
    return found


def try_trajectory(agent: Agent, output: str, out_dir: Path) -> dict | None:
    """One try's trajectory by the agent's adapter (``rules.adapters.trajectory``), or None when it has no
    adapter, its adapter reads none, or reading failed: a trajectory is evidence for a person, and a damaged
    one never costs the trial (the agent's own log is kept either way)."""
    if not agent.usage:
        return None
    try:
        return adapters.trajectory(agent.usage, output, out_dir)
    except (OSError, ValueError, KeyError, TypeError, AttributeError, IndexError):
        return None


def add_usage(total: dict | None, more: dict | None) -> dict | None:
    """Sum two usage records field by field (a field unknown in both stays None)."""
    if more is None:
        return total
    if total is None:
        return dict(more)
    out = {}
    for key in adapters.USAGE_KEYS:
        a, b = total.get(key), more.get(key)
        out[key] = None if a is None and b is None else (a or 0) + (b or 0)
    return out
