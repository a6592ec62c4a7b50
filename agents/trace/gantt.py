"""Gantt timelines of step attempts, rendered with matplotlib (PNG). Used by `tetrarch trace --png` and by the
benchmark report's "plan-then-execute vs ReAct" picture.

A timeline is a list of ``{"step_id", "tool", "status", "start", "end"}`` dicts, times in seconds from submit;
an optional ``"name"`` replaces the ``step_id:tool`` label (LLM-call rows have ``step_id`` None, status "llm").
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from pathlib import Path
from typing import Any

__all__ = ["plot_gantt", "plot_gantt_comparison", "STATUS_COLORS"]

STATUS_COLORS = {"llm": "#5b7bd5", "completed": "#4c9a5b", "failed": "#c8443b", "skipped": "#bbbbbb", "cancelled": "#999999",
                 "running": "#e0a030", "pending": "#dddddd"}


def _right_edge(timeline: Sequence[Mapping[str, Any]], wall_s: float | None) -> float:
    """Where the time axis ends: past the last bar or the finish line, with room for the labels."""
    return max([wall_s or 0.0, *(b["end"] for b in timeline), 0.1]) * 1.15


def _draw(ax: Any, timeline: Sequence[Mapping[str, Any]], wall_s: float | None, critical: Collection[int],
          right: float | None = None) -> None:
    rows = sorted(timeline, key=lambda b: (b["start"], b["step_id"]))
    for y, bar in enumerate(rows):
        color = STATUS_COLORS.get(bar["status"], "#5b7bd5")
        edge = "#222222" if bar["step_id"] in critical else "none"
        ax.barh(y, max(bar["end"] - bar["start"], 0.005), left=bar["start"], color=color, edgecolor=edge,
                linewidth=1.5 if edge != "none" else 0)
        label = bar.get("name") or f"{bar['step_id']}:{bar['tool']}"
        ax.text(bar["end"], y, f" {label}", va="center", fontsize=7)
    ax.set_yticks([])
    ax.set_xlim(0, right or _right_edge(timeline, wall_s))
    ax.set_ylim(-0.8, max(len(rows), 1) - 0.2)
    ax.invert_yaxis()
    if wall_s:
        ax.axvline(wall_s, color="#333333", linestyle="--", linewidth=1)
        ax.text(wall_s, -0.6, f" done {wall_s:.2f}s", fontsize=7)
    ax.grid(axis="x", alpha=0.3)


def plot_gantt(timeline: Sequence[Mapping[str, Any]], path: Path, *, title: str = "", wall_s: float | None = None,
               critical: Collection[int] = ()) -> Path:
    """One task's timeline; critical-path steps get a dark outline."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(10, 0.35 * max(len(timeline), 3) + 1.2))
    _draw(ax, timeline, wall_s, critical)
    ax.set_xlabel("seconds since submit")
    ax.set_title(title, fontsize=10)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def plot_gantt_comparison(runs: Mapping[str, tuple[Sequence[Mapping[str, Any]], float]], path: Path, *,
                          title: str = "") -> Path:
    """Several systems on the same task, one panel each, on a shared time axis."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    heights = [0.3 * max(len(t), 3) + 0.8 for t, _ in runs.values()]
    fig, axes = plt.subplots(len(runs), 1, figsize=(10, sum(heights) + 0.8), sharex=True,
                             gridspec_kw={"height_ratios": heights}, squeeze=False)
    right = max(_right_edge(t, w) for t, w in runs.values())
    for ax, (label, (timeline, wall)) in zip(axes[:, 0], runs.items(), strict=True):
        _draw(ax, timeline, wall, (), right)
        ax.set_title(label, fontsize=8, loc="left")
    axes[-1, 0].set_xlabel("seconds since submit")
    fig.suptitle(title, fontsize=10)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path
