"""Browser flows of calibration: an expert grades a round and sees the gold answer after each
submission, then the next item; the report; an expert blocked until they pass; the admin's
round form and requirement page. Slips: Enter again, double click, back."""

from decimal import Decimal

import pytest
from playwright.sync_api import expect

from annotation.models import Campaign, Grade
from calibration.models import CalibrationItem, CalibrationPass, CalibrationRequirement
from calibration.services import calibration_requirement_set
from tests.annotation.factories import CampaignFactory, ItemFactory, expert_in
from tests.calibration.factories import expert_user, gold_item, gold_round, grade_next
from tests.factories import UserFactory

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]

RATIONALE = "The main bound is proved; the **equality case** is only asserted, so no credit for it."


def gold_pair():
    source = CampaignFactory(name="Source campaign")
    first = gold_item(source, 5, rationale=RATIONALE, awards={"c1": "2", "c2": "3"}, topic="A")
    second = gold_item(source, 2, rationale="Only the set-up.", awards={"c1": "2"}, topic="G")
    return source, [first, second]


def start_round(page, live_server, round):
    page.goto(f"{live_server.url}/annotation/{round.slug}/")
    page.click("button:has-text('Grade next')")
    page.wait_for_selector("#calibration-notice")
    expect(page.locator("#computed-score")).not_to_have_text("\u2013")


def test_round_submit_see_gold_then_next(
    page, live_server, login, screenshot_dir, assert_accessible
):
    from calibration.services import calibration_round_create

    source, items = gold_pair()
    expert = expert_user("calib-e2e")
    round = calibration_round_create(
        name="Warm-up round", gold_items=items, created_by=source.created_by, experts=[expert]
    )
    login(page, expert)
    start_round(page, live_server, round)
    assert page.locator("#calibration-feedback").count() == 0  # nothing shown before
    assert "item 1 of 2 for you, 1 remaining" in page.inner_text("#position")
    page.screenshot(path=str(screenshot_dir / "calibration-item.png"), full_page=True)
    assert_accessible(page)
    for key in ["j", "2", "j", "2"]:  # c1 = 2, c2 = 2: computed 4
        page.keyboard.press(key)
    expect(page.locator("#computed-score")).to_have_text("4")
    page.keyboard.press("Escape")
    page.keyboard.press("Enter")
    page.wait_for_selector("#calibration-feedback #feedback-gold")
    first_url = page.url
    assert page.locator("#feedback-gold").inner_text() == "5"
    assert page.locator("#feedback-error").inner_text() == "-1"
    assert "equality case" in page.locator("#feedback-rationale").inner_text()
    assert page.locator("#feedback-lines tr.differs").count() == 1  # c2: 3 gold, 2 yours
    page.screenshot(path=str(screenshot_dir / "calibration-feedback.png"), full_page=True)
    assert_accessible(page)
    # slip: Enter again submits nothing more and revises nothing
    page.keyboard.press("Enter")
    page.wait_for_timeout(300)
    assert Grade.objects.filter(expert=expert).count() == 1
    assert page.locator("#revise-link").count() == 0
    # next gold item
    page.keyboard.press("n")
    page.wait_for_url(lambda url: url != first_url)
    page.wait_for_selector("#calibration-notice")
    # slip: double click on Submit makes one grade
    page.check("input[name=score][value='2']", force=True)
    page.dblclick("#submit-button")
    page.wait_for_selector("#calibration-feedback #feedback-gold")
    assert page.locator("#feedback-error").inner_text() == "0"
    assert Grade.objects.filter(expert=expert, status="submitted").count() == 2
    # slip: back shows the first item as submitted, with its gold answer, not a fresh form
    page.go_back()
    page.wait_for_url(first_url)
    page.wait_for_selector("#calibration-feedback #feedback-gold")
    assert page.locator("#feedback-gold").inner_text() == "5"
    assert page.locator("#submitted-notice").is_visible()


