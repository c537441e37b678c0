"""Pictures a source ships with a problem or a proof (issue 36): files beside it in an archive
and data URLs in its text are checked by their bytes, stored through the storage API, shown
inline and served as what they are; SVG, fakes, oversized pictures and external addresses are
not taken."""

import base64
import struct
import zipfile
import zlib

import pytest
from django.core.files.storage import default_storage

from problems.models import Picture, Problem, Proof
from problems.pictures import picture_type
from problems.rendering import render_markdown_uncached
from problems.services import corpus_import
from tests.problems.import_files import generic_problem, generic_proof, write_jsonl

pytestmark = pytest.mark.django_db


def png(width: int = 2, height: int = 1, shade: int = 0) -> bytes:
    """A real PNG, written here: `width` x `height` grey pixels."""

    def chunk(kind: bytes, data: bytes) -> bytes:
        body = kind + data
        return struct.pack(">I", len(data)) + body + struct.pack(">I", zlib.crc32(body))

    rows = b"".join(b"\x00" + bytes([shade]) * width for _ in range(height))
    header = struct.pack(">IIBBBBB", width, height, 8, 0, 0, 0, 0)
    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", header)
        + chunk(b"IDAT", zlib.compress(rows))
        + chunk(b"IEND", b"")
    )


def data_url(data: bytes, kind: str = "image/png") -> str:
    return f"data:{kind};base64,{base64.b64encode(data).decode()}"


def test_the_four_picture_types_are_told_by_their_bytes():
    assert picture_type(png()) == ("image/png", "png")
    assert picture_type(b"\xff\xd8\xff\xe0\x00\x10JFIF") == ("image/jpeg", "jpg")
    assert picture_type(b"GIF89a\x01\x00") == ("image/gif", "gif")
    assert picture_type(b"RIFF\x10\x00\x00\x00WEBPVP8 ") == ("image/webp", "webp")
    assert picture_type(b'<svg xmlns="http://www.w3.org/2000/svg"/>') is None


def test_a_zip_with_pictures_beside_the_data_stores_and_shows_them(tmp_path, client, admin_user):
    figure, other = png(shade=10), png(3, 2, shade=200)
    lines = [
        generic_problem(
            "GEO-1",
            statement="In the figure ![triangle ABC](figures/abc.png), prove $AB = AC$.",
        ),
        generic_proof(
            "GEO-1",
            text="Reflect in the axis shown here: ![axis](figures/axis.png). Hence $AB=AC$.",
        ),
    ]
    corpus = write_jsonl(tmp_path / "geometry.jsonl", lines)
    archive = tmp_path / "upload.zip"
    with zipfile.ZipFile(archive, "w") as bundle:
        bundle.write(corpus, "geo/geometry.jsonl")
        bundle.writestr("geo/figures/abc.png", figure)
        bundle.writestr("geo/figures/axis.png", other)
    report = corpus_import(path=archive)
    assert report.ok and not report.issues, report.lines()
    assert report.pictures == 2
    stored = {p.sha256: p for p in Picture.objects.all()}
    assert len(stored) == 2
    statement = Problem.objects.get().statement
    [sha] = [sha for sha in stored if sha in statement]
    assert statement.startswith("In the figure ![triangle ABC](picture:")
    with default_storage.open(stored[sha].file, "rb") as handle:
        assert handle.read() == figure
    html = render_markdown_uncached(statement)
    assert f'<img class="picture" src="/problems/pictures/{sha}/" alt="triangle ABC"' in html
    client.force_login(admin_user)
    response = client.get(f"/problems/pictures/{sha}/")
    assert response.status_code == 200
    assert response["Content-Type"] == "image/png"
    assert response["X-Content-Type-Options"] == "nosniff"
    assert b"".join(response.streaming_content) == figure
    page = client.get("/problems/GEO-1/").content.decode()
    assert f"/problems/pictures/{sha}/" in page
    again = corpus_import(path=archive)
    assert again.pictures == 0
    assert again.counts["problems"]["unchanged"] == 1


def test_a_data_url_picture_is_stored_once_and_its_text_refers_to_it(tmp_path):
    picture = png(shade=77)
    text = f"Look: ![sketch]({data_url(picture)}) and again ![same]({data_url(picture)})."
    report = corpus_import(
        path=write_jsonl(tmp_path / "p.jsonl", [generic_problem("D-1", statement=text)])
    )
    assert report.ok and not report.issues, report.lines()
    [stored] = Picture.objects.all()
    assert (stored.content_type, stored.size) == ("image/png", len(picture))
    assert Problem.objects.get().statement == (
        f"Look: ![sketch](picture:{stored.sha256}) and again ![same](picture:{stored.sha256})."
    )


