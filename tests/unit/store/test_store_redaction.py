"""Secrets never reach the disk: the raw database (and WAL) bytes and the blob files are grepped."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agents.events import StepFailedPayload, TaskSubmittedPayload, make_event
from agents.results import TaskResult
from agents.store import REDACTED, SecretTooShortError, Store
from agents.store.codec import decode, encode
from agents.store.redact import Redactor
from support.tiers import examples

SECRET = 'hunter2-"quoted"\\-pässword'  # quotes, a backslash and non-ASCII: JSON escaping must not hide it
LATE = "late-secret-0123456789"
OPENAI_KEY = "sk-" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4"
PROJECT_KEY = "sk-proj-" + "x_Y-z" * 8


def raw_bytes(db: Path) -> bytes:
    """Every byte the store wrote: the database, its WAL and shared-memory files, and the blob files."""
    files = [p for p in db.parent.iterdir() if p.is_file() and p.name.startswith(db.name)]
    blobs = [p for p in db.parent.rglob("*") if p.is_file() and ".blobs" in p.as_posix()]
    return b"".join(p.read_bytes() for p in files + blobs)


def secret_bytes(secret: str) -> list[bytes]:
    return [secret.encode("utf-8"), secret.encode("unicode_escape"), secret.replace('"', '\\"').encode("utf-8")]


def write_everything(store: Store, text: str) -> None:
    store.create_task("t1", f"task with {text}", {"api_key": text, text: "as a key"})
    events = [make_event(TaskSubmittedPayload(task=f"use {text}"), task_id="t1", seq=1, ts=1.0),
              make_event(StepFailedPayload(step_id=1, attempt=1, error_kind="permanent", error=f"401 for {text}"),
                         task_id="t1", seq=2, ts=2.0)]
    store.commit("t1", events, checkpoint={"note": text, "list": [text, {"deep": text}]}, status="running")
    store.put_step_output("t1", 1, 1, 1, {"out": text})
    store.put_step_output("t1", 1, 2, 1, {"big": [text] * 2000})  # over the blob threshold
    store.journal_put("t1:k", "t1", f"wrote {text}")
    store.record_llm_call("t1", {"role": "executor", "messages": [{"role": "user", "content": text}]})
    store.finish_task("t1", TaskResult(task_id="t1", status="failed", stopped_reason="internal_error",
                                       error=f"bad key {text}"))


@pytest.mark.parametrize("close_first", [True, False], ids=["after-close", "live-wal"])
def test_configured_secrets_and_key_patterns_never_hit_the_disk(tmp_path, close_first):
    db = tmp_path / "r.db"
    store = Store(db, secrets=[SECRET, ""], blob_threshold_bytes=2048)
    text = f"{SECRET} and {OPENAI_KEY} and {PROJECT_KEY}"
    write_everything(store, text)
    if close_first:
        store.close()
    data = raw_bytes(db)
    assert (tmp_path / "r.db.blobs" / "t1" / "v1-s2-a1.json").exists()
    for secret in (SECRET, OPENAI_KEY, PROJECT_KEY):
        for form in secret_bytes(secret):
            assert form not in data, f"{form!r} found on disk"
    assert data.count(REDACTED.encode()) > 10
    if not close_first:
        store.close()
    with Store(db) as again:
        assert again.load_checkpoint("t1")["note"] == f"{REDACTED} and {REDACTED} and {REDACTED}"
        assert again.get_task("t1").config == {"api_key": f"{REDACTED} and {REDACTED} and {REDACTED}",
                                               f"{REDACTED} and {REDACTED} and {REDACTED}": "as a key"}
        assert again.events("t1")[1].payload.error.startswith(f"401 for {REDACTED}")


def test_add_secret_applies_to_later_writes(tmp_path):
    db = tmp_path / "late.db"
    with Store(db) as store:
        store.create_task("before", f"early {LATE}", {})
        store.add_secret(LATE)
        store.create_task("after", f"late {LATE}", {})
        assert store.get_task("after").task == f"late {REDACTED}"
        assert store.get_task("before").task == f"early {LATE}"  # already on disk: redaction is not retroactive


def test_short_secrets_are_refused(tmp_path):
    with pytest.raises(SecretTooShortError, match="at least 4 characters"):
        Store(tmp_path / "s.db", secrets=["ab"])
    with Store(tmp_path / "s.db") as store, pytest.raises(SecretTooShortError):
        store.add_secret("x")


def test_ordinary_text_is_untouched():
    redactor = Redactor.build(["p4ssw0rd!"])
    text = "sk-learn and risk-free tasks; ghp_short; AKIA lower-case; the password is safe"
    assert redactor.redact_text(text) == text


def test_overlapping_secrets_are_replaced_whole():
    redactor = Redactor.build(["token-abc", "token-abcdef"])
    assert redactor.redact_text("x token-abcdef y token-abc z") == f"x {REDACTED} y {REDACTED} z"


@settings(max_examples=examples(150), deadline=None, derandomize=True)
@given(secret=st.text(min_size=4, max_size=20).filter(lambda s: "\x00" not in s),
       prefix=st.text(max_size=10), suffix=st.text(max_size=10))
def test_an_encoded_value_never_contains_a_registered_secret(secret, prefix, suffix):
    redactor = Redactor.build([secret])
    value = {"a": [prefix + secret + suffix, {prefix + secret: 1}], "n": 3}
    decoded = decode(encode(value, redactor, what="a value"))
    # The marker itself may contain the secret's characters ("TED]"), so it is masked before looking.
    strings = [decoded["a"][0], *decoded["a"][1]]
    assert all(secret not in s.replace(REDACTED, "\x00") for s in strings)
    assert decoded["n"] == 3


_json_values = st.recursive(st.none() | st.booleans() | st.integers() | st.text(max_size=30),
                            lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner,
                                                                                         max_size=4),
                            max_leaves=12)


@settings(max_examples=examples(300), deadline=None, derandomize=True)
@given(secret=st.text(min_size=4, max_size=12).filter(lambda s: "\x00" not in s), value=_json_values,
       planted=st.booleans())
def test_the_text_precheck_never_skips_a_value_the_walk_would_change(secret, value, planted):
    # encode skips the tree walk when the JSON text shows nothing to hide; that is only sound if the
    # walk would have changed nothing either, whatever the secret's characters (quotes, backslashes, \n).
    redactor = Redactor.build([secret])
    if planted:
        value = {"v": value, "s": f"x{secret}y"}
    text = json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    if not redactor.needs_redaction(text):
        assert redactor.redact(value) == value
    if planted:
        assert redactor.needs_redaction(text)


@settings(max_examples=examples(60), deadline=None)
@given(st.recursive(st.none() | st.booleans() | st.integers() | st.text() | st.sampled_from([SECRET, OPENAI_KEY]),
                    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner,
                                                                               max_size=4), max_leaves=12))
def test_the_checked_redaction_equals_the_tree_walk(value):
    redactor = Redactor.build([SECRET])
    checked = redactor.redact_checked(value)
    assert checked == redactor.redact(value)
    if checked != value:
        assert SECRET not in json.dumps(checked, ensure_ascii=False) and OPENAI_KEY not in json.dumps(checked)
