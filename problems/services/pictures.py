"""Storing the pictures an import found (problems.pictures checks them) through the storage
API, once by content: `pictures/<sha256>.<ext>`, and a `Picture` row for each."""

from __future__ import annotations

from django.core.files.base import ContentFile
from django.core.files.storage import default_storage

from problems import pictures
from problems.models import Picture


def pictures_store(*, found: dict[str, pictures.Picture], write_files: bool = True) -> int:
    """Stores each picture not stored yet; returns how many were new. A dry run
    (`write_files` false) makes the rows (rolled back with the import) and writes no file."""
    if not found:
        return 0
    known = set(Picture.objects.filter(sha256__in=found).values_list("sha256", flat=True))
    fresh = [picture for sha, picture in found.items() if sha not in known]
    for picture in fresh:
        name = f"pictures/{picture.name}"
        if write_files and not default_storage.exists(name):
            default_storage.save(name, ContentFile(picture.data))
    Picture.objects.bulk_create(
        [
            Picture(
                sha256=p.sha256,
                content_type=p.content_type,
                size=len(p.data),
                file=f"pictures/{p.name}",
            )
            for p in fresh
        ],
        ignore_conflicts=True,
    )
    return len(fresh)