def test_report_pages(page, live_server, login, screenshot_dir, assert_accessible):
    expert = expert_user("reported")
    round, _ = gold_round(
        [5, 2, 4, 3, 6, 1, 0, 7, 5, 2, 4, 3],
        experts=[expert],
        topics=["A", "C", "G", "N"] * 3,
    )
    for score in [7, 3, 4, 1, 6, 2, 0, 6, 5, 2, 5, 3]:
        grade_next(round, expert, score)
    login(page, expert)
    page.goto(f"{live_server.url}/calibration/")
    page.wait_for_selector("h1:has-text('Calibration report: reported')")
    assert page.locator("svg.chart.errors").count() >= 1
    assert page.locator("#by-topic tbody tr").count() == 4
    page.screenshot(path=str(screenshot_dir / "calibration-report.png"), full_page=True)
    assert_accessible(page)
    with page.expect_download() as download:
        page.click("#download-csv")
    assert download.value.suggested_filename == "calibration-reported.csv"
    # the admin sees every expert
    admin = UserFactory(roles=["admin"])
    page.context.clear_cookies()
    login(page, admin)
    page.goto(f"{live_server.url}/calibration/")
    page.wait_for_selector("#experts td:has-text('reported')")
    page.screenshot(path=str(screenshot_dir / "calibration-home.png"), full_page=True)
    assert_accessible(page)
    page.click("#experts a:has-text('Report')")
    page.wait_for_selector("h1:has-text('Calibration report: reported')")


def test_expert_blocked_until_they_pass(
    page, live_server, login, screenshot_dir, assert_accessible
):
    campaign = CampaignFactory(name="Real campaign")
    ItemFactory(campaign=campaign)
    expert = expert_in(campaign, "blocked-e2e")
    round, _ = gold_round([3], name="Gate round")
    calibration_requirement_set(
        campaign=campaign, round=round, max_mae=Decimal("1"), min_items=1, set_by=None
    )
    login(page, expert)
    page.goto(f"{live_server.url}/annotation/{campaign.slug}/")
    page.click("button:has-text('Grade next')")
    page.wait_for_selector("#calibration-required")
    assert "at most 1 on at least 1 gold item" in page.inner_text("#calibration-required")
    page.screenshot(path=str(screenshot_dir / "calibration-required.png"), full_page=True)
    assert_accessible(page)
    page.click("#calibration-round-link")
    page.click("button:has-text('Grade next')")
    page.wait_for_selector("#calibration-notice")
    expect(page.locator("#computed-score")).not_to_have_text("\u2013")
    page.check("input[name=score][value='4']", force=True)
    page.click("#submit-button")
    page.wait_for_selector("#calibration-feedback #feedback-gold")
    page.goto(f"{live_server.url}/annotation/{campaign.slug}/")
    page.click("button:has-text('Grade next')")
    page.wait_for_selector("#grading")
    assert CalibrationPass.objects.filter(expert=expert).exists()
    assert page.locator("#calibration-notice").count() == 0


def test_admin_makes_a_round_and_requires_it(
    page, live_server, login, screenshot_dir, assert_accessible
):
    source, items = gold_pair()
    campaign = CampaignFactory(name="Needs calibration")
    expert_in(campaign, "joining")
    admin = UserFactory(roles=["admin"])
    login(page, admin)
    page.goto(f"{live_server.url}/calibration/")
    page.click("#new-round")
    page.wait_for_selector("#candidates")
    for item in items:
        page.check(f"#gold-{item.pk}")
    page.screenshot(path=str(screenshot_dir / "calibration-round-form.png"), full_page=True)
    assert_accessible(page)
    page.fill("#id_name", "Admin round")
    page.press("#id_name", "Enter")  # Enter in a field submits the form once
    page.wait_for_url(f"{live_server.url}/annotation/admin-round/")
    assert "2 gold items" in page.inner_text("#calibration-round-notice")
    page.screenshot(path=str(screenshot_dir / "calibration-round-dashboard.png"), full_page=True)
    assert CalibrationItem.objects.filter(item__campaign__slug="admin-round").count() == 2
    page.go_back()  # back to the form: posting again names the taken slug
    page.wait_for_selector("#round-form")
    page.goto(f"{live_server.url}/annotation/{campaign.slug}/")
    page.click("#calibration-requirement-link")
    page.select_option("#id_round", "admin-round")
    page.fill("#id_max_mae", "0.5")
    page.fill("#id_min_items", "2")
    page.dblclick("#requirement-save")
    page.wait_for_selector("#passes td:has-text('joining')")
    assert CalibrationRequirement.objects.filter(campaign=campaign).count() == 1
    assert "at most 0.5 on at least 2" in page.inner_text("#current-requirement")
    page.screenshot(path=str(screenshot_dir / "calibration-requirement.png"), full_page=True)
    assert_accessible(page)
    assert (
        Campaign.objects.get(slug="admin-round").members.filter(user__username="joining").exists()
    )


