"""Browser flow of the admin's campaign pages: create a campaign, add an expert, add items from
a selection of proofs; the expert then finds the work under Grading."""

import pytest

from annotation.models import Campaign, Item
from tests.factories import UserFactory
from tests.problems.page_factories import ProblemFactory, ProofFactory

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]


def test_admin_sets_up_a_campaign_and_the_expert_finds_it(
    page, live_server, login, admin_user, screenshot_dir, context, assert_accessible
):
    problem = ProblemFactory(contest="Pages Cup", external_id="PC-2024-1")
    ProofFactory.create_batch(3, problem=problem, generator="gen-pages")
    ProofFactory(generator="other-gen")
    expert = UserFactory(username="ivy", roles=["expert"])

    login(page, admin_user)
    with page.expect_navigation():  # until load: htmx is listening
        page.click("nav.mainnav >> text=Campaigns")
    with page.expect_navigation():  # until load: htmx is listening
        page.click("text=New campaign")
    page.fill("#id_name", "Pages pilot")
    page.select_option("#id_scale", "1-4")
    page.fill("#id_double_share", "1")
    page.fill("#id_error_taxonomy", "gap: Gap in the argument\nother: Other")
    page.fill("#id_guidelines", "Read the *whole* proof first.")
    page.screenshot(path=str(screenshot_dir / "campaign-form.png"), full_page=True)
    assert_accessible(page)
    page.click("form.campaign-form button[type=submit]")
    page.wait_for_selector("text=Campaign Pages pilot created.")
    campaign = Campaign.objects.get(slug="pages-pilot")
    assert campaign.scale == "1-4" and [t["key"] for t in campaign.error_taxonomy] == [
        "gap",
        "other",
    ]

    page.fill("#id_username", "ivy")
    page.click("text=Add member")
    page.wait_for_selector("text=ivy added.")

    page.click("text=Add items")
    page.select_option("#id_contest", "Pages Cup")
    page.click("text=Preview")
    page.wait_for_selector("text=3 proofs match")
    page.click("text=Create 3 items")
    page.wait_for_selector("text=3 item(s) created")
    assert page.locator("#items-waiting").inner_text() == "3"
    assert "PC-2024-1" in page.content()  # named: no approved marking scheme
    page.screenshot(path=str(screenshot_dir / "campaign-after-items.png"), full_page=True)
    assert_accessible(page)
    assert Item.objects.filter(campaign=campaign, required_judgements=2).count() == 3
    assert "100% double-scored" in page.inner_text("main")
    # assign by hand: the items by problem and proof; the whole page in an 800 px window
    page.select_option(
        "#assign-item", label=page.locator("#assign-item option").nth(1).inner_text()
    )
    page.locator("#assign-item").locator("xpath=ancestor::form").locator("button").click()
    page.wait_for_selector("text=assigned to ivy")
    page.set_viewport_size({"width": 800, "height": 900})
    page.screenshot(path=str(screenshot_dir / "campaign-dashboard-800.png"), full_page=True)
    assert page.evaluate("document.documentElement.scrollWidth") <= 800
    assert page.locator(".topbar").bounding_box()["height"] < 120  # two lines at most
    page.set_viewport_size({"width": 1366, "height": 900})

    context.clear_cookies()
    login(page, expert)
    page.click("nav.mainnav >> text=Grading")
    page.click("text=Grade next")
    page.wait_for_selector("#proof-text")
    assert "Correct: proves every required fact" in page.content()
    page.screenshot(path=str(screenshot_dir / "grading-1-4-scale.png"), full_page=True)
    assert_accessible(page)


def test_a_refused_page_is_in_the_layout_with_a_way_back(
    page, live_server, login, screenshot_dir, assert_accessible
):
    login(page, UserFactory(username="expert-403", roles=["expert"]))
    page.goto(f"{live_server.url}/problems/")
    page.goto(f"{live_server.url}/problems/import/", referer=f"{live_server.url}/problems/")
    assert page.inner_text("#error-page h1") == "You cannot open this page"
    assert "Your role does not allow this page." in page.inner_text("#error-page")
    page.screenshot(path=str(screenshot_dir / "error-403.png"), full_page=True)
    assert_accessible(page)
    page.click("text=Back to the page you came from")
    page.wait_for_url(f"{live_server.url}/problems/")


def test_scores_per_generator_table_beside_their_plot(
    page, live_server, login, screenshot_dir, assert_accessible
):
    from tests.adjudication.factories import CampaignFactory, ItemFactory, judge

    campaign = CampaignFactory(name="Generators compared")
    for generator, scores in [("model-a", (7, 6)), ("model-a", (5, 5)), ("model-b", (1, 2))]:
        judge(ItemFactory(campaign=campaign, proof=ProofFactory(generator=generator)), *scores)
    login(page, UserFactory(username="gen-admin", roles=["admin"]))
    page.goto(f"{live_server.url}/annotation/{campaign.slug}/")
    rows = page.locator("#generator-scores tbody tr")
    assert rows.count() == 2
    assert rows.first.locator("td").nth(1).inner_text() == "4"  # model-a: 7, 6, 5, 5
    assert rows.first.locator("td").nth(2).inner_text() == "5.75"
    assert page.locator(".plot-beside svg").count() == 1
    page.locator("#generator-scores").scroll_into_view_if_needed()
    page.screenshot(path=str(screenshot_dir / "campaign-scores-per-generator.png"))
    assert_accessible(page)
