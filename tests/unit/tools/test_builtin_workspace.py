"""Workspace file tools: ordinary use works; every way out of the root is refused and names the path."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

import pytest

from agents.tools import PermanentToolError, ToolArgumentError
from agents.tools.builtins.workspace import MAX_FILE_BYTES, Workspace, workspace_tools


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    secret = tmp_path / "outside"
    secret.mkdir()
    (secret / "secret.txt").write_text("top secret")
    return secret


@pytest.fixture
def ws(tmp_path: Path) -> Workspace:
    return Workspace(tmp_path / "ws")


def test_write_read_list_round_trip(ws: Workspace) -> None:
    assert ws.write("a/b/c.md", "héllo") == "wrote 6 bytes to a/b/c.md"
    assert ws.read("a/b/c.md") == "héllo"
    assert ws.read("./a//b/c.md") == "héllo"
    ws.write("top.txt", "x")
    assert ws.list() == ["a/", "top.txt"]
    assert ws.list("a/b") == ["a/b/c.md"]
    ws.write("top.txt", "replaced")
    assert ws.read("top.txt") == "replaced"


@pytest.mark.parametrize("path", ["/etc/passwd", "../outside/secret.txt", "a/../../outside/secret.txt", "", "a\x00b"])
def test_paths_that_leave_the_root_are_refused(ws: Workspace, path: str) -> None:
    with pytest.raises(ToolArgumentError) as info:
        ws.read(path)
    assert repr(path) in str(info.value) or "empty" in str(info.value)
    with pytest.raises(ToolArgumentError):
        ws.write(path, "x")


def test_a_symlinked_file_pointing_out_is_not_followed(ws: Workspace, outside: Path) -> None:
    os.symlink(outside / "secret.txt", ws.root / "link.txt")
    with pytest.raises(ToolArgumentError, match="'link.txt'.*symlink"):
        ws.read("link.txt")
    with pytest.raises(ToolArgumentError, match="symlink"):
        ws.write("link.txt", "overwritten")
    assert (outside / "secret.txt").read_text() == "top secret"
    assert ws.list() == ["link.txt@"]


def test_a_symlinked_parent_directory_is_not_followed(ws: Workspace, outside: Path) -> None:
    os.symlink(outside, ws.root / "sub")
    with pytest.raises(ToolArgumentError, match="'sub'"):
        ws.read("sub/secret.txt")
    with pytest.raises(ToolArgumentError, match="'sub'"):
        ws.write("sub/new.txt", "x")
    with pytest.raises(ToolArgumentError, match="'sub'"):
        ws.list("sub")
    assert sorted(p.name for p in outside.iterdir()) == ["secret.txt"]


def test_a_symlink_to_a_directory_inside_the_root_is_still_refused(ws: Workspace) -> None:
    # Following in-root symlinks would need a resolve-then-open check, which races with a swap; refuse all.
    ws.write("real/f.txt", "x")
    os.symlink(ws.root / "real", ws.root / "alias")
    with pytest.raises(ToolArgumentError, match="symlink"):
        ws.read("alias/f.txt")


def test_missing_files_large_files_and_binary_files_get_clear_errors(ws: Workspace) -> None:
    with pytest.raises(PermanentToolError, match="does not exist"):
        ws.read("nope.txt")
    (ws.root / "big.txt").write_bytes(b"x" * (MAX_FILE_BYTES + 1))
    with pytest.raises(PermanentToolError, match="at most"):
        ws.read("big.txt")
    (ws.root / "bin.dat").write_bytes(b"\xff\xfe\x00")
    with pytest.raises(PermanentToolError, match="not UTF-8"):
        ws.read("bin.dat")
    with pytest.raises(ToolArgumentError, match="at most"):
        ws.write("huge.txt", "x" * (MAX_FILE_BYTES + 1))
    ws.write("d/f.txt", "x")
    with pytest.raises(ToolArgumentError, match="not a regular file"):
        ws.read("d")


def test_the_tools_carry_their_permissions(tmp_path: Path) -> None:
    read_file, write_file, list_files = workspace_tools(tmp_path / "w")
    assert (read_file.spec.permission, write_file.spec.permission, list_files.spec.permission) == (
        "read", "write", "read")
    assert write_file.spec.idempotent is False
    assert asyncio.run(write_file.invoke({"path": "r.md", "content": "# hi"})) == "wrote 4 bytes to r.md"
    assert asyncio.run(read_file.invoke({"path": "r.md"})) == "# hi"
    assert asyncio.run(list_files.invoke({})) == ["r.md"]