@pytest.mark.parametrize(
    ("src", "said"),
    [
        (
            data_url(
                b'<svg xmlns="http://www.w3.org/2000/svg" onload="alert(1)"/>', "image/svg+xml"
            ),
            "is SVG, which is not accepted",
        ),
        (data_url(b"GIF is what I claim to be", "image/gif"), "is not a PNG, JPEG, GIF or WebP"),
        ("data:image/png,rawbytes", "is a data URL that is not base64"),
    ],
    ids=["svg", "fake", "not base64"],
)
def test_a_picture_refused_is_a_warning_naming_file_line_and_field(tmp_path, src, said):
    lines = [generic_problem("R-0"), generic_problem("R-1", statement=f"See ![f]({src}).")]
    report = corpus_import(path=write_jsonl(tmp_path / "bad.jsonl", lines))
    assert report.ok
    [issue] = report.issues
    assert (issue["level"], issue["file"], issue["line"], issue["field"]) == (
        "warning",
        "bad.jsonl",
        2,
        "statement",
    )
    assert said in issue["message"]
    assert not Picture.objects.exists()
    assert Problem.objects.get(external_id="R-1").statement == f"See ![f]({src})."
    assert "<img" not in render_markdown_uncached(f"See ![f]({src}).")


def test_a_picture_over_the_limit_is_refused_and_an_external_one_never_fetched(tmp_path, settings):
    settings.PROOFMARK_PICTURE_MAX_BYTES = 100
    big = png(200, 200, shade=1) + b"\x00" * 200
    text = f"![big]({data_url(big)}) and ![far](https://example.org/figure.png)"
    report = corpus_import(
        path=write_jsonl(tmp_path / "p.jsonl", [generic_problem("L-1", statement=text)])
    )
    [issue] = report.issues
    assert "over the limit of 100 for a picture" in issue["message"]
    html = render_markdown_uncached(Problem.objects.get().statement)
    assert '<a href="https://example.org/figure.png"' in html and "<img" not in html


def test_a_file_outside_the_archive_is_not_read(tmp_path):
    (tmp_path / "secret.png").write_bytes(png())
    inner = tmp_path / "box"
    inner.mkdir()
    write_jsonl(inner / "p.jsonl", [generic_problem("E-1", statement="![x](../secret.png)")])
    report = corpus_import(path=inner)
    [issue] = report.issues
    assert "is not a file beside the source" in issue["message"]
    assert not Picture.objects.exists()


def test_a_proof_picture_is_shown_on_the_proof_page(tmp_path, client, admin_user):
    picture = png(shade=5)
    lines = [generic_problem("P-1"), generic_proof("P-1", text=f"![step]({data_url(picture)})")]
    corpus_import(path=write_jsonl(tmp_path / "p.jsonl", lines))
    sha = Picture.objects.get().sha256
    client.force_login(admin_user)
    proof = Proof.objects.get()
    page = client.get(f"/problems/proofs/{proof.pk}/").content.decode()
    assert f'src="/problems/pictures/{sha}/"' in page
    assert client.get("/problems/pictures/" + "0" * 64 + "/").status_code == 404


def test_an_export_writes_the_pictures_beside_the_data_and_reimports_to_the_same_texts(tmp_path):
    from decimal import Decimal

    from adjudication.models import FinalLabel
    from annotation.models import Campaign, Item
    from exports.formats import ExportOptions
    from exports.services import dataset_write

    picture = png(shade=33)
    lines = [
        generic_problem("X-1", statement=f"Given ![fig]({data_url(picture)}), prove it."),
        generic_proof("X-1", text="As drawn, done."),
    ]
    corpus_import(path=write_jsonl(tmp_path / "p.jsonl", lines))
    sha = Picture.objects.get().sha256
    statement = Problem.objects.get().statement
    campaign = Campaign.objects.create(slug="pictures", name="Pictures")
    FinalLabel.objects.create(
        item=Item.objects.create(campaign=campaign, proof=Proof.objects.get()),
        value=Decimal(7),
        scale="0-7",
        source="imported",
        policy="tests",
    )
    folder = tmp_path / "out"
    folder.mkdir()
    out = folder / "labels.jsonl"
    manifest = dataset_write(
        campaign=campaign, fmt="proofbench", file_type="jsonl", options=ExportOptions(), out=out
    )
    assert f"pictures/{sha}.png" in out.read_text()
    assert (folder / "pictures" / f"{sha}.png").read_bytes() == picture
    assert manifest["pictures"] == {"folder": "pictures", "count": 1}
    assert manifest["files"][f"pictures/{sha}.png"]["sha256"] == sha

    Campaign.objects.all().delete()
    Problem.objects.all().delete()
    Picture.objects.all().delete()
    for companion in folder.glob("labels.jsonl.*"):
        companion.unlink()
    report = corpus_import(path=folder, fmt="proofbench")
    assert report.ok and not report.issues, report.lines()
    assert Problem.objects.get().statement == statement
    assert Picture.objects.get().sha256 == sha


