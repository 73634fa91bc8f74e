"""Services: a container lab starts beside an agent's for one trial, such as a local model server.

An agent may declare a service in ``evals/agents.toml`` (a ``[NAME.service]`` table, see the comment at the
top of that file). For each trial the service's container starts first, with network ``none``; the agent's
container then joins the service's network namespace (``network = "service"``), so the agent reaches the
service at ``127.0.0.1:<port>`` and nothing else: no outside network at all. The trial waits until the
service's ``ready`` probe succeeds (run inside the service's container), and removes the container after
the trial's last try.

The service's image is a Dockerfile template (``templates/images/services/<image>.Dockerfile.j2``) built
``FROM`` the Debian base image, not the grader image: a grader change never rebuilds it. Its tag and stamp
name carry a digest of its rendered Dockerfile and every file that Dockerfile copies (``rules.context``), so
agents that declare the same service share one image, and a changed copied file is another image. This module parses and renders; it knows nothing of Docker or doit.
"""
from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass
from pathlib import Path

from rules.config import ROOT, TEMPLATES, ConfigError, Limits, check_fields

FIELDS = ("image", "command", "port", "ready", "build", "limits", "model", "cache", "stream_usage")
REQUIRED = ("image", "command", "port")
SERVICE_TEMPLATES = TEMPLATES / "images" / "services"
PLACEHOLDER = re.compile(r"\{port\}")
# The default readiness probe: an HTTP GET of the OpenAI-compatible model list, with the image's python3.
DEFAULT_READY = ("python3", "-c", "import urllib.request; "
                 "urllib.request.urlopen('http://127.0.0.1:{port}/v1/models', timeout=5).read()")
NOMINAL_BASE = "debian:bookworm"  # the base a service's Dockerfile is rendered FROM for its digest
DEFAULT_LIMITS = Limits(cpus=1.0, memory=2 * 1024**3, pids=256, timeout=180)


class ServiceError(ConfigError):
    """A service is badly defined; the message names the file, the agent and the field."""


