"""Where containers run: the one package that talks to Docker (through the Docker SDK).

Everything else in lab asks for an image, or to run a command in a container with some folders mounted and
some limits, and gets back a ``RunResult``. A later backend (a cluster) only has to offer the same few
functions: ``ensure_base_image``, ``build_image``, ``image_id``, ``run``, ``start_box``, ``box_exec``,
``stop_box``, ``start_service``, ``stop`` and ``cleanup``.

Two ways to run a command: ``run`` starts a fresh container for it and removes it after (~0.17 s even for
``true``); a *box* (``start_box``) is a long-lived container whose PID 1, a small shell loop of lab's, runs one
command after another as lab sends them on its stdin (``box_exec``: ~3 ms each, where ``docker exec`` costs ~30 ms
of CPU), each with the container's environment, user and working directory; ``stop_box`` removes it. A trial's
agent runs in one box for all its tries.

No network: ``network="none"`` is Docker's own (a new network namespace per container, ~80 ms of CPU to make
and tear down, measured here); ``NULL`` (what lab's graders use) and ``null_network(image)`` (what network-less
agents use: the namespace held by a container of an image lab trusts) are as network-less, in a namespace lab
keeps per worker thread and role and lends to one container after another (``netns``).

Errors: ``SandboxError`` for anything the engine refused or could not do (no engine, missing image, failed
build). Its message names the thing and the fix. A command that fails *inside* a container is not an error:
it is a ``RunResult`` with a non-zero exit code.

The submodules, each using only those before it: ``engine`` (the SDK and its client, errors, result types,
images, volumes), ``owners`` (run labels, ``cleanup``, ``remove_own``), ``protocol`` (a box's PID 1 and the line
it reads), ``netns`` (the null network's holders), ``containers`` (``run``, services, and the create and start
steps boxes share) and ``box``. Callers use the names below, from this package.
"""
from rules.sandbox.box import Box, box_alive, box_exec, left_over_in, start_box, stop_box
from rules.sandbox.containers import (ServiceHandle, run, service_ended, service_exec, service_output, start_service,
                                      stop)
from rules.sandbox.engine import (LABEL, OUTPUT_CAP, Mount, RunResult, SandboxError, StartError, build_image, client,
                                  ensure_base_image, image_created, image_id, image_id_quick, image_labels,
                                  image_layers, remove_image, volume)
from rules.sandbox.netns import HOLDER_HOSTNAME, NULL, null_network
from rules.sandbox.owners import boxes_left, cleanup, owner_alive, remove_own, run_labels
from rules.sandbox.protocol import BOX_IDLE

__all__ = [
    # engine
    "LABEL", "OUTPUT_CAP", "SandboxError", "StartError", "Mount", "RunResult", "client", "image_id",
    "image_id_quick", "image_labels", "image_created", "image_layers", "remove_image",
    "ensure_base_image", "build_image",
    "volume",
    # owners
    "run_labels", "owner_alive", "cleanup", "boxes_left", "remove_own",
    # the null network
    "NULL", "null_network", "HOLDER_HOSTNAME",
    # containers of one command
    "run", "ServiceHandle", "start_service", "service_ended", "service_exec", "service_output", "stop",
    # boxes
    "BOX_IDLE", "Box", "start_box", "box_exec", "left_over_in", "box_alive", "stop_box",
]
