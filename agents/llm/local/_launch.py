"""Child-side entry point of the managed llama.cpp server: ``python .../_launch.py ARGS``.

Run by file path, not ``-m``: that keeps the child from importing the ``agents`` package (and Ray).

It runs ``llama_cpp.server`` with ``ARGS`` after five steps:

* **No orphans.** ``stop()`` and interpreter exit terminate the server, but a parent killed with
  SIGKILL (``ray.kill``, an OOM kill, a CI timeout) runs no cleanup. A daemon thread therefore
  watches the parent pid named in ``TETRARCH_PARENT_PID`` and exits as soon as this process has been
  re-parented. (``PR_SET_PDEATHSIG`` would tie the server's life to the *thread* that spawned it,
  which is wrong when a thread pool starts the server.)
* **A prompt cache that keeps its cap.** With ``--cache``, llama-cpp-python stores a model state after every
  request and drops the oldest states past ``--cache_size``. Each state also carries a copy of the logits array
  (~0.3 GB for a 152k-token vocabulary), which the cap does not count, so the server grew without bound. The
  server runs with ``--logits_all False`` (we never ask for logprobs), where sampling reads the context's own
  logits and nothing reads that copy back; states are therefore saved and loaded without it (``_lean_state.py``:
  the copy alone cost ~1.1 s a request), the cache keeps them so (``_LeanRAMCache``), and the cap counts what is
  kept. It also drops conversation steps before prefilled prefixes (``_prompt_cache.py``),
  so the roles' instructions prefilled at start-up stay cached however many other calls come in between, and
  with ``TETRARCH_STATE_DIR`` set keeps those prefixes on disk for the next start (``_state_shelf.py``).
* **Forced text in one batch.** What a reply's grammar forces (a JSON reply's keys and punctuation) is fed to the
  model in one batch instead of one decode step a token (``_jump_forward.py``; ``TETRARCH_JUMP_FORWARD=0``: off).
* **One grammar check a token.** Our requests are greedy (temperature 0) and most carry a JSON-schema grammar;
  the library filters the whole 152k-token vocabulary through the grammar before every token (25-36 ms of a
  ~100 ms step on 2 cores). ``_greedy_grammar.py`` checks the greedy token alone and filters everything only when
  it is rejected, as llama.cpp's own sampler does; the replies are the same, token for token.
* **No surprise settings.** llama_cpp.server reads its options from same-named environment variables
  too (``PORT``, ``HOST``, ``API_KEY``, ``N_CTX`` …, no prefix), so a ``PORT`` or ``API_KEY`` set for
  something else would silently move the server or lock us out. They are removed; the command line
  is the only source of settings.

Example:
    >>> _settings_env_names({"n_ctx": None, "model": None}) >= {"n_ctx", "model", "port", "host"}
    True
"""

from __future__ import annotations

import os
import sys

# Run as a script, Python puts this directory first on sys.path; its module names (server, errors…)
# must not shadow anything llama_cpp imports.
if sys.path and os.path.abspath(sys.path[0] or ".") == os.path.dirname(os.path.abspath(__file__)):
    del sys.path[0]

import threading
import time
from collections.abc import Iterable, Sequence
from typing import Any

__all__ = ["JUMP_FORWARD_ENV", "PARENT_PID_ENV", "STATE_DIR_ENV", "main"]

PARENT_PID_ENV = "TETRARCH_PARENT_PID"
STATE_DIR_ENV = "TETRARCH_STATE_DIR"
"""Where prefilled prefix states are kept across starts (``_state_shelf.py``); unset: nowhere."""
JUMP_FORWARD_ENV = "TETRARCH_JUMP_FORWARD"
"""``0``: decode what a reply's grammar forces token by token, as the library does (``_jump_forward.py``)."""
_WATCH_INTERVAL_S = 1.0


def _settings_env_names(fields: Iterable[str]) -> set[str]:
    return {name.lower() for name in fields} | {"host", "port", "config_file"}


def _scrub_settings_env() -> None:
    from llama_cpp.server.settings import Settings

    names = _settings_env_names(Settings.model_fields)
    for key in list(os.environ):
        if key.lower() in names:
            del os.environ[key]


def _watch_parent(parent_pid: int) -> None:
    while os.getppid() == parent_pid:
        time.sleep(_WATCH_INTERVAL_S)
    # The parent is gone and nobody will ever stop us: exit now (no handlers, no atexit).
    os._exit(0)