@dataclass(frozen=True)
class Service:
    """One service definition.

    ``image`` names the Dockerfile template (a bare name: ``templates/images/services/<name>.Dockerfile.j2``;
    a path with a ``/``: relative to the project root); ``command`` the exec-form command that serves;
    ``port`` the TCP port it listens on at 127.0.0.1; ``ready`` the exec-form probe run in the service's
    container until it exits 0; ``build`` the template's variables; ``limits`` the container's CPUs, memory
    and processes, and in ``timeout`` the seconds the service may take to become ready. ``{port}`` in
    ``command`` and ``ready`` is replaced by the port. ``model``: the name the service's server gives the model
    it serves, when it is one (what lab's gateway asks it for on a ``model=local`` run); no part of the
    definition, as it changes nothing the service does. ``cache``: an absolute folder in the service's container
    that outlives the trial (None: nothing does): lab mounts there a folder of its own, one per service
    definition (``cache_dir``), and starts the service in it as its working directory (llama-cpp-python's disk
    cache of evaluated prompts lives in ``.cache/`` under the working directory and has no option of its own).
    What a cache keeps must be a function of the service's definition and its requests alone, never something a
    trial could use to reach another: a model server's cache of evaluated prompts, keyed by their exact tokens,
    is one. ``stream_usage``: whether the server sends a stream's usage when asked
    (``stream_options.include_usage``, as OpenAI's API does); when not (llama-cpp-python's server 0.3.16), lab's
    gateway asks it without streaming (``gateway_service``); no part of the service's definition either (the
    gateway's command, which it changes, is part of the agent's).
    """

    image: str
    command: tuple[str, ...]
    port: int
    ready: tuple[str, ...] = DEFAULT_READY
    build: tuple[tuple[str, str], ...] = ()
    limits: Limits = DEFAULT_LIMITS
    model: str | None = None
    cache: str | None = None
    stream_usage: bool = True

    def definition(self) -> dict:
        """The definition as plain JSON data (part of the agent's definition and digest; ``cache`` only when
        set, so a service without one keeps the digest it had before caches existed)."""
        out = {"image": self.image, "command": list(self.command), "port": self.port, "ready": list(self.ready),
               "build": dict(self.build), "limits": {"cpus": self.limits.cpus, "memory": self.limits.memory,
                                                     "pids": self.limits.pids, "timeout": self.limits.timeout}}
        return {**out, "cache": self.cache} if self.cache else out

    def cache_dir(self) -> Path | None:
        """The host folder mounted at ``cache`` (None without one): ``.lab/cache/<stamp_name>-<12 hex digits of
        SHA-256 over the definition>``, so a service whose image, command or limits differ (another model,
        another context window) never reads a cache another one wrote."""
        if not self.cache:
            return None
        from rules.config import STATE
        key = hashlib.sha256(json.dumps(self.definition(), sort_keys=True).encode()).hexdigest()[:12]
        return STATE / "cache" / f"{self.stamp_name}-{key}"

    @property
    def image_digest(self) -> str:
        """12 hex digits of SHA-256 over what the image is built from (``rules.context.build_digest``): the
        Dockerfile rendered from the template and build variables (``FROM`` the nominal ``debian:bookworm``:
        which Debian image a machine has is not the service's identity) and every file it copies from the build
        context, so a changed ``COPY``'d file (the gateway's ``lab_usage.py``) is another image, another tag."""
        from rules.context import Context, build_digest

        try:
            text = self.dockerfile(NOMINAL_BASE)
        except Exception:  # noqa: BLE001 - no template, or one that does not render: the build says so; the
            # name and variables still tell two services apart
            text = json.dumps({"image": self.image, "build": dict(self.build)}, sort_keys=True)
        return build_digest(text, Context(self.context_files_or_none()))[:12]

    def context_files_or_none(self) -> dict[str, bytes]:
        """``context_files``, or {} when the template is missing."""
        try:
            return self.context_files()
        except ConfigError:
            return {}

    @property
    def image_name(self) -> str:
        """The short name of the template (``llama`` for ``llama`` or ``some/dir/llama.Dockerfile.j2``)."""
        return Path(self.image).name.removesuffix(".j2").removesuffix(".Dockerfile").lower() or "service"

    @property
    def stamp_name(self) -> str:
        """The image stamp's name (``.lab/images/service-<name>-<digest>.json``), also its doit task name."""
        return f"service-{self.image_name}-{self.image_digest}"

    def tag(self) -> str:
        """The service image's tag: ``lab/service-<name>:<digest>``."""
        return f"lab/service-{self.image_name}:{self.image_digest}"

    def template_path(self) -> Path:
        """The Dockerfile template's file. Raises ServiceError when it does not exist."""
        path = (ROOT / self.image) if "/" in self.image else SERVICE_TEMPLATES / f"{self.image}.Dockerfile.j2"
        if not path.is_file():
            known = sorted(p.name.removesuffix(".Dockerfile.j2") for p in SERVICE_TEMPLATES.glob("*.Dockerfile.j2"))
            raise ServiceError(f"service image template {path} does not exist; built-in service images: "
                               f"{', '.join(known) or 'none'} (or give a path relative to {ROOT})")
        return path

    def dockerfile(self, base: str) -> str:
        """The service image's Dockerfile text, ``FROM`` the Debian image tag ``base``."""
        from rules.render import environment
        text = self.template_path().read_text(encoding="utf-8")
        return environment().from_string(text).render(base=base, service=self.image_name, port=self.port,
                                                      **dict(self.build))

    def context_files(self) -> dict[str, bytes]:
        """The files of the template's own folder, under ``service/`` in the build context, for a template outside
        ``templates/images/`` (a test fixture's server beside its Dockerfile); {} for a built-in template."""
        path = self.template_path()
        if path.is_relative_to(TEMPLATES / "images"):
            return {}
        return {f"service/{p.name}": p.read_bytes() for p in sorted(path.parent.iterdir())
                if p.is_file() and p.suffix != ".pyc"}

    def argv(self) -> list[str]:
        """The serving command with ``{port}`` filled."""
        return [PLACEHOLDER.sub(str(self.port), a) for a in self.command]

    def probe(self) -> list[str]:
        """The readiness probe with ``{port}`` filled."""
        return [PLACEHOLDER.sub(str(self.port), a) for a in self.ready]


