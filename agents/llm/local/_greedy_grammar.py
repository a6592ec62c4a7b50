"""Greedy sampling under a grammar that checks one token instead of the whole vocabulary (server child only).

llama-cpp-python samples a grammar-constrained reply with the chain penalties → grammar → greedy. The grammar
step matches *every* token of the vocabulary against the grammar's stacks before greedy takes the best one: for
Qwen2.5's 152k tokens that is 25-36 ms a token, measured in-process, on a decode step of ~100 ms (2 cores).
llama.cpp's own sampler (``common_sampler_sample``) avoids it: take the best token first, check only that one
against the grammar, and filter the whole vocabulary only when it is rejected. At temperature 0 both give the same
token: greedy takes the highest logit the grammar allows, and if the unconstrained best token is allowed, it is
that one (ties go to the lowest token id in both, as llama.cpp's greedy sampler and ``numpy.argmax`` do).

``install()`` swaps ``Llama._init_sampler`` for one that returns ``GrammarCheckedGreedy`` for the server's
requests with a grammar at temperature 0 and no logits processors or mirostat; anything else keeps the library's
own chain. Loaded by file path from ``_launch.py`` (the child must not import the ``agents`` package).

Example (the check itself, without a model):
    >>> best_allowed([0.5, 3.0, 2.0], allowed=lambda token: token != 1)
    2
"""

from __future__ import annotations

import ctypes
import math
from collections.abc import Callable, Sequence
from typing import Any

__all__ = ["GrammarCheckedGreedy", "best_allowed", "checked_greedy", "install"]


def best_allowed(logits: Sequence[float], allowed: Callable[[int], bool]) -> int:
    """The token greedy sampling under a grammar picks: the highest logit ``allowed`` accepts, lowest id on ties.

    The reference the fast path is tested against (``GrammarCheckedGreedy`` must pick the same token)."""
    best, best_logit = -1, -math.inf
    for token, logit in enumerate(logits):
        if logit > best_logit and allowed(token):
            best, best_logit = token, logit
    return best


def checked_greedy(logits: Any, allows: Callable[[int], bool], filter_all: Callable[[], None]) -> tuple[int, bool]:
    """The fast path on a logits array (numpy): the best token if ``allows`` it, else the best after
    ``filter_all()`` set every rejected logit to -inf in place. Returns the token and whether it filtered all."""
    import numpy as np

    token = int(np.argmax(logits))
    if allows(token):
        return token, False
    filter_all()
    return int(np.argmax(logits)), True


class GrammarCheckedGreedy:
    """Penalties, then greedy, then the grammar checks the chosen token alone (the whole vocabulary on a reject).

    Stands in for ``llama_cpp._internals.LlamaSampler`` where ``Llama.sample`` calls ``.sample(ctx, idx)``. It owns
    ``chain`` (penalties → greedy, built by the library) and ``grammar`` (a lone grammar sampler)."""

    def __init__(self, chain: Any, grammar_sampler: Any, n_vocab: int) -> None:
        import llama_cpp
        import numpy as np

        self._lib = llama_cpp
        self._np = np
        self.chain = chain  # keeps the library's LlamaSampler (and so its penalties sampler) alive
        self._penalties = llama_cpp.llama_sampler_chain_get(chain.sampler, 0)
        self._grammar = grammar_sampler
        self._n_vocab = n_vocab
        self._all = (llama_cpp.llama_token_data * n_vocab)()
        self._all_view = np.ctypeslib.as_array(self._all)
        self._all_view["id"] = np.arange(n_vocab, dtype=np.intc)
        self._one = (llama_cpp.llama_token_data * 1)()
        self._one_view = np.ctypeslib.as_array(self._one)
        self.full_filters = 0  # how often the chosen token was rejected and the whole vocabulary filtered

    def _candidates(self, data: Any, size: int) -> Any:
        lib = self._lib
        return lib.llama_token_data_array(data=ctypes.cast(data, lib.llama_token_data_p), size=size, selected=-1,
                                          sorted=False)

    @property
    def grammar(self) -> Any:
        """The grammar sampler, in the state after the last accepted token (``_jump_forward.py`` probes a copy)."""
        return self._grammar

    def sample(self, ctx: Any, idx: int = -1) -> int:
        lib, np = self._lib, self._np
        logits = np.ctypeslib.as_array(lib.llama_get_logits_ith(ctx.ctx, idx), shape=(self._n_vocab,))
        view = self._all_view
        view["logit"] = logits  # "p" stays as allocated (zero): neither penalties nor the grammar read it
        everything = self._candidates(self._all, self._n_vocab)
        lib.llama_sampler_apply(self._penalties, ctypes.byref(everything))
        token, filtered = checked_greedy(
            view["logit"], lambda t: self._allows(t, float(view["logit"][t])),
            lambda: lib.llama_sampler_apply(self._grammar, ctypes.byref(everything)))
        self.full_filters += filtered
        lib.llama_sampler_accept(self._penalties, token)
        lib.llama_sampler_accept(self._grammar, token)
        return token

    def _allows(self, token: int, logit: float) -> bool:
        one = self._one_view
        one["id"], one["logit"] = token, logit
        self._lib.llama_sampler_apply(self._grammar, ctypes.byref(self._candidates(self._one, 1)))
        return math.isfinite(float(one["logit"][0]))

    def close(self) -> None:
        if self._grammar is not None:
            self._lib.llama_sampler_free(self._grammar)
            self._grammar = None
        self.chain.close()

    def __del__(self) -> None:
        self.close()


def install() -> None:
    """Route the library's grammar-constrained greedy requests through ``GrammarCheckedGreedy``."""
    import llama_cpp
    from llama_cpp.llama import Llama

    library_init_sampler = Llama._init_sampler

    def init_sampler(self: Llama, *args: Any, **kwargs: Any) -> Any:
        grammar = kwargs.get("grammar")
        plain_greedy = (kwargs.get("temp", 0.80) == 0.0 and kwargs.get("logits_processor") is None
                        and kwargs.get("mirostat_mode", 0) == 0 and not args)
        if grammar is None or not plain_greedy:
            return library_init_sampler(self, *args, **kwargs)
        chain = library_init_sampler(self, **{**kwargs, "grammar": None})
        grammar_sampler = llama_cpp.llama_sampler_init_grammar(
            self._model.vocab, grammar._grammar.encode("utf-8"), grammar._root.encode("utf-8"))
        return GrammarCheckedGreedy(chain, grammar_sampler, self._n_vocab)

    Llama._init_sampler = init_sampler  # type: ignore[method-assign]
