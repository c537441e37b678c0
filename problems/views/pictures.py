"""A picture stored with the corpus (problems.pictures), served to a signed-in reader with the
type its bytes were checked to be: never sniffed by the browser, never another type."""

from django.core.files.storage import default_storage
from django.http import FileResponse, Http404

from core.roles import ALL_ROLES, role_required
from problems import selectors


@role_required(*ALL_ROLES)
def picture_show(request, sha256: str):
    picture = selectors.picture_by_hash(sha256=sha256)
    if picture is None or not default_storage.exists(picture.file):
        raise Http404("No such picture.")
    response = FileResponse(
        default_storage.open(picture.file, "rb"), content_type=picture.content_type
    )
    response["X-Content-Type-Options"] = "nosniff"
    response["Content-Security-Policy"] = "default-src 'none'; sandbox"
    response["Cache-Control"] = "private, max-age=31536000, immutable"  # named by its content
    return response
