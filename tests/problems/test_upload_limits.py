"""Uploads refused early and cleanly: over the limit by its declared length before a byte is
read (413), stopped at the limit when it streams past it, and a disk that fills while the
upload is written answers 507 with the reason, the partial file removed at once."""

import json
import subprocess

import hypothesis
import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from hypothesis import strategies as st

from core.files import FORM_SLACK, UploadLimitHandler, UploadTooLarge
from problems.importers import _depth
from problems.models import ImportJob
from tests.factories import UserFactory

pytestmark = pytest.mark.django_db


def test_the_api_refuses_an_upload_over_the_limit_by_its_length(api_client_for, settings):
    settings.PROOFMARK_MAX_UPLOAD_BYTES = 100
    api = api_client_for(UserFactory(roles=["admin"]))
    body = b'{"x": 1}\n' * (FORM_SLACK // 8)  # over 100 bytes + the form's MiB
    answer = api.post(
        "/api/v1/imports/", {"file": SimpleUploadedFile("big.jsonl", body)}, format="multipart"
    )
    assert answer.status_code == 413
    assert "the limit is" in answer.json()["detail"]
    assert ImportJob.objects.count() == 0


def test_a_body_streaming_past_the_limit_is_stopped_there(settings):
    settings.PROOFMARK_MAX_UPLOAD_BYTES = 0
    handler = UploadLimitHandler()
    handler.handle_raw_input(None, {}, None, "b")  # no declared length: a streamed body
    handler.receive_data_chunk(b"x" * FORM_SLACK, 0)
    with pytest.raises(UploadTooLarge, match="went past the limit"):
        handler.receive_data_chunk(b"x", FORM_SLACK)


@pytest.fixture
def small_disk(tmp_path):
    """A 2 MiB file system (tmpfs), where an upload's temporary file fills the disk."""
    mount = tmp_path / "small"
    mount.mkdir()
    subprocess.run(["mount", "-t", "tmpfs", "-o", "size=2m", "tmpfs", str(mount)], check=True)
    try:
        yield mount
    finally:
        subprocess.run(["umount", str(mount)], check=True)


def test_a_full_disk_answers_507_and_keeps_nothing(api_client_for, settings, small_disk):
    settings.FILE_UPLOAD_TEMP_DIR = str(small_disk)
    settings.FILE_UPLOAD_MAX_MEMORY_SIZE = 1024  # to a temporary file at once
    api = api_client_for(UserFactory(roles=["admin"]))
    body = b'{"x": 1}\n' * (3 * 1024 * 1024 // 9)  # 3 MiB: more than the disk
    answer = api.post(
        "/api/v1/imports/", {"file": SimpleUploadedFile("big.jsonl", body)}, format="multipart"
    )
    assert answer.status_code == 507
    assert "disk is full" in answer.json()["detail"]
    assert list(small_disk.iterdir()) == []  # the partial file is gone already
    assert ImportJob.objects.count() == 0


def test_json_nested_too_deep_is_refused_at_the_door_with_its_line(api_client_for):
    api = api_client_for(UserFactory(roles=["admin"]))
    good = b'{"kind": "problem", "id": "D-1", "statement": "S"}\n'
    deep = b'{"kind": "problem", "id": "D-2", "x": ' + b"[" * 200 + b"]" * 200 + b"}\n"
    answer = api.post(
        "/api/v1/imports/",
        {"file": SimpleUploadedFile("deep.jsonl", good + deep), "format": "jsonl"},
        format="multipart",
    )
    assert answer.status_code == 400
    assert "line 2 nests 201 levels deep" in str(answer.json())
    assert ImportJob.objects.count() == 0
    brackets_in_text = b'{"kind": "problem", "id": "D-3", "statement": "' + b"[" * 200 + b'"}\n'
    accepted = api.post(
        "/api/v1/imports/",
        {"file": SimpleUploadedFile("text.jsonl", good + brackets_in_text), "format": "jsonl"},
        format="multipart",
    )
    assert accepted.status_code == 202, accepted.json()


def _nesting(value) -> int:
    if isinstance(value, dict):
        return 1 + max(map(_nesting, value.values()), default=0)
    if isinstance(value, list):
        return 1 + max(map(_nesting, value), default=0)
    return 0


# texts full of what fools a reader that does not parse: quotes, backslashes, brackets
_TRICKY = st.text(alphabet='ab"\\[]{}\n\u00e9', max_size=12)
_JSON = st.recursive(
    st.none() | st.integers() | _TRICKY,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(_TRICKY, inner, max_size=3),
    max_leaves=25,
)


@hypothesis.settings(max_examples=300, derandomize=True)
@hypothesis.given(_JSON, st.booleans())
def test_the_door_measures_the_nesting_json_decodes(value, ascii_only):
    """The door's count (importers._depth) against the decoded value's, for any text in the
    strings: escaped quotes, a backslash ending a string, brackets inside strings."""
    line = json.dumps(value, ensure_ascii=ascii_only).encode()
    assert _depth(line) == _nesting(value)