def test_opc_geometry_ships_its_pictures_by_name_and_spans_follow_the_text(tmp_path):
    import json

    figure, sketch = png(shade=90), png(shade=91)
    attempt_text = (
        f"Draw it: ![my sketch]({data_url(sketch)})\nThen angle $ABC$ is right, so we are done."
    )
    quote = "angle $ABC$ is right"
    start = attempt_text.index(quote)
    entry = {
        "problem_id": "GEO_2001_3",
        "metadata": {"source": "Test MO", "year": 2001},
        "problem": "In the figure ![](fig_1.png) the circle has centre $O$. Prove $OA = OB$.",
        "images": {"fig_1.png": base64.b64encode(figure).decode()},
        "solutions": [{"solution": "See ![](fig_1.png): both are radii.", "images": {"dummy": ""}}],
        "grading_scheme": [],
        "points": 7,
        "attempts": [
            {
                "model_id": "model-g",
                "solution": attempt_text,
                "timestamp": "2025-02-01T00:00:00",
                "llm_judgment": None,
                "grading": None,
                "annotations": [
                    {
                        "comment": "not justified",
                        "selected_text": quote,
                        "original_text": quote,
                        "original_text_indices": [start, start + len(quote)],
                    }
                ],
            }
        ],
    }
    path = tmp_path / "GEO_2001_3.json"
    path.write_text(json.dumps(entry), encoding="utf-8")
    report = corpus_import(path=path, fmt="opc")
    assert report.ok and not report.issues, report.lines()
    import hashlib

    assert Picture.objects.count() == 2
    problem = Problem.objects.get()
    assert f"![](picture:{hashlib.sha256(figure).hexdigest()})" in problem.statement
    assert "fig_1.png" not in problem.reference_solutions.get().text
    proof = Proof.objects.get()
    [span] = proof.metadata["imported_error_spans"]
    assert proof.text[span["start"] : span["end"]] == quote
    assert "images" not in json.dumps(problem.metadata)


def test_an_uploaded_zip_job_stores_its_pictures_and_says_so(admin_user, settings, tmp_path):
    import io

    from django.core.files.base import ContentFile

    from problems.models import ImportJob
    from problems.tasks import import_run

    settings.MEDIA_ROOT = tmp_path
    corpus = write_jsonl(
        tmp_path / "c.jsonl", [generic_problem("Z-1", statement="![f](fig/one.png) Prove it.")]
    )
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as bundle:
        bundle.write(corpus, "c.jsonl")
        bundle.writestr("fig/one.png", png(shade=3))
    job = ImportJob.objects.create(original_name="figures.zip", created_by=admin_user, total=1)
    job.file.save("figures.zip", ContentFile(buffer.getvalue()))
    import_run.apply(args=[job.pk])
    job.refresh_from_db()
    assert job.status == ImportJob.Status.SUCCEEDED, (job.error, job.report)
    assert job.made[0] == "1 picture(s) stored"
    stored = Picture.objects.get()
    assert (tmp_path / stored.file).read_bytes() == png(shade=3)


def test_an_export_job_stores_a_pictures_part_beside_its_data(tmp_path, settings):
    from decimal import Decimal

    from adjudication.models import FinalLabel
    from annotation.models import Campaign, Item
    from exports.models import ExportJob
    from exports.services import export_file_open, export_run
    from tests.conftest import as_job
    from tests.factories import UserFactory

    settings.MEDIA_ROOT = tmp_path / "media"
    picture = png(shade=120)
    lines = [
        generic_problem("J-1"),
        generic_proof("J-1", text=f"See ![the step]({data_url(picture)}). Done."),
    ]
    corpus_import(path=write_jsonl(tmp_path / "p.jsonl", lines))
    sha = Picture.objects.get().sha256
    campaign = Campaign.objects.create(slug="pictured", name="Pictured")
    FinalLabel.objects.create(
        item=Item.objects.create(campaign=campaign, proof=Proof.objects.get()),
        value=Decimal(7),
        scale="0-7",
        source="imported",
        policy="tests",
    )
    job = ExportJob.objects.create(
        campaign=campaign,
        format="proofbench",
        file_type="jsonl",
        created_by=UserFactory(roles=["researcher"]),
    )
    job = as_job("export", job.pk, lambda: export_run(job_id=job.pk))
    assert job.status == "succeeded", job.error
    assert job.manifest["pictures"] == {"folder": "pictures", "count": 1}
    handle, name = export_file_open(job, "pictures")
    with handle, zipfile.ZipFile(handle) as bundle:
        assert bundle.namelist() == [f"pictures/{sha}.png"]
        assert bundle.read(f"pictures/{sha}.png") == picture
    assert name == "pictured-proofbench.jsonl.pictures.zip"
    data, _ = export_file_open(job, "data")
    with data:
        assert f"pictures/{sha}.png" in data.read().decode()
