"""The tools tetrarch ships: a safe calculator, search over a bundled reference corpus, sandboxed Python,
and file tools confined to a workspace.

    >>> [t.name for t in builtin_tools()]
    ['calculator', 'doc_search', 'run_python']
"""

from __future__ import annotations

from pathlib import Path

from agents.tools.builtins.calculator import calculator, evaluate_expression
from agents.tools.builtins.docsearch import doc_search, search_corpus
from agents.tools.builtins.python_sandbox import SandboxLimits, SandboxResult, run_python, run_sandboxed
from agents.tools.builtins.workspace import Workspace, workspace_tools
from agents.tools.decorator import Tool

__all__ = [
    "SandboxLimits",
    "SandboxResult",
    "Workspace",
    "builtin_tools",
    "calculator",
    "doc_search",
    "evaluate_expression",
    "run_python",
    "run_sandboxed",
    "search_corpus",
    "workspace_tools",
]


def builtin_tools(workspace_dir: Path | None = None) -> list[Tool]:
    """The default tool set; with ``workspace_dir`` also read_file, write_file and list_files inside it."""
    tools: list[Tool] = [calculator, doc_search, run_python]
    if workspace_dir is not None:
        tools.extend(workspace_tools(Path(workspace_dir)))
    return tools
