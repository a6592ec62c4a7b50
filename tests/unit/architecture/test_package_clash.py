"""tetrarch and the OpenAI Agents SDK both install a top-level ``agents`` package: ``import agents`` says so."""

from __future__ import annotations

import os
import pickle
import subprocess
import sys
from pathlib import Path

from agents.errors import PackageClashError

ROOT = Path(__file__).resolve().parents[3]


def _import_agents(extra_path: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), str(extra_path)])}
    return subprocess.run([sys.executable, "-c", "import agents"], capture_output=True, text=True, env=env,
                          timeout=60, cwd=ROOT)


def test_an_installed_openai_agents_sdk_is_named_at_import(tmp_path):
    (tmp_path / "openai_agents-0.6.1.dist-info").mkdir()
    out = _import_agents(tmp_path)
    assert out.returncode != 0
    last = out.stderr.strip().splitlines()[-1]
    assert last.startswith("agents.errors.PackageClashError: tetrarch and the OpenAI Agents SDK")
    assert "separate virtual environment" in last


def test_without_it_import_agents_is_quiet(tmp_path):
    (tmp_path / "openai-0.1.dist-info").mkdir()  # another distribution of a similar name is no clash
    out = _import_agents(tmp_path)
    assert out.returncode == 0, out.stderr


def test_the_error_is_an_import_error_that_survives_pickling():
    error = PackageClashError("two agents packages")
    again = pickle.loads(pickle.dumps(error))
    assert isinstance(again, ImportError) and type(again) is PackageClashError and str(again) == str(error)
