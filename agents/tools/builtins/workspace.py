"""File tools confined to one workspace directory.

    >>> import tempfile, pathlib
    >>> ws = Workspace(pathlib.Path(tempfile.mkdtemp()))
    >>> ws.write("notes/a.txt", "hello")
    'wrote 5 bytes to notes/a.txt'
    >>> ws.read("notes/a.txt"), ws.list(".")
    ('hello', ['notes/'])

Paths come from an LLM, so every one is hostile until checked: absolute paths, ``..``, and symlinks that
leave the root (in any component, planted before or during the run) are refused. Each component is opened
relative to its parent directory's file descriptor with O_NOFOLLOW, so a symlink swapped in between the
check and the open cannot redirect the access (no check-then-use race).
"""

from __future__ import annotations

import errno
import os
import stat
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path, PurePosixPath

from agents.tools.decorator import Tool, tool
from agents.tools.errors import PermanentToolError, ToolArgumentError

__all__ = ["MAX_FILE_BYTES", "MAX_LISTING", "Workspace", "workspace_tools"]

MAX_FILE_BYTES = 1_000_000
MAX_LISTING = 500
_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC


class Workspace:
    """A directory the agents may read and write, and nothing outside it."""

    def __init__(self, root: Path) -> None:
        root.mkdir(parents=True, exist_ok=True)
        self.root = root.resolve()

    def _parts(self, path: str) -> list[str]:
        if not isinstance(path, str) or not path.strip():
            raise ToolArgumentError("path is empty; give a path relative to the workspace, e.g. 'notes/summary.md'")
        if "\x00" in path:
            raise ToolArgumentError(f"path {path!r} contains a NUL byte")
        pure = PurePosixPath(path)
        if pure.is_absolute():
            raise ToolArgumentError(f"path {path!r} is absolute; give a path relative to the workspace root")
        parts = [p for p in pure.parts if p not in (".", "")]
        if ".." in parts:
            raise ToolArgumentError(f"path {path!r} uses '..'; paths must stay inside the workspace")
        return parts

    @contextmanager
    def _open_dir(self, parts: list[str], path: str, *, create: bool = False) -> Iterator[int]:
        """A file descriptor for the directory ``parts`` under the root, never following a symlink."""
        fd = os.open(self.root, _DIR_FLAGS)
        try:
            for part in parts:
                if create:
                    try:
                        os.mkdir(part, 0o755, dir_fd=fd)
                    except FileExistsError:
                        pass
                try:
                    next_fd = os.open(part, _DIR_FLAGS, dir_fd=fd)
                except OSError as exc:
                    raise self._refusal(exc, path, part) from None
                os.close(fd)
                fd = next_fd
            yield fd
        finally:
            os.close(fd)

    def _refusal(self, exc: OSError, path: str, part: str) -> Exception:
        if exc.errno in (errno.ELOOP, errno.ENOTDIR):
            return ToolArgumentError(f"path {path!r} goes through {part!r}, which is a symlink or not a "
                                     f"directory; symlinks are not followed inside the workspace")
        if exc.errno == errno.ENOENT:
            return PermanentToolError(f"path {path!r} does not exist in the workspace (missing {part!r})")
        return PermanentToolError(f"cannot access {path!r}: {exc.strerror}")

    def read(self, path: str) -> str:
        parts = self._parts(path)
        if not parts:
            raise ToolArgumentError("read_file needs a file path, not the workspace root")
        with self._open_dir(parts[:-1], path) as dir_fd:
            try:
                fd = os.open(parts[-1], os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK, dir_fd=dir_fd)
            except OSError as exc:
                raise self._refusal(exc, path, parts[-1]) from None
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            os.close(fd)
            raise ToolArgumentError(f"path {path!r} is not a regular file")
        with os.fdopen(fd, "rb") as handle:
            if info.st_size > MAX_FILE_BYTES:
                raise PermanentToolError(f"file {path!r} is {info.st_size} bytes; read_file returns at most "
                                         f"{MAX_FILE_BYTES} bytes")
            data = handle.read(MAX_FILE_BYTES + 1)
        try:
            return data.decode("utf-8")
        except UnicodeDecodeError:
            raise PermanentToolError(f"file {path!r} is not UTF-8 text") from None

    def write(self, path: str, content: str) -> str:
        parts = self._parts(path)
        if not parts:
            raise ToolArgumentError("write_file needs a file path, not the workspace root")
        data = content.encode("utf-8")
        if len(data) > MAX_FILE_BYTES:
            raise ToolArgumentError(f"content is {len(data)} bytes; write_file accepts at most {MAX_FILE_BYTES}")
        with self._open_dir(parts[:-1], path, create=True) as dir_fd:
            flags = os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK
            try:
                fd = os.open(parts[-1], flags, 0o644, dir_fd=dir_fd)
            except OSError as exc:
                raise self._refusal(exc, path, parts[-1]) from None
        with os.fdopen(fd, "wb") as handle:
            if not stat.S_ISREG(os.fstat(handle.fileno()).st_mode):
                raise ToolArgumentError(f"path {path!r} is not a regular file")
            handle.write(data)
        return f"wrote {len(data)} bytes to {'/'.join(parts)}"

    def list(self, subdir: str = ".") -> list[str]:
        parts = [] if subdir.strip() in (".", "") else self._parts(subdir)
        with self._open_dir(parts, subdir) as dir_fd:
            entries = []
            with os.scandir(dir_fd) as scan:
                for entry in scan:
                    prefix = "/".join([*parts, entry.name])
                    if entry.is_symlink():
                        entries.append(f"{prefix}@")
                    elif entry.is_dir(follow_symlinks=False):
                        entries.append(f"{prefix}/")
                    else:
                        entries.append(prefix)
        entries.sort()
        if len(entries) > MAX_LISTING:
            return [*entries[:MAX_LISTING], f"… {len(entries) - MAX_LISTING} more entries not shown"]
        return entries


def workspace_tools(root: Path) -> list[Tool]:
    """``read_file``, ``write_file`` and ``list_files`` bound to ``root`` (created if missing)."""
    workspace = Workspace(Path(root))

    @tool(permission="read", timeout_s=10)
    def read_file(path: str) -> str:
        """Read a UTF-8 text file from the workspace.

        Args:
            path: Path relative to the workspace root, e.g. "notes/summary.md".
        """
        return workspace.read(path)

    @tool(permission="write", idempotent=False, timeout_s=10)
    def write_file(path: str, content: str) -> str:
        """Create or overwrite a UTF-8 text file in the workspace; parent folders are created.

        Args:
            path: Path relative to the workspace root, e.g. "report.md".
            content: The whole new content of the file.
        """
        return workspace.write(path, content)

    @tool(permission="read", timeout_s=10)
    def list_files(subdir: str = ".") -> list[str]:
        """List the files and folders in a workspace folder (folders end with "/", symlinks with "@").

        Args:
            subdir: Folder relative to the workspace root; "." is the root.
        """
        return workspace.list(subdir)

    return [read_file, write_file, list_files]
