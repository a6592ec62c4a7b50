"""The live web view (``tetrarch ui``): a task list and task pages over a store's event log, updated live.

``create_app`` builds the ASGI app; ``UIServer`` runs it with uvicorn on 127.0.0.1 (port 0: any free port) in a
background thread; ``agents.ui.auth`` (tokens) and ``agents.ui.loopback`` (which binds need one, which Host and
Origin headers are answered) are shared with ``tetrarch mcp serve --http``; every page is a static file
(``agents.ui.pages``) and every response carries security headers.
See docs/ui.md for what the page shows and who may reach it.
"""

from agents.ui.app import Responder, create_app
from agents.ui.server import UIServer

__all__ = ["Responder", "UIServer", "create_app"]
