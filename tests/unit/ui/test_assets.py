"""The page's assets ship in the wheel and fetch nothing from the internet."""

from __future__ import annotations

import fnmatch
import re
import tomllib
from pathlib import Path

STATIC = Path(__file__).resolve().parents[3] / "agents" / "ui" / "static"
PYPROJECT = Path(__file__).resolve().parents[3] / "pyproject.toml"


def test_every_asset_is_package_data():
    patterns = tomllib.loads(PYPROJECT.read_text())["tool"]["setuptools"]["package-data"]["agents.ui"]
    files = [p.relative_to(STATIC.parent).as_posix() for p in STATIC.iterdir()]
    assert files and all(any(fnmatch.fnmatch(f, pat) for pat in patterns) for f in files), (files, patterns)


def test_no_asset_loads_anything_from_another_origin():
    for path in STATIC.iterdir():
        text = path.read_text(encoding="utf-8")
        # The SVG namespace is an identifier, not a fetch.
        remote = [u for u in re.findall(r"(?:https?:)?//[\w.-]+\.[a-z]{2,}[^\s\"')]*", text)
                  if not u.startswith("http://www.w3.org/2000/svg")]
        assert remote == [], f"{path.name} refers to {remote}"


def test_page_text_is_never_parsed_as_markup():
    """Task text, arguments and tool output are data: the scripts set textContent, never innerHTML."""
    for path in STATIC.glob("*.js"):
        text = path.read_text(encoding="utf-8")
        assert "innerHTML" not in text and "insertAdjacentHTML" not in text and "document.write" not in text
