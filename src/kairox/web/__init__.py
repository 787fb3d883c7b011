"""The local web UI: chat with proposal cards, the memory browser and the context inspector.

FastAPI and uvicorn are optional (the ``web`` extra); importing this package without them raises
``MissingExtra`` naming the extra to install.
"""

from __future__ import annotations

from kairox.core.errors import MissingExtra

try:
    import fastapi  # noqa: F401
    import uvicorn  # noqa: F401
except ImportError:  # pragma: no cover - depends on the installed extras
    raise MissingExtra("the web UI (kairox serve)", "web") from None

from kairox.web.app import create_app
from kairox.web.deps import WebContext
from kairox.web.security import SecurityConfig
from kairox.web.server import ServerOptions, WebServer, prepare, serve

__all__ = [
    "SecurityConfig",
    "ServerOptions",
    "WebContext",
    "WebServer",
    "create_app",
    "prepare",
    "serve",
]
