"""The live web view (``tetrarch ui``): a task list and task pages over a store's event log, updated live.

``create_app`` builds the ASGI app; ``UIServer`` runs it with uvicorn on 127.0.0.1 (port 0: any free port) in a
background thread; ``agents.ui.auth`` holds the token rule shared with ``tetrarch mcp serve --http``.
See docs/ui.md for what the page shows and who may reach it.
"""

from agents.ui.app import Responder, create_app
from agents.ui.server import UIServer

__all__ = ["Responder", "UIServer", "create_app"]
