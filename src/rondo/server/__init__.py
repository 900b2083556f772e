"""The server side: the registry users decorate, the method table, dialects and the Context."""

from .methods import Method
from .request import Request

__all__ = ["Method", "Request"]
