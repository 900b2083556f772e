"""Per-user state: a key-value space per verified caller that lasts across stateless calls.

    server.extension(UserState(store=RedisStore("redis://...")))

    @server.tool
    async def remember(color: str, ctx: rondo.Context) -> str:
        await ctx.user_state.set("color", color, ttl=3600)

See docs/state.md ("Per-user state").
"""

from .errors import NoPrincipal, StateTooLarge, StoreUnavailable, UserStateError
from .extension import NAME, UserState
from .file_store import FileStore
from .redis_store import RedisStore
from .store import MemoryStore, UserStateStore
from .view import ABSENT, SyncUserStateView, UserStateView

__all__ = [
    "ABSENT",
    "NAME",
    "FileStore",
    "MemoryStore",
    "NoPrincipal",
    "RedisStore",
    "StateTooLarge",
    "StoreUnavailable",
    "SyncUserStateView",
    "UserState",
    "UserStateError",
    "UserStateStore",
    "UserStateView",
]