def _strings(value, where: str) -> tuple[str, ...]:
    if not isinstance(value, list) or not value or not all(isinstance(v, str) for v in value):
        raise ServiceError(f"{where}: must be a non-empty list of strings, got {value!r}")
    return tuple(value)


def parse_service(raw, where: str) -> Service:
    """Build a Service from its TOML table ``raw`` (``where`` names it in messages, e.g.
    ``evals/agents.toml [aider-local.service]``). Raises ServiceError naming the field."""
    if not isinstance(raw, dict):
        raise ServiceError(f"{where}: must be a table with {', '.join(REQUIRED)}")
    check_fields(raw, FIELDS, REQUIRED, where, ServiceError)
    if not isinstance(raw["image"], str) or not raw["image"]:
        raise ServiceError(f"{where}: image must be a template name such as \"llama\" or a path")
    port = raw["port"]
    if not isinstance(port, int) or isinstance(port, bool) or not 1 <= port <= 65535:
        raise ServiceError(f"{where}: port must be a whole number from 1 to 65535, got {port!r}")
    build = raw.get("build", {})
    if not isinstance(build, dict) or not all(isinstance(v, (str, int, float, bool)) for v in build.values()):
        raise ServiceError(f"{where} build: must be a table of names to strings, got {build!r}")
    limits_raw = raw.get("limits", {})
    if not isinstance(limits_raw, dict):
        raise ServiceError(f"{where}: limits must be a table")
    d = DEFAULT_LIMITS
    merged = {"cpus": d.cpus, "memory": d.memory, "pids": d.pids, "timeout": d.timeout, **limits_raw}
    try:
        limits = Limits.parse(merged, f"{where} limits")
    except ConfigError as exc:
        raise ServiceError(str(exc)) from None
    if limits.timeout <= 0 or limits.cpus <= 0 or limits.memory <= 0 or limits.pids <= 0:
        raise ServiceError(f"{where} limits: cpus, memory, pids and timeout (seconds to become ready) must be positive")
    model = raw.get("model")
    if model is not None and (not isinstance(model, str) or not model):
        raise ServiceError(f"{where}: model must be the name its server gives its model, e.g. \"smollm2-135m\"")
    cache = raw.get("cache")
    if cache is not None and (not isinstance(cache, str) or not cache.startswith("/") or cache == "/"):
        raise ServiceError(f"{where}: cache must be an absolute folder in the service's container other than /, "
                           f"e.g. \"/var/cache/lab\", got {cache!r}")
    stream_usage = raw.get("stream_usage", True)
    if not isinstance(stream_usage, bool):
        raise ServiceError(f"{where}: stream_usage must be true or false (whether its server sends a stream's usage "
                           f"when asked), got {stream_usage!r}")
    return Service(image=raw["image"], command=_strings(raw["command"], f"{where} command"), port=port,
                   ready=_strings(raw["ready"], f"{where} ready") if "ready" in raw else DEFAULT_READY,
                   build=tuple(sorted((str(k), str(v)) for k, v in build.items())), limits=limits, model=model,
                   cache=cache, stream_usage=stream_usage)


# ---- lab's model gateway: litellm's proxy beside a service (templates/images/services/gateway.Dockerfile.j2) ----

GATEWAY_FIELDS = ("model", "port", "litellm_version")
GATEWAY_PORT = 4000
GATEWAY_KEY = "sk-lab-gateway"  # the proxy's master key: the key an agent sends (no secret: 127.0.0.1 only)
LITELLM_VERSION = "1.80.8"
GATEWAY_STATE = "/tmp/lab-gateway"  # in the gateway's container: the try number lab writes, usage.jsonl
# timeout: seconds to become ready; litellm's proxy took over 120 s to start at a load of 20 on 2 cores
GATEWAY_LIMITS = Limits(cpus=1.0, memory=1024**3, pids=256, timeout=300)
BUDGET_KINDS = ("requests", "tokens", "reply_tokens")


@dataclass(frozen=True)
class Budget:
    """A try's budget of model requests and tokens (sent + received) at the gateway, and the most tokens one
    reply may have there (``reply_tokens``: a request's own ``max_tokens`` is lowered to it, and set to it when
    the request gives none); 0: no limit."""

    requests: int = 0
    tokens: int = 0
    reply_tokens: int = 0

    def definition(self) -> dict:
        """The budget as plain JSON data (``reply_tokens`` only when set: a budget without it means what it did
        before there was one)."""
        return {"requests": self.requests, "tokens": self.tokens,
                **({"reply_tokens": self.reply_tokens} if self.reply_tokens else {})}


