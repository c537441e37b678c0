"""Bad input at the door: uploads sniffed before they are accepted (format, encoding, first
rows, archives that expand too much), an explicit selection to add items, the task kind of an
item, `-0`, `page_size`, error bodies as the schema says, user names that read alike."""

import io
import json
import zipfile
from decimal import Decimal

import pytest
from django.contrib.auth.models import User
from django.core.exceptions import ValidationError
from django.core.files.uploadedfile import SimpleUploadedFile

from annotation import services
from annotation.models import Grade, Item, MetaReview
from annotation.services.grade_checks import (
    GradeInput,
)
from annotation.services.review import MetaReviewInput, meta_review_submit
from problems.importers import MAX_ZIP_RATIO
from problems.models import ImportJob
from tests.annotation.factories import CampaignFactory, ItemFactory, expert_in
from tests.factories import UserFactory
from tests.metaverify.factories import review_campaign
from tests.problems.import_files import proofbench_row
from tests.problems.page_factories import VerifierAnalysisFactory

pytestmark = pytest.mark.django_db


def post_upload(client, name: str, content: bytes, fmt: str = ""):
    return client.post(
        "/api/v1/imports/",
        {"file": SimpleUploadedFile(name, content), "format": fmt},
        format="multipart",
    )


def test_an_obviously_wrong_upload_is_refused_at_once_naming_the_problem(
    api_client_for, settings, tmp_path
):
    settings.MEDIA_ROOT = tmp_path
    admin = api_client_for(UserFactory(roles=["admin"]))
    row = json.dumps(proofbench_row(1)).encode() + b"\n"
    refused = {
        "rows.jsonl": (b"problem_id,proof\nP1,x\n", "the first line is not a JSON object"),
        "rows.csv": ("problème;preuve\n".encode("latin-1"), "UTF-8"),
        "rows.parquet": (row, "Not a Parquet file"),
        "rows.json": (row.replace(b"{", b"<", 1), "Not JSON"),
        "rows.zip": (b"PK not really", "Not a readable .zip"),
        "other.csv": (b"name,age\nx,1\n", "Cannot tell the format"),
    }
    for name, (content, reason) in refused.items():
        answer = post_upload(admin, name, content)
        assert answer.status_code == 400, name
        assert reason in " ".join(answer.json()["file"]), (name, answer.json())
    # a format given is trusted for detection, and a good file goes through
    assert post_upload(admin, "other.csv", b"name,age\nx,1\n", "proofbench").status_code == 202
    assert post_upload(admin, "rows.jsonl", row).status_code == 202
    assert ImportJob.objects.count() == 2


def test_an_archive_that_expands_too_much_is_refused(api_client_for, settings, tmp_path):
    settings.MEDIA_ROOT = tmp_path
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("rows.jsonl", b" " * (4 * 1024 * 1024))  # 4 MB of blanks: a few kB
    bomb = buffer.getvalue()
    assert len(bomb) * MAX_ZIP_RATIO < 4 * 1024 * 1024
    answer = post_upload(api_client_for(UserFactory(roles=["admin"])), "corpus.zip", bomb)
    assert answer.status_code == 400
    assert f"more than {MAX_ZIP_RATIO} times its size" in answer.json()["file"][0]
    assert not ImportJob.objects.exists()


def test_adding_items_needs_an_explicit_selection(api_client_for):
    campaign = CampaignFactory(slug="explicit")
    ItemFactory(campaign=campaign)  # a proof in the corpus
    ItemFactory()  # and another, in no campaign of this one
    admin = api_client_for(UserFactory(roles=["admin"]))
    url = f"/api/v1/campaigns/{campaign.slug}/items/"
    nothing = admin.post(url, {}, format="json")
    assert nothing.status_code == 400 and "Nothing selected" in nothing.json()["all"][0]
    assert admin.post(url, {"proof_ids": []}, format="json").status_code == 400
    both = admin.post(url, {"all": True, "contest": "IMO"}, format="json")
    assert both.status_code == 400 and "contest" in both.json()["all"][0]
    everything = admin.post(url, {"all": True}, format="json")
    assert everything.status_code == 201 and len(everything.json()["created"]) == 1


