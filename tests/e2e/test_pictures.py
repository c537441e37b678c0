"""Pictures in the browser (issue 36): a problem imported with its figure beside it in a .zip
shows the figure inline on the problem page and on the grading page, loaded from this site."""

import zipfile

import pytest

from annotation import services
from problems.models import Proof
from problems.services import corpus_import
from tests.annotation.factories import CampaignFactory, expert_in
from tests.factories import UserFactory
from tests.problems.import_files import generic_problem, generic_proof, write_jsonl
from tests.problems.test_import_pictures import png

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]


def loaded(page, selector: str) -> int:
    """The natural width of the first image matching `selector` once it has loaded."""
    page.wait_for_selector(selector)
    return page.eval_on_selector(
        selector, "img => img.decode().then(() => img.naturalWidth, () => 0)"
    )


def test_a_problem_and_its_proof_show_their_pictures_inline(
    page, live_server, login, tmp_path, screenshot_dir
):
    lines = [
        generic_problem("FIG-1", statement="In the figure ![the triangle](fig.png), $AB = AC$."),
        generic_proof("FIG-1", text="Fold along the axis ![the fold](fold.png); done."),
    ]
    archive = tmp_path / "geometry.zip"
    with zipfile.ZipFile(archive, "w") as bundle:
        bundle.write(write_jsonl(tmp_path / "corpus.jsonl", lines), "corpus.jsonl")
        bundle.writestr("fig.png", png(12, 8, shade=40))
        bundle.writestr("fold.png", png(6, 4, shade=220))
    assert corpus_import(path=archive).ok
    campaign = CampaignFactory(name="Pictures round")
    services.items_create_from_selection(campaign=campaign, proofs=Proof.objects.all())
    expert = expert_in(campaign, "picture-e2e")

    login(page, UserFactory(username="picture-admin", roles=["admin"]))
    page.goto(f"{live_server.url}/problems/FIG-1/")
    assert loaded(page, "img.picture[alt='the triangle']") == 12
    page.screenshot(path=str(screenshot_dir / "problem-picture.png"), full_page=True)

    page.context.clear_cookies()
    login(page, expert)
    page.goto(f"{live_server.url}/annotation/{campaign.slug}/")
    page.click("button:has-text('Grade next')")
    assert loaded(page, "#proof-text img.picture[alt='the fold']") == 6
    assert loaded(page, "img.picture[alt='the triangle']") == 12
    page.screenshot(path=str(screenshot_dir / "grading-picture.png"), full_page=True)