def test_gold_feedback_loads_under_the_policy(strict_page, live_server, login):
    expert = expert_user("calib-csp")
    round, _ = gold_round([3], experts=[expert])
    page = strict_page
    login(page, expert)
    start_round(page, live_server, round)
    page.check("input[name=score][value='3']", force=True)
    page.click("#submit-button")
    page.wait_for_selector("#calibration-feedback #feedback-gold")
    page.goto(f"{live_server.url}/calibration/report/calib-csp/")
    page.wait_for_selector("svg.chart.errors")
    assert page.csp_errors == []


def test_a_failed_expert_is_told_and_the_admin_gives_a_new_round(
    page, live_server, login, screenshot_dir, assert_accessible
):
    from calibration.services import calibration_round_create

    source, first = gold_pair()
    spare = [gold_item(source, 4, topic="N"), gold_item(source, 3, topic="C")]
    campaign = CampaignFactory(name="Real campaign")
    ItemFactory(campaign=campaign)
    expert = expert_in(campaign, "failed-e2e")
    round = calibration_round_create(name="Gate round", gold_items=first, created_by=None)
    calibration_requirement_set(
        campaign=campaign, round=round, max_mae=Decimal("1"), min_items=2, set_by=None
    )
    grade_next(round, expert, 0)
    grade_next(round, expert, 6)  # errors -5 and +4: MAE 4.5, and no gold item left
    login(page, expert)
    page.goto(f"{live_server.url}/annotation/{campaign.slug}/")
    page.click("button:has-text('Grade next')")
    page.wait_for_selector("#standing-stuck")
    assert "No work left" not in page.content()
    assert page.inner_text("#standing-mae") == "4.50" and page.inner_text("#standing-left") == "0"
    assert "no gold item of Gate round is left to grade" in page.inner_text("#standing-why")
    page.screenshot(path=str(screenshot_dir / "calibration-standing-stuck.png"), full_page=True)
    assert_accessible(page)
    page.click("#standing-report")
    page.wait_for_selector("h1:has-text('Calibration report: failed-e2e')")

    admin = UserFactory(roles=["admin"])
    page.context.clear_cookies()
    login(page, admin)
    page.goto(f"{live_server.url}/calibration/campaigns/{campaign.slug}/requirement/")
    row = page.locator("#passes tr.blocked", has_text="failed-e2e")
    assert "MAE 4.50 on 2 gold items, over the 1 allowed" in row.inner_text()
    page.screenshot(
        path=str(screenshot_dir / "calibration-requirement-blocked.png"), full_page=True
    )
    assert_accessible(page)
    row.locator("button.retake").dblclick()  # slip: a double click gives one round
    page.wait_for_selector(".messages >> text=given to failed-e2e")
    assert CalibrationItem.objects.filter(source__in=spare).count() == 2
    assert page.locator("#passes tr.blocked").count() == 0
    assert "new round for failed-e2e" in page.inner_text("#passes")
    page.screenshot(path=str(screenshot_dir / "calibration-requirement-retake.png"), full_page=True)

    page.context.clear_cookies()
    login(page, expert)
    page.goto(f"{live_server.url}/annotation/{campaign.slug}/")
    page.click("button:has-text('Grade next')")
    page.wait_for_selector("#calibration-round-link")
    assert page.inner_text("#standing-left") == "2"
    assert "the new round an admin gave you" in page.inner_text("#calibration-required")
    page.screenshot(path=str(screenshot_dir / "calibration-standing-retake.png"), full_page=True)
    assert_accessible(page)
    page.click("#calibration-round-link")
    page.click("button:has-text('Grade next')")
    page.wait_for_selector("#calibration-notice")
