"""Model states saved and loaded without the logits array (server child only).

With ``--cache`` the server saves the model's state after every request and loads one before every request whose
prompt a cached state starts. llama-cpp-python's ``Llama.save_state`` copies the ``scores`` array with the KV
cache: ``n_batch`` rows of the 152k-token vocabulary, 0.31 GB for Qwen2.5, into fresh memory each time (1.1 s of
page faults on 2 cores, measured in-process: the KV copy itself takes 20 ms). ``load_state`` broadcasts the saved
rows back over the whole array (1.2 s the first time). That was ~1.5 s of every call's ~1.7 s beyond the model's
own prefill and decode in the demo.

The server runs with ``--logits_all False``: sampling reads the context's own logits, ``Llama.eval`` never writes
``scores``, and only logprobs (which need ``logits_all``) read them. So nothing is lost by not copying them: these
versions keep one zero row (what the lean prompt cache kept anyway) and skip the broadcast. With ``logits_all``
on, the library's own methods run unchanged.

``install()`` swaps ``Llama.save_state`` and ``Llama.load_state``. Loaded by file path from ``_launch.py`` (the
child must not import the ``agents`` package).

Example (the one row a lean state carries, whatever the vocabulary):
    >>> lean_scores(8).shape
    (1, 8)
"""

from __future__ import annotations

import ctypes
from typing import Any

__all__ = ["install", "lean_scores"]


def lean_scores(n_vocab: int) -> Any:
    """The ``scores`` a lean state carries: one zero row (the library's ``load_state`` broadcasts it; ours
    skips it)."""
    import numpy as np

    return np.zeros((1, n_vocab), np.single)


def install() -> None:
    """Replace ``Llama.save_state`` / ``load_state`` with versions that leave ``scores`` alone unless
    ``logits_all`` is on."""
    import llama_cpp
    from llama_cpp.llama import Llama, LlamaState

    library_save, library_load = Llama.save_state, Llama.load_state

    def save_state(self: Any) -> Any:
        if self._logits_all:
            return library_save(self)
        size = int(llama_cpp.llama_state_get_size(self._ctx.ctx))
        buffer = (ctypes.c_uint8 * size)()
        n_bytes = int(llama_cpp.llama_state_get_data(self._ctx.ctx, buffer, size))
        if n_bytes > size:
            raise RuntimeError("Failed to copy llama state data")
        return LlamaState(input_ids=self.input_ids.copy(), scores=lean_scores(self._n_vocab),
                          n_tokens=self.n_tokens, llama_state=bytes(memoryview(buffer)[:n_bytes]),
                          llama_state_size=n_bytes, seed=self._seed)

    def load_state(self: Any, state: Any) -> None:
        if self._logits_all:
            return library_load(self, state)  # type: ignore[no-any-return]
        self.input_ids = state.input_ids.copy()
        self.n_tokens = state.n_tokens
        self._requires_eval = True  # the restored context decodes its last token again before sampling
        self._seed = state.seed
        data = (ctypes.c_uint8 * state.llama_state_size).from_buffer_copy(state.llama_state)
        if llama_cpp.llama_state_set_data(self._ctx.ctx, data, state.llama_state_size) != state.llama_state_size:
            raise RuntimeError("Failed to set llama state data")
        return None

    Llama.save_state = save_state  # type: ignore[method-assign]
    Llama.load_state = load_state  # type: ignore[method-assign]
