"""Browser flow: an admin adds a webhook pointing at a real receiver on 127.0.0.1, reads its
secret, watches a delivery the receiver refused fail (the real Celery worker sends it), replays it
with the Replay button (htmx) and sees the replay delivered."""

from decimal import Decimal

import pytest
from playwright.sync_api import expect

from adjudication.services.labels import final_label_set
from tests.adjudication.factories import ItemFactory
from tests.factories import UserFactory
from tests.webhooks.helpers import documented_verify
from tests.webhooks.receiver import Receiver
from webhooks.models import Webhook
from webhooks.services import webhook_create

pytestmark = [pytest.mark.e2e, pytest.mark.worker, pytest.mark.django_db(transaction=True)]


def test_admin_adds_a_hook_and_replays_a_delivery(
    page, live_server, login, screenshot_dir, celery_worker_process, assert_accessible
):
    item = ItemFactory()
    login(page, UserFactory(username="admin-hooks", roles=["admin"]))
    with Receiver() as receiver:
        receiver.replies(400)  # the first message is refused, the replay taken
        with page.expect_navigation():
            page.click("nav.mainnav >> text=Webhooks")
        page.wait_for_selector("h1:has-text('Webhooks')")
        page.fill("#id_url", "ftp://127.0.0.1/hook")
        page.check("input[name=events][value='item.labelled']")
        page.click("button:has-text('Add webhook')")
        expect(page.locator("#webhook-form")).to_contain_text("is not an http:// or https:// URL")
        assert not Webhook.objects.exists()
        assert_accessible(page)  # the form with its refusal
        page.fill("#id_url", receiver.url)
        page.check("input[name=events][value='item.labelled']")
        with page.expect_navigation():
            page.click("button:has-text('Add webhook')")
        hook = Webhook.objects.get()
        expect(page.locator("#webhook-url")).to_have_text(receiver.url)
        page.click("#webhook-secret summary")
        expect(page.locator("#webhook-secret code")).to_have_text(hook.secret)
        assert_accessible(page)

        final_label_set(item=item, value=Decimal(5), source="imported", policy="import",
                        grade_ids=[])  # fmt: skip
        page.reload()
        first = page.locator("tr.delivery").first
        expect(first).to_contain_text("Failed", timeout=30_000)  # polled while it was under way
        expect(first).to_contain_text("HTTP 400")
        page.screenshot(path=str(screenshot_dir / "webhooks-delivery-failed.png"), full_page=True)
        first.locator("button.replay").click()  # htmx: the deliveries swapped in place
        expect(page.locator("tr.delivery")).to_have_count(2)
        replay = page.locator("tr.delivery").first
        expect(replay).to_contain_text("replay of")
        expect(replay).to_contain_text("Done", timeout=30_000)
        expect(replay).to_contain_text("HTTP 200")
        page.screenshot(path=str(screenshot_dir / "webhooks-replayed.png"), full_page=True)
        assert_accessible(page)
    verify = documented_verify()
    assert len(receiver.taken) == 2
    assert all(verify(hook.secret, t.headers, t.body) for t in receiver.taken)
    assert receiver.taken[0].headers["webhook-id"] == receiver.taken[1].headers["webhook-id"]


def test_delete_asks_first_and_a_dismissal_keeps_the_hook(
    strict_page, live_server, login, screenshot_dir
):
    """Under the site's CSP, which runs no inline handler: the question comes from
    static/js/confirm.js."""
    page = strict_page
    admin = UserFactory(username="admin-delete", roles=["admin"])
    hook = webhook_create(url="http://127.0.0.1:9/hook", events=["item.labelled"], owner=admin)
    login(page, admin)
    page.goto(f"{live_server.url}/webhooks/{hook.pk}/")
    for name, width, height in (("tablet", 820, 1180), ("phone", 390, 844)):
        page.set_viewport_size({"width": width, "height": height})
        page.screenshot(path=str(screenshot_dir / f"webhook-detail-{name}.png"), full_page=True)
    asked = []
    page.once("dialog", lambda dialog: (asked.append(dialog.message), dialog.dismiss()))
    page.click("#webhook-delete")
    expect(page.locator("#webhook-url")).to_be_visible()
    assert asked == ["Delete this webhook and its deliveries?"]
    assert Webhook.objects.filter(pk=hook.pk).exists()
    page.once("dialog", lambda dialog: dialog.accept())
    with page.expect_navigation():
        page.click("#webhook-delete")
    assert not Webhook.objects.filter(pk=hook.pk).exists()
    assert page.csp_errors == []
