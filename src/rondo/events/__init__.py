"""The events extension (`io.modelcontextprotocol/events`, SEP-3415 draft): EXPERIMENTAL.

    events = server.extension(Events())
    events.event("order.shipped", description="An order left the warehouse",
                 payload_schema={...})
    await server.emit("order.shipped", {"order": "A-1"})

See docs/events.md, which also says what of the draft could not be settled.
"""

from .extension import Events
from .log import BadCursor, EventLog, MemoryEventLog, RedisEventLog
from .types import EXTENSION, SEP_CODES, SKETCH_CODES, EventType, default_match
from .webhook import Delivery, WebhookError, parse_secret, sign, verify

__all__ = ["EXTENSION", "SEP_CODES", "SKETCH_CODES", "BadCursor", "Delivery", "EventLog",
           "EventType", "Events", "MemoryEventLog", "RedisEventLog", "WebhookError",
           "default_match", "parse_secret", "sign", "verify"]
