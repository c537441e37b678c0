"""Two devices on one analysis review draft: the laptop marks two defects, the phone (loaded
before) marks a third; the phone's draft is refused, nothing is overwritten, and the phone offers
to merge (keep both devices' defects) or to keep one; the laptop, behind in turn, is told and may
keep the other's (merged) review."""

import re

import pytest
from playwright.sync_api import expect

from annotation import services
from annotation.models import MetaReview
from tests.e2e.test_analysis_review import SELECT
from tests.e2e.test_lost_answers import shots
from tests.metaverify.factories import analysis_item, expert_in, review_campaign

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]

GAP = "Step 2 divides by x without checking that x is nonzero."
BOUND = "Step 3 claims the bound for every n but only proves it for even n."
STEP1 = "Step 1 is correct."


def mark(page, quote, *keys):
    assert page.evaluate(SELECT, ["#analysis-text", quote])
    page.keyboard.press("d")
    for key in keys:
        page.keyboard.press(key)


def stored_quotes(item):
    review = MetaReview.objects.filter(grade__item=item).first()
    return sorted(d.quote for d in review.defects.all()) if review else []


def test_two_devices_on_one_review_draft_merge(
    browser, live_server, login, screenshot_dir, assert_accessible
):
    campaign = review_campaign(name="Two devices")
    item = analysis_item(campaign)
    expert = expert_in(campaign, "two-devices")
    services.assignment_create_manual(item=item, expert=expert, assigned_by=None)
    url = f"{live_server.url}/annotation/items/{item.pk}/"
    devices = []
    for _ in range(2):  # two browsers: their own cookies and storage
        context = browser.new_context(viewport={"width": 1366, "height": 900}, bypass_csp=True)
        page = context.new_page()
        login(page, expert)
        page.goto(url)
        page.wait_for_selector("#analysis-text")
        devices.append(page)
    laptop, phone = devices
    try:
        mark(laptop, GAP, "1", "3")
        mark(laptop, BOUND, "2")
        expect(laptop.locator("#save-status")).to_have_text(re.compile("^Saved"))
        assert stored_quotes(item) == sorted([GAP, BOUND])

        phone.bring_to_front()
        mark(phone, STEP1, "2")
        notice = phone.locator("#item-notice")
        expect(notice).to_contain_text(
            "This review was saved on another device since this page loaded it: 2 defects "
            "marked there, 1 defect here. Merge them (keep the defects of both), keep yours, "
            "or keep the other?"
        )
        assert stored_quotes(item) == sorted([GAP, BOUND])  # nothing overwritten
        shots(phone, screenshot_dir, "review-two-devices")
        assert_accessible(phone)
        phone.click("#merge-reviews")
        expect(phone.locator("#defect-list .defect")).to_have_count(3)
        expect(phone.locator("#save-status")).to_have_text(re.compile("^Saved"))
        assert stored_quotes(item) == sorted([GAP, BOUND, STEP1])
        review = MetaReview.objects.get(grade__item=item)
        judged = {d.quote: (d.exists, d.accurate) for d in review.defects.all()}
        assert judged == {GAP: (True, True), BOUND: (False, None), STEP1: (False, None)}

        # the laptop is behind now: its next change is refused in turn, and it keeps the other
        laptop.bring_to_front()
        laptop.fill("#comment", "laptop note")
        expect(laptop.locator("#item-notice")).to_contain_text(
            "This review was saved on another device since this page loaded it: 3 defects "
            "marked there, 2 defects here."
        )
        laptop.click("#keep-other")
        expect(laptop.locator("#defect-list .defect")).to_have_count(3)
        assert stored_quotes(item) == sorted([GAP, BOUND, STEP1])
        assert MetaReview.objects.get(grade__item=item).grade.comment == ""
    finally:
        for page in devices:
            page.context.close()
