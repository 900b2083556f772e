"""The gateway's module moves keep their import paths: a name moved out of a module still
imports from it as the same object, and a module moved out loads only when first needed."""

from __future__ import annotations

import subprocess
import sys

import pytest

import rondo.gateway.tasks as tasks


def test_the_listen_relay_still_imports_from_gateway_tasks() -> None:
    from rondo.gateway import task_listen
    from rondo.gateway.tasks import MAX_TASK_IDS, relay_task_notes

    assert relay_task_notes is task_listen.relay_task_notes
    assert MAX_TASK_IDS == task_listen.MAX_TASK_IDS == 100


def test_gateway_tasks_still_refuses_a_name_it_never_had() -> None:
    with pytest.raises(AttributeError, match="has no attribute 'relay_notes'"):
        _ = tasks.relay_notes


def test_a_proxy_loads_the_listen_relay_only_when_asked() -> None:
    probe = ("import sys\n"
             "import rondo.gateway.proxy\n"
             "print('rondo.gateway.task_listen' in sys.modules)\n"
             "from rondo.gateway.tasks import relay_task_notes\n"
             "print('rondo.gateway.task_listen' in sys.modules)\n")
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                          timeout=60, check=True)
    assert done.stdout.split() == ["False", "True"]


def test_the_upstream_link_still_imports_from_gateway_proxy() -> None:
    import importlib

    from rondo.gateway import upstream

    proxy_module = importlib.import_module("rondo.gateway.proxy")  # the module, not `proxy()`

    for name in ("Upstream", "pass_on_log", "UNAVAILABLE", "MAX_ROUNDS", "MAX_RESPONSE"):
        assert getattr(proxy_module, name) is getattr(upstream, name), name
    assert proxy_module.MAX_ROUNDS == 16 and proxy_module.UNAVAILABLE == -32603
