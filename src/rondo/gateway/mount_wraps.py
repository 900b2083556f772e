"""The wraps a parent gets once its mounts need them, looking through mounts of mounts.

A mount with `visible=`, or one anywhere below it (a mount of a mount), gives the parent the
visibility filter (`Visibility`, gateway/transform.py); a mounted child with server-wide
middleware, or one below it, gives the parent `ChildMiddleware` (gateway/carried.py), and
`ChildTaskMiddleware` beside it while the parent has a tasks extension whose rows it wraps.
Each is installed once per parent, when first needed; a parent that needs neither pays nothing.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from .carried import TASKS, ChildMiddleware, ChildTaskMiddleware
from .transform import Visibility

if TYPE_CHECKING:
    from ..server.server import Server
    from .mount import Mount


def install_wraps(parent: Server, mounts: Callable[[], list[Mount]]) -> None:
    """Give `parent` (whose mounts `mounts()` lists) the visibility filter and the
    child-middleware wrap once a mount needs them: its own `visible=` or a child's middleware,
    or either anywhere below (a mount of a mount). A parent that needs neither pays nothing."""
    def needs(found: list[Mount], what: str) -> bool:
        return any((made.transform.visible is not None if what == "visible"
                    else bool(made.child.middleware)) or needs(made.below(), what)
                   for made in found)

    if Visibility.name not in parent.extensions and needs(mounts(), "visible"):
        parent.extension(Visibility(mounts))
    if ChildMiddleware.name not in parent.extensions and needs(mounts(), "middleware"):
        parent.extension(ChildMiddleware(mounts))
        parent.on_change(lambda what, detail: _task_wrap(parent, what, detail))
        _task_wrap(parent, "extension", parent.extensions.get(TASKS))


def _task_wrap(parent: Server, what: str, detail: Any) -> None:
    """Keep the child-middleware wrap of `tasks/*` while the parent has tasks rows to wrap."""
    if getattr(detail, "name", None) != TASKS:
        return
    have = ChildTaskMiddleware.name in parent.extensions
    if what == "extension" and not have:
        outer = parent.extensions.get(ChildMiddleware.name)
        if isinstance(outer, ChildMiddleware):
            parent.extension(ChildTaskMiddleware(outer))
    elif what == "unextension" and have:
        parent.remove_extension(ChildTaskMiddleware.name)
