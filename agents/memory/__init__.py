"""Memory for tetrarch: the user's documents (semantic), conversations (sessions) and a plan cache (episodic).

Pure logic (chunking, history rendering, plan templates) is separate from the SQLite tables that hold the
state; every table lives in the task store's file (``RuntimeConfig.store_path``). See docs/memory.md.

Example:
    >>> from agents.memory import DocumentIndex
    >>> DocumentIndex(":memory:").add(["Tetrarch plans before it acts."])[0].chunks
    1
"""

from agents.memory.cache_store import CachedTemplate, CacheHit, EvictionPolicy, PlanCacheStore, should_evict
from agents.memory.chunking import Chunk, chunk_text
from agents.memory.documents import DocumentIndex, DocumentInfo, Passage
from agents.memory.errors import (
    DocumentNotFoundError,
    DocumentReadError,
    FTS5UnavailableError,
    InvalidMemoryArgumentError,
    MemoryLayerError,
    SessionNotFoundError,
    TemplateNotFoundError,
    TurnNotFoundError,
)
from agents.memory.history import (
    Evidence,
    Turn,
    TurnStatus,
    compact_evidence,
    history_context,
    summarise_turn,
)
from agents.memory.plan_cache import (
    Adapt,
    Filled,
    NoMatch,
    PlanTemplate,
    Reuse,
    extract_template,
    fill,
    plan_reuse,
    render_for_planner,
)
from agents.memory.sessions import SessionInfo, SessionStore

__all__ = [  # noqa: RUF022 - grouped by layer
    # documents
    "Chunk", "DocumentIndex", "DocumentInfo", "Passage", "chunk_text",
    # sessions
    "Evidence", "SessionInfo", "SessionStore", "Turn", "TurnStatus", "compact_evidence", "history_context",
    "summarise_turn",
    # plan cache
    "Adapt", "CacheHit", "CachedTemplate", "EvictionPolicy", "Filled", "NoMatch", "PlanCacheStore", "PlanTemplate",
    "Reuse", "extract_template", "fill", "plan_reuse", "render_for_planner", "should_evict",
    # errors
    "DocumentNotFoundError", "DocumentReadError", "FTS5UnavailableError", "InvalidMemoryArgumentError",
    "MemoryLayerError", "SessionNotFoundError", "TemplateNotFoundError", "TurnNotFoundError",
]
