"""tiktoken counts tokens with no network at all: a fresh process, an empty tiktoken cache, sockets refused
(and, where this machine allows, a network namespace with no interfaces up)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from prompts.tokens import OFFLINE_ENCODINGS, TokenizerUnavailableError, count_tokens, get_encoding

SAMPLE = "Paris had about 2.10 million people in 2023; Rome had 2.75 million. Δ = 0.65M — ok? 🙂"

_CHILD = textwrap.dedent("""
    import json, sys
    def no_network(event, args):
        if event.startswith("socket.") or event == "urllib.Request":
            raise RuntimeError(f"network used: {event} {args[:2]}")
    sys.addaudithook(no_network)
    from prompts.tokens import count_tokens
    print(json.dumps({name: count_tokens(sys.argv[1], name) for name in sys.argv[2:]}))
""")


def _can_unshare() -> bool:
    unshare = shutil.which("unshare")
    return bool(unshare) and os.geteuid() == 0 and subprocess.run(
        [unshare, "--net", "--", "true"], capture_output=True, check=False).returncode == 0


def test_a_fresh_process_counts_tokens_without_any_network(tmp_path: Path) -> None:
    cache = tmp_path / "empty-cache"
    env = {"PATH": os.environ.get("PATH", ""), "HOME": str(tmp_path), "TIKTOKEN_CACHE_DIR": str(cache),
           "PYTHONPATH": str(Path(__file__).resolve().parents[3])}
    command = [sys.executable, "-c", _CHILD, SAMPLE, *OFFLINE_ENCODINGS]
    if _can_unshare():
        command = [shutil.which("unshare") or "unshare", "--net", "--", *command]
    proc = subprocess.run(command, env=env, capture_output=True, text=True, timeout=120, check=False)
    assert proc.returncode == 0, proc.stderr
    counts = json.loads(proc.stdout)
    # The same counts as this process's encodings; tiktoken verified each file's sha256 while loading.
    assert counts == {name: count_tokens(SAMPLE, name) for name in OFFLINE_ENCODINGS}
    assert sorted(p.name for p in cache.iterdir()) and all(v > 10 for v in counts.values())


def test_known_token_ids_round_trip() -> None:
    for name in OFFLINE_ENCODINGS:
        enc = get_encoding(name)
        assert enc.decode(enc.encode(SAMPLE)) == SAMPLE
        assert count_tokens("hello world", name) == 2


def test_an_unknown_encoding_says_which_ones_work() -> None:
    with pytest.raises(TokenizerUnavailableError, match="cl100k_base"):
        get_encoding("p50k_base")