def gateway_service(upstream: Service, model: str, port: int = GATEWAY_PORT, version: str = LITELLM_VERSION,
                    budget: Budget = Budget()) -> Service:
    """The gateway as a Service (built and started like one): litellm's proxy on 127.0.0.1:``port`` in front of
    ``upstream``'s OpenAI-compatible server (``http://127.0.0.1:<upstream.port>/v1``, model ``model``), with
    ``budget`` per try (and its cap on each reply). An upstream whose streams carry no usage
    (``upstream.stream_usage`` false) is asked without streaming, its answers streamed on by the gateway
    (``--unstreamed-upstream``), so that the tokens every route reports are the server's own count."""
    command = ("/opt/lab/gateway/bin/python", "/opt/lab/gateway/lab/start.py", "--port", "{port}",
               "--upstream", f"http://127.0.0.1:{upstream.port}/v1", "--model", model,
               "--requests", str(budget.requests), "--tokens", str(budget.tokens),
               *(("--reply-tokens", str(budget.reply_tokens)) if budget.reply_tokens else ()),
               *(() if upstream.stream_usage else ("--unstreamed-upstream",)))
    ready = ("/opt/lab/gateway/bin/python", "-c", "import urllib.request; urllib.request.urlopen("
             "'http://127.0.0.1:{port}/health/liveliness', timeout=5).read()")
    return Service(image="gateway", command=command, port=port, ready=ready,
                   build=(("litellm_version", version),), limits=GATEWAY_LIMITS)


def parse_gateway(raw, upstream: Service | None, budget: Budget, where: str) -> Service:
    """The gateway of an agent's ``[NAME.gateway]`` table ``raw`` (``model``: the upstream's model name;
    optional ``port``, default 4000, and ``litellm_version``). Raises ServiceError naming the field, or when the
    agent has no service for the gateway to stand in front of."""
    if not isinstance(raw, dict):
        raise ServiceError(f"{where}: must be a table with model (the name the service's server gives its model)")
    check_fields(raw, GATEWAY_FIELDS, ("model",), where, ServiceError)
    if upstream is None:
        raise ServiceError(f"{where}: a gateway stands in front of the agent's service: add a service table too")
    port = raw.get("port", GATEWAY_PORT)
    if not isinstance(port, int) or isinstance(port, bool) or not 1 <= port <= 65535 or port == upstream.port:
        raise ServiceError(f"{where}: port must be a whole number from 1 to 65535 other than the service's, got {port!r}")
    if not isinstance(raw["model"], str) or not raw["model"]:
        raise ServiceError(f"{where}: model must be the service's model name, e.g. \"smollm2-135m\"")
    version = raw.get("litellm_version", LITELLM_VERSION)
    if not isinstance(version, str) or not re.fullmatch(r"\d+(\.\d+)*([a-z]+\d*)?(\.post\d+)?", version):
        # a TOML number (1.80) would be read as 1.8: another release than the one meant
        raise ServiceError(f"{where}: litellm_version must be a PyPI version in quotes, e.g. \"{LITELLM_VERSION}\", "
                           f"got {version!r}")
    return gateway_service(upstream, raw["model"], port, version, budget)


def parse_budget(limits: dict, where: str) -> tuple[Budget, dict]:
    """The budget in an agent's limits table (``requests``, ``tokens``, ``reply_tokens``: whole numbers >= 0)
    and the table without them. Raises ServiceError naming every bad value."""
    values, bad = {}, []
    for kind in BUDGET_KINDS:
        value = limits.get(kind, 0)
        if not isinstance(value, int) or isinstance(value, bool) or value < 0:
            bad.append(f"{kind} must be a whole number (0: no budget), got {value!r}")
        values[kind] = value
    if bad:  # every one at once
        raise ServiceError(f"{where}: " + "; ".join(bad))
    return Budget(**values), {k: v for k, v in limits.items() if k not in BUDGET_KINDS}