def test_a_proof_grading_item_takes_no_meta_review(api_client_for):
    item = ItemFactory()
    expert = expert_in(item.campaign)
    services.assignment_create_manual(item=item, expert=expert, assigned_by=None)
    services.grade_submit(item=item, expert=expert, data=GradeInput(score=Decimal(5)))
    with pytest.raises(services.GradeError, match="not an analysis review"):
        meta_review_submit(item=item, expert=expert, data=MetaReviewInput.from_data({}))
    answer = api_client_for(expert).post(f"/api/v1/items/{item.pk}/review/", {}, format="json")
    assert answer.status_code == 400
    assert not MetaReview.objects.exists()


def test_an_analysis_review_campaign_gets_analysis_items_from_the_api(api_client_for):
    """The API adds the selected proofs' verifier analyses, as the page does; proofs themselves
    are refused by the service, whichever door asks."""
    campaign = review_campaign(slug="reviews")
    analysis = VerifierAnalysisFactory()
    admin = api_client_for(UserFactory(roles=["admin"]))
    added = admin.post(f"/api/v1/campaigns/{campaign.slug}/items/", {"all": True}, format="json")
    assert added.status_code == 201, added.json()
    (item,) = Item.objects.filter(campaign=campaign)
    assert item.analysis_id == analysis.pk and added.json()["created"] == [item.pk]
    with pytest.raises(services.GradeError, match="verifier analyses"):
        services.items_create_from_selection(campaign=campaign, proofs=[analysis.proof])


def test_minus_zero_is_zero(api_client_for):
    item = ItemFactory()
    expert = expert_in(item.campaign)
    services.assignment_create_manual(item=item, expert=expert, assigned_by=None)
    answer = api_client_for(expert).post(
        f"/api/v1/items/{item.pk}/submit/", {"score": "-0"}, format="json"
    )
    assert answer.status_code == 200, answer.json()
    assert answer.json()["score"] == "0.00"
    assert str(Grade.objects.get().score) == "0.00"


def test_page_size_is_honoured_within_its_bound(api_client_for):
    campaign = CampaignFactory()
    for _ in range(3):
        ItemFactory(campaign=campaign)
    researcher = api_client_for(UserFactory(roles=["admin"]))
    page = researcher.get("/api/v1/problems/?page_size=2").json()
    assert page["count"] == 3 and len(page["results"]) == 2 and "page_size=2" in page["next"]
    assert len(researcher.get("/api/v1/problems/?page_size=100000").json()["results"]) == 3


def test_error_bodies_are_as_the_schema_says(api_client_for):
    """`detail` is a string, never a list; a case's `assigned_to` may be null."""
    from core.api import ERROR_SCHEMA
    from core.errors import _detail_as_text

    assert ERROR_SCHEMA["properties"]["detail"]["type"] == "string"
    assert _detail_as_text(["a", "b"]) == {"detail": "a b"}
    assert _detail_as_text({"detail": ["no round"]}) == {"detail": "no round"}
    schema = api_client_for(UserFactory(roles=["admin"])).get("/api/schema/?format=json").json()
    case = schema["components"]["schemas"]["CaseSummaryOutput"]["properties"]["assigned_to"]
    assert case.get("nullable") is True


def test_user_names_that_read_alike_are_refused():
    from accounts.usernames import username_skeleton

    User.objects.create_user("admin", password="x" * 12)
    for lookalike in ("аdmin", "ΑDMIN", "Admin"):  # a Cyrillic а, a Greek Α
        user = User(username=lookalike)
        user.set_password("a-long-passphrase")
        with pytest.raises(ValidationError, match="reads like the existing 'admin'"):
            user.full_clean()
    fullwidth = User(username="ａｄｍｉｎ", password="x")  # NFKC: the same name
    with pytest.raises(ValidationError, match="already exists"):
        fullwidth.full_clean()
    assert fullwidth.username == "admin" and username_skeleton("ａｄｍｉｎ") == "admin"
    fresh = User(username="marie", password="x")
    fresh.full_clean()
    admin = User.objects.get(username="admin")
    admin.full_clean()  # a user keeps their own name
