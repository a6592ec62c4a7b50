"""Fake part wheels (real zip files built in tmp), a fake package index, and catalogue entries for them."""

from __future__ import annotations

import hashlib
import shutil
import zipfile
from dataclasses import dataclass, field
from pathlib import Path

from agents.llm.local.catalog import LocalModel, ModelPart, PartLayout


def build_wheel(path: Path, members: dict[str, bytes]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED) as zf:
        for name, data in members.items():
            zf.writestr(name, data)
    return path


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


@dataclass
class FakeIndex:
    """Stands in for PyPI: ``fetch(part, dest)`` copies a prebuilt wheel into ``dest`` and logs the call."""

    wheels: dict[str, Path]
    calls: list[str] = field(default_factory=list)
    seen_dirs: list[Path] = field(default_factory=list)

    def fetch(self, part: ModelPart, dest: Path) -> Path:
        # Every earlier part's download must already be gone: the disk holds one wheel at a time.
        assert all(not d.exists() for d in self.seen_dirs), "a previous part's wheel was not deleted"
        self.calls.append(part.requirement)
        self.seen_dirs.append(dest)
        dest.mkdir(parents=True, exist_ok=True)
        src = self.wheels[part.requirement]
        return Path(shutil.copy(src, dest / src.name))


def split_model(name: str, chunks: list[bytes], *, sha: str | None = None, size: int | None = None) -> LocalModel:
    whole = b"".join(chunks)
    parts = tuple(
        ModelPart(requirement=f"{name}-part{i}==1.0", wheel_sha256="0" * 64,
                  member=f"{name.replace('-', '_')}_part{i}/data/part{i:02d}.bin")
        for i in range(1, len(chunks) + 1)
    )
    return LocalModel(name=name, title=name, layout=PartLayout.SPLIT_RAW, parts=parts,
                      sha256=sha or sha256(whole), size=len(whole) if size is None else size, n_ctx=512,
                      quantization="Q4_K_M", license="Apache-2.0", notes=f"fake {name}")


def wheels_for(model: LocalModel, chunks: list[bytes], root: Path) -> dict[str, Path]:
    out = {}
    for part, chunk in zip(model.parts, chunks, strict=True):
        pkg = part.package.replace("-", "_")
        out[part.requirement] = build_wheel(root / f"{pkg}-1.0-py3-none-any.whl", {
            f"{pkg}/__init__.py": b"raise SystemExit('never imported')\n",
            part.member: chunk,
            f"{pkg}-1.0.dist-info/METADATA": b"Name: x\n",
        })
    return out