def _load_sibling(name: str) -> Any:
    """A module of this directory, by file path: this child must not import the agents package (see above)."""
    import importlib.util

    spec = importlib.util.spec_from_file_location(
        f"tetrarch_{name}", os.path.join(os.path.dirname(os.path.abspath(__file__)), f"_{name}.py"))
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    # Registered before it runs: dataclasses look their module up in sys.modules.
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def _install_lean_prompt_cache() -> None:
    """Make the server's ``--cache_type ram`` build ``_LeanRAMCache`` (it looks the class up at load time)."""
    import llama_cpp
    import numpy as np
    from llama_cpp.llama import Llama, LlamaState
    from llama_cpp.llama_cache import LlamaRAMCache

    prompt_cache = _load_sibling("prompt_cache")
    state_dir = os.environ.pop(STATE_DIR_ENV, "")

    class _LeanRAMCache(LlamaRAMCache):
        def __init__(self, capacity_bytes: int = (2 << 30)) -> None:
            super().__init__(capacity_bytes)
            self.states = prompt_cache.PrefixStateCache(
                capacity_bytes, size_of=lambda state: state.llama_state_size,
                common_prefix=Llama.longest_token_prefix)
            self.shelf = _open_shelf(state_dir, capacity_bytes // 2) if state_dir else None
            if self.shelf is not None:
                for key, fields in self.shelf.load():
                    self.states.preload(key, _state_from(LlamaState, fields))

        @property
        def cache_size(self) -> int:
            return int(self.states.size)

        def _find_longest_prefix_key(self, key: tuple[int, ...]) -> tuple[int, ...] | None:
            return self.states.longest_prefix_key(key)  # type: ignore[no-any-return]

        def __getitem__(self, key: Sequence[int]) -> LlamaState:
            return self.states.get(key)  # type: ignore[no-any-return]

        def __contains__(self, key: Sequence[int]) -> bool:
            return self.states.longest_prefix_key(key) is not None

        def __setitem__(self, key: Sequence[int], value: LlamaState) -> None:
            if value.scores.shape[0] <= 1:  # saved lean already (_lean_state.py)
                self.states.put(key, value)
                self._shelve(key, value)
                return
            # One zero row broadcasts into the rows load_state fills; with logits_all off nothing reads them.
            lean = LlamaState(input_ids=value.input_ids, scores=np.zeros((1, value.scores.shape[1]), np.single),
                              n_tokens=value.n_tokens, llama_state=value.llama_state,
                              llama_state_size=value.llama_state_size, seed=value.seed)
            self.states.put(key, lean)
            self._shelve(key, lean)

        def _shelve(self, key: Sequence[int], state: LlamaState) -> None:
            """A prefix (a prefill) is kept on disk for the next start, once."""
            if self.shelf is None or not self.states.is_prefix(key) or self.shelf.has(key):
                return
            self.shelf.save(key, {"input_ids": state.input_ids, "n_tokens": state.n_tokens,
                                  "llama_state": state.llama_state, "llama_state_size": state.llama_state_size,
                                  "seed": state.seed, "n_vocab": state.scores.shape[1]})

    llama_cpp.LlamaRAMCache = _LeanRAMCache  # type: ignore[misc]


def _state_from(state_type: Any, fields: dict[str, Any]) -> Any:
    """A lean state (one zero row of scores, ``_lean_state.py``) from the fields a shelf kept."""
    import numpy as np

    return state_type(input_ids=fields["input_ids"], scores=np.zeros((1, fields["n_vocab"]), np.single),
                      n_tokens=fields["n_tokens"], llama_state=fields["llama_state"],
                      llama_state_size=fields["llama_state_size"], seed=fields["seed"])


def _open_shelf(state_dir: str, max_bytes: int) -> Any:
    import llama_cpp

    shelf = _load_sibling("state_shelf")
    build = shelf.build_fingerprint(os.path.dirname(llama_cpp.__file__), llama_cpp.__version__)
    return shelf.StateShelf(state_dir, build=build, max_bytes=max_bytes)


def _install_grammar_checked_greedy() -> None:
    _load_sibling("greedy_grammar").install()
    if os.environ.pop(JUMP_FORWARD_ENV, "1") != "0":
        _load_sibling("jump_forward").install()


def main(argv: list[str] | None = None) -> None:
    args = sys.argv[1:] if argv is None else argv
    parent = os.environ.pop(PARENT_PID_ENV, "")
    if parent.isdigit():
        threading.Thread(target=_watch_parent, args=(int(parent),), name="parent-watch", daemon=True).start()
    _scrub_settings_env()
    if "--cache" in args:
        _install_lean_prompt_cache()
        _load_sibling("lean_state").install()
    _install_grammar_checked_greedy()
    from llama_cpp.server.__main__ import main as server_main

    sys.argv = ["llama_cpp.server", *args]
    server_main()


if __name__ == "__main__":
    main()
