"""Large step outputs as files beside the database: ``<db>.blobs/<task>/v<plan>-s<step>-a<attempt>.json``.

A blob is complete on disk (temp file, fsync, rename, directory fsync) before the row that names it
is committed, so a committed row never points at a partial file. A crash between the two leaves an
unreferenced file at worst, which ``delete_task`` removes with the task's directory.

Example:
    >>> import tempfile, pathlib
    >>> blobs = BlobDir(pathlib.Path(tempfile.mkdtemp()) / "t.db")
    >>> rel = blobs.write("t1", 1, 2, 1, '{"big": true}')
    >>> rel
    't.db.blobs/t1/v1-s2-a1.json'
    >>> blobs.read(rel)
    '{"big": true}'
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path

from agents.store.errors import BlobMissingError

__all__ = ["BlobDir"]

_SAFE_ID = re.compile(r"[A-Za-z0-9_-][A-Za-z0-9_.-]{0,99}")


def _dir_name(task_id: str) -> str:
    # Task ids come from users: anything that could escape the blob root ("../x", "a/b") is hashed.
    if _SAFE_ID.fullmatch(task_id):
        return task_id
    return "h-" + hashlib.sha256(task_id.encode()).hexdigest()[:32]


def _fsync_dir(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


@dataclass(frozen=True, slots=True)
class BlobDir:
    db_path: Path

    @property
    def root(self) -> Path:
        return self.db_path.with_name(self.db_path.name + ".blobs")

    def task_dir(self, task_id: str) -> Path:
        return self.root / _dir_name(task_id)

    def write(self, task_id: str, plan_version: int, step_id: int, attempt: int, text: str) -> str:
        """Write durably; returns the path relative to the database's directory (what the row stores)."""
        folder = self.task_dir(task_id)
        folder.mkdir(parents=True, exist_ok=True)
        final = folder / f"v{plan_version}-s{step_id}-a{attempt}.json"
        fd, tmp = tempfile.mkstemp(dir=folder, prefix=".tmp-", suffix=".json")
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as fh:
                fh.write(text)
                fh.flush()
                os.fsync(fh.fileno())
            os.replace(tmp, final)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
        _fsync_dir(folder)  # the rename itself must survive before the row naming the file commits
        return final.relative_to(self.db_path.parent).as_posix()

    def read(self, relative: str) -> str:
        path = self.db_path.parent / relative
        try:
            return path.read_text(encoding="utf-8")
        except FileNotFoundError as exc:
            raise BlobMissingError(str(path)) from exc

    def unlink(self, relative: str) -> None:
        (self.db_path.parent / relative).unlink(missing_ok=True)

    def remove_task(self, task_id: str) -> None:
        shutil.rmtree(self.task_dir(task_id), ignore_errors=True)
