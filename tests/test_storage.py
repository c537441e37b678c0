"""Moving files between a local path and the shared storage (core/files.py)."""

from django.core.files.storage import FileSystemStorage, InMemoryStorage

from core.files import stored_file_put


def test_a_folder_storage_takes_the_local_file_by_a_rename_replacing_the_old(tmp_path):
    storage = FileSystemStorage(location=tmp_path / "media")
    old = tmp_path / "old.jsonl"
    old.write_bytes(b"old\n")
    stored_file_put(old, "exports/1/1/data.jsonl", storage=storage)
    local = tmp_path / "data.jsonl"
    local.write_bytes(b'{"a": 1}\n' * 1000)
    inode = local.stat().st_ino

    stored_file_put(local, "exports/1/1/data.jsonl", storage=storage)

    kept = tmp_path / "media" / "exports" / "1" / "1" / "data.jsonl"
    assert kept.read_bytes() == b'{"a": 1}\n' * 1000
    assert kept.stat().st_ino == inode and not local.exists()  # moved, not copied
    assert oct(kept.stat().st_mode & 0o777) == oct(0o644)


def test_another_storage_reads_the_local_file(tmp_path):
    storage = InMemoryStorage()
    local = tmp_path / "data.parquet"
    content = b"PAR1" + bytes(range(256)) * 64 + b"PAR1"
    local.write_bytes(content)

    stored_file_put(local, "exports/2/1/data.parquet", storage=storage)

    with storage.open("exports/2/1/data.parquet", "rb") as handle:
        assert handle.read() == content


def test_static_urls_are_django_s_computed_once(settings):
    """core.files.StaticStorage: the same URLs as Django's storage, each name worked out
    once; a changed STATIC_URL makes a new storage (Django resets it), so no stale URL."""
    from django.contrib.staticfiles.storage import StaticFilesStorage, staticfiles_storage

    assert staticfiles_storage.url("css/a b.css") == StaticFilesStorage().url("css/a b.css")
    assert staticfiles_storage.url("css/a b.css") is staticfiles_storage.url("css/a b.css")
    settings.STATIC_URL = "/assets/"
    assert staticfiles_storage.url("css/a b.css") == "/assets/css/a%20b.css"
