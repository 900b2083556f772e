"""`TaskRelay.active` (asked on every relayed call) follows the upstream: its client, its era
and the capabilities it last said it offers, judged again whenever one of them changes."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

from rondo.gateway.tasks import EXTENSION, TaskRelay


def test_active_is_judged_again_when_the_client_its_era_or_its_offer_changes() -> None:
    offering = {"extensions": {EXTENSION: {}}}
    client: Any = SimpleNamespace(era="modern", server_capabilities=offering)
    link: Any = SimpleNamespace(client=client)
    relay = TaskRelay(link)
    seen = [relay.active(), relay.active()]
    client.server_capabilities = {"extensions": {}}  # reconnected: no tasks any more
    seen.append(relay.active())
    client.server_capabilities = offering
    seen.append(relay.active())
    client.era = "legacy"  # the same offer on the 2025-11-25 wire: no relay
    seen.append(relay.active())
    link.client = SimpleNamespace(era="modern", server_capabilities=dict(offering))
    seen.append(relay.active())
    link.client = None  # not connected
    seen.append(relay.active())
    assert seen == [True, True, False, True, False, True, False]
