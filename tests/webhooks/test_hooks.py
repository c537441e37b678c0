"""Webhooks without the worker: hooks (pages and API, admins only, bad input named), the
deliveries each lower app's event records on commit, and one try sent to a real receiver on
127.0.0.1 as the worker's job runner would run it."""

import json
import time
from decimal import Decimal

import pytest

from adjudication.models import AdjudicationCase
from adjudication.services import case_resolve
from adjudication.services.labels import final_label_set
from annotation.models import Item
from exports.models import ExportJob
from exports.services import export_fail
from jobs.models import JobStatus
from jobs.services import jobs_sweep
from problems.services.corpus import corpus_import
from tests.adjudication.factories import CampaignFactory, ItemFactory, judge
from tests.conftest import as_job
from tests.factories import UserFactory
from tests.problems.import_files import proofbench_row, write_jsonl
from tests.webhooks.helpers import documented_verify
from tests.webhooks.receiver import Receiver, down_url
from webhooks.models import Delivery, Webhook
from webhooks.services import (
    delivery_attempt,
    delivery_replay,
    secret_new,
    signature,
    webhook_create,
)

pytestmark = pytest.mark.django_db


def hook(*events, url="http://127.0.0.1:9/hook", active=True, owner=None):
    return webhook_create(url=url, events=events, active=active, owner=owner)


def bodies(event):
    return [json.loads(d.body) for d in Delivery.objects.filter(event=event).order_by("pk")]


# --- Hooks: admins only, bad input named -------------------------------------------------------


def test_the_api_creates_a_hook_with_its_secret_and_names_the_bad_field(api_client_for, admin_user):
    api = api_client_for(admin_user)
    url = "/api/v1/webhooks/new/"
    for bad in ("ftp://example.org/hook", "javascript:alert(1)", "example.org/hook", "http://"):
        refused = api.post(url, {"url": bad, "events": ["case.opened"]}, format="json")
        assert refused.status_code == 400, bad
        assert list(refused.json()) == ["url"], refused.json()
    unknown = api.post(
        url,
        {"url": "https://example.org/h", "events": ["case.opened", "case.eaten"]},
        format="json",
    )
    assert unknown.status_code == 400 and list(unknown.json()) == ["events"]
    assert "case.eaten" in unknown.json()["events"][0]
    none = api.post(url, {"url": "https://example.org/h", "events": []}, format="json")
    assert none.status_code == 400 and "events" in none.json()
    assert not Webhook.objects.exists()

    made = api.post(
        url,
        {"url": "https://example.org/h", "events": ["job.failed", "item.labelled"]},
        format="json",
    )
    assert made.status_code == 201, made.json()
    body = made.json()
    assert body["secret"].startswith("whsec_") and len(body["secret"]) == 38
    assert body["events"] == ["item.labelled", "job.failed"] and body["active"] is True
    assert api.get(f"/api/v1/webhooks/{body['id']}/").json()["secret"] == body["secret"]
    listed = api.get("/api/v1/webhooks/").json()
    assert [row["id"] for row in listed["results"]] == [body["id"]]
    assert "secret" not in listed["results"][0]
    changed = api.post(f"/api/v1/webhooks/{body['id']}/update/", {"active": False}, format="json")
    assert changed.status_code == 200 and changed.json()["active"] is False
    bad = api.post(f"/api/v1/webhooks/{body['id']}/update/", {"url": "file:///etc"}, format="json")
    assert bad.status_code == 400 and list(bad.json()) == ["url"]
    assert api.post(f"/api/v1/webhooks/{body['id']}/delete/").status_code == 204
    assert not Webhook.objects.exists()


def test_the_pages_create_a_hook_and_refuse_a_bad_url_naming_it(client, admin_user):
    client.force_login(admin_user)
    refused = client.post(
        "/webhooks/", {"url": "gopher://example.org/", "events": ["case.opened"], "active": "on"}
    )
    assert refused.status_code == 400
    assert "is not an http:// or https:// URL" in refused.content.decode()
    unknown = client.post("/webhooks/", {"url": "https://example.org/", "events": ["nope"]})
    assert unknown.status_code == 400 and "nope" in unknown.content.decode()
    assert not Webhook.objects.exists()
    made = client.post(
        "/webhooks/",
        {
            "url": "https://example.org/in",
            "events": ["case.opened", "export.failed"],
            "active": "on",
        },
    )
    hook_ = Webhook.objects.get()
    assert made.status_code == 302 and made["Location"] == f"/webhooks/{hook_.pk}/"
    page = client.get(made["Location"]).content.decode()
    assert hook_.secret in page and "https://example.org/in" in page
    assert hook_.url in client.get("/webhooks/").content.decode()
    client.post(f"/webhooks/{hook_.pk}/active/", {"active": "0"})
    assert not Webhook.objects.get().active
    client.post(f"/webhooks/{hook_.pk}/delete/")
    assert not Webhook.objects.exists()
    again = client.post(f"/webhooks/{hook_.pk}/delete/", follow=True)  # a resend
    assert again.status_code == 200
    assert f"Webhook {hook_.pk} was already deleted." in again.content.decode()


@pytest.mark.parametrize("role", ["expert", "researcher", "adjudicator"])
def test_only_admins_see_hooks_and_secrets(client, api_client_for, role):
    made = hook("case.opened")
    delivery = Delivery.objects.create(webhook=made, event="case.opened", message_id="m", body="{}")
    user = UserFactory(roles=[role])
    client.force_login(user)
    pages = [
        client.get("/webhooks/"),
        client.get(f"/webhooks/{made.pk}/"),
        client.post("/webhooks/", {"url": "https://x.org/", "events": ["case.opened"]}),
        client.post(f"/webhooks/{made.pk}/active/", {"active": "0"}),
        client.post(f"/webhooks/{made.pk}/delete/"),
        client.post(f"/webhooks/deliveries/{delivery.pk}/replay/"),
    ]
    assert [page.status_code for page in pages] == [403] * len(pages)
    api = api_client_for(user)
    answers = [
        api.get("/api/v1/webhooks/"),
        api.get(f"/api/v1/webhooks/{made.pk}/"),
        api.post("/api/v1/webhooks/new/", {"url": "https://x.org/", "events": ["case.opened"]}),
        api.post(f"/api/v1/webhooks/{made.pk}/update/", {"active": False}, format="json"),
        api.post(f"/api/v1/webhooks/{made.pk}/delete/"),
        api.get(f"/api/v1/webhooks/{made.pk}/deliveries/"),
        api.get(f"/api/v1/webhooks/deliveries/{delivery.pk}/"),
        api.post(f"/api/v1/webhooks/deliveries/{delivery.pk}/replay/"),
    ]
    assert [answer.status_code for answer in answers] == [403] * len(answers)
    assert all(made.secret not in answer.content.decode() for answer in [*pages, *answers])
    assert Webhook.objects.get().active and Delivery.objects.count() == 1
    assert "Webhooks" not in client.get("/").content.decode()


def test_the_schema_documents_every_operation(client, admin_user):
    client.force_login(admin_user)
    paths = client.get("/api/schema/", HTTP_ACCEPT="application/json").json()["paths"]
    assert {
        "/api/v1/webhooks/",
        "/api/v1/webhooks/new/",
        "/api/v1/webhooks/{webhook_id}/",
        "/api/v1/webhooks/{webhook_id}/update/",
        "/api/v1/webhooks/{webhook_id}/delete/",
        "/api/v1/webhooks/{webhook_id}/deliveries/",
        "/api/v1/webhooks/deliveries/{delivery_id}/",
        "/api/v1/webhooks/deliveries/{delivery_id}/replay/",
    } <= set(paths)


# --- Events: one delivery per matching active hook, on commit ---------------------------------


def test_a_label_change_records_one_delivery_per_matching_active_hook(
    django_capture_on_commit_callbacks,
):
    told, other = hook("item.labelled"), hook("case.opened")
    hook("item.labelled", active=False)
    item = ItemFactory(campaign=CampaignFactory(slug="hooked"))
    with django_capture_on_commit_callbacks(execute=True):
        final_label_set(
            item=item, value=Decimal(4), source="imported", policy="imported", grade_ids=[]
        )
        assert not Delivery.objects.exists()  # nothing before the commit
    (delivery,) = Delivery.objects.all()
    assert (delivery.webhook, delivery.event, delivery.status) == (told, "item.labelled", "pending")
    (body,) = bodies("item.labelled")
    assert body["type"] == "item.labelled"
    assert body["data"]["item"] == item.pk and body["data"]["campaign"] == "hooked"
    assert body["data"]["label"]["value"] == "4" and body["data"]["label"]["source"] == "imported"
    assert not other.deliveries.exists()


def test_a_case_opened_and_settled_each_tell_their_hooks(django_capture_on_commit_callbacks):
    hook("case.opened", "case.settled")
    item = ItemFactory()
    with django_capture_on_commit_callbacks(execute=True):
        judge(item, 1, 7)
    case = AdjudicationCase.objects.get(item=item)
    (opened,) = bodies("case.opened")
    assert opened["data"]["case"] == case.pk and opened["data"]["status"] == "open"
    assert opened["data"]["disagreement"] == "6"
    adjudicator = UserFactory(roles=["adjudicator"])
    item.campaign.members.create(user=adjudicator, role="adjudicator")
    with django_capture_on_commit_callbacks(execute=True):
        case_resolve(case=case, user=adjudicator, action="new_score", score="4", rationale="gap")
    (settled,) = bodies("case.settled")
    assert settled["data"]["resolution"] == "new_score" and settled["data"]["score"] == "4"
    assert settled["data"]["resolved_by"] == adjudicator.username
    assert Item.objects.get(pk=item.pk).is_final


def test_an_export_that_fails_tells_its_hooks_once(django_capture_on_commit_callbacks):
    hook("export.failed", "export.succeeded")
    job = ExportJob.objects.create(
        campaign=CampaignFactory(slug="exp"), format="dv", file_type="csv", status="running"
    )
    with django_capture_on_commit_callbacks(execute=True):
        export_fail(job_id=job.pk, reason="the disk is full")
        export_fail(job_id=job.pk, reason="the disk is still full")
    (body,) = bodies("export.failed")
    assert body["data"]["export"] == job.pk and body["data"]["error"] == "the disk is still full"
    assert not bodies("export.succeeded")


def test_an_import_tells_its_hooks_when_it_is_over(tmp_path, django_capture_on_commit_callbacks):
    hook("import.finished")
    path = write_jsonl(tmp_path / "two.jsonl", [proofbench_row(1), {"problem": "no id"}])
    with django_capture_on_commit_callbacks(execute=True):
        corpus_import(path=path, dry_run=True)
    assert not bodies("import.finished")  # a dry run writes nothing and tells nobody
    with django_capture_on_commit_callbacks(execute=True):
        corpus_import(path=path)
    (body,) = bodies("import.finished")
    data = body["data"]
    assert (data["name"], data["committed"], data["records"], data["errors"]) == (
        "two.jsonl",
        True,
        3,
        1,
    )
    assert data["counts"]["problems"]["created"] == 1 and "not imported" in data["outcome"]


def test_a_failed_job_of_any_kind_tells_its_hooks_but_a_delivery_never_tells_of_itself(
    settings, django_capture_on_commit_callbacks
):
    made = hook("job.failed")
    stale = time.time() - 3600
    from datetime import UTC, datetime

    beat = datetime.fromtimestamp(stale, tz=UTC)
    job = ExportJob.objects.create(
        campaign=CampaignFactory(), format="dv", file_type="csv", status="running",
        attempts=settings.JOB_MAX_ATTEMPTS, heartbeat_at=beat,
    )  # fmt: skip
    own = Delivery.objects.create(
        webhook=made, event="case.opened", message_id="m", body="{}", status="running",
        attempts=settings.JOB_MAX_ATTEMPTS, heartbeat_at=beat,
    )  # fmt: skip
    with django_capture_on_commit_callbacks(execute=True):
        sweep = jobs_sweep(queued=0)
    assert ("export", job.pk) in sweep.failed and ("webhook_delivery", own.pk) in sweep.failed
    (body,) = bodies("job.failed")
    assert body["data"]["kind"] == "export" and body["data"]["job"] == job.pk
    assert "its worker stopped" in body["data"]["reason"]
    assert Delivery.objects.get(pk=own.pk).status == JobStatus.FAILED


def test_a_job_its_own_service_fails_tells_its_hooks(django_capture_on_commit_callbacks):
    """The job runner reads the row after the run: a failure the service recorded is told."""
    hook("job.failed")
    job = ExportJob.objects.create(campaign=CampaignFactory(), format="dv", file_type="csv")
    with django_capture_on_commit_callbacks(execute=True):
        as_job("export", job.pk, lambda: export_fail(job_id=job.pk, reason="bad filter"))
    (body,) = bodies("job.failed")
    assert body["data"] == {"kind": "export", "job": job.pk, "reason": "bad filter"}


# --- One try, as the job runner runs it --------------------------------------------------------


def test_a_try_is_signed_as_the_manual_says_and_recorded():
    verify = documented_verify()
    with Receiver() as receiver:
        made = hook("case.opened", url=receiver.url)
        delivery = Delivery.objects.create(
            webhook=made, event="case.opened", message_id="msg_1", body='{"type":"case.opened"}'
        )
        outcome = as_job("webhook_delivery", delivery.pk, lambda: delivery_attempt(
            delivery_id=delivery.pk))  # fmt: skip
    assert outcome.state == "delivered"
    (taken,) = receiver.taken
    assert taken.body == b'{"type":"case.opened"}' and taken.headers["webhook-id"] == "msg_1"
    assert taken.headers["content-type"] == "application/json"
    assert verify(made.secret, taken.headers, taken.body)
    assert not verify(made.secret, taken.headers, taken.body + b" ")
    assert not verify(secret_new(), taken.headers, taken.body)
    old = {**taken.headers, "webhook-timestamp": str(int(time.time()) - 3600)}
    assert not verify(made.secret, old, taken.body)
    delivery.refresh_from_db()
    assert (delivery.status, delivery.attempts, delivery.error) == ("succeeded", 1, "")
    (attempt,) = delivery.tries.all()
    assert (attempt.number, attempt.status_code, attempt.response_excerpt) == (
        1,
        200,
        "answered 200",
    )


def test_a_4xx_fails_at_once_and_no_answer_asks_for_a_retry(settings):
    settings.WEBHOOK_MAX_ATTEMPTS = 2
    with Receiver() as receiver:
        receiver.replies(410)
        gone = hook("case.opened", url=receiver.url)
        first = Delivery.objects.create(
            webhook=gone, event="case.opened", message_id="a", body="{}"
        )
        outcome = as_job("webhook_delivery", first.pk, lambda: delivery_attempt(
            delivery_id=first.pk))  # fmt: skip
    first.refresh_from_db()
    assert outcome.state == "failed" and first.status == "failed"
    assert first.error == "try 1: the receiver answered 410"

    down = hook("case.opened", url=down_url())
    second = Delivery.objects.create(webhook=down, event="case.opened", message_id="b", body="{}")
    run = lambda: delivery_attempt(delivery_id=second.pk)  # noqa: E731
    assert as_job("webhook_delivery", second.pk, run).state == "retry"
    Delivery.objects.filter(pk=second.pk).update(status="retrying")  # as the job runner leaves it
    assert as_job("webhook_delivery", second.pk, run).state == "failed"
    second.refresh_from_db()
    assert second.status == "failed" and "given up after 2 tries" in second.error
    assert [t.status_code for t in second.tries.all()] == [None, None]
    assert all("could not connect" in t.error for t in second.tries.all())


def test_a_replay_is_a_new_delivery_of_the_same_message_and_refused_for_an_inactive_hook(
    api_client_for, admin_user
):
    made = hook("case.opened")
    done = Delivery.objects.create(
        webhook=made, event="case.opened", message_id="msg_9", body='{"a":1}', status="failed"
    )
    api = api_client_for(admin_user)
    answer = api.post(f"/api/v1/webhooks/deliveries/{done.pk}/replay/")
    assert answer.status_code == 202, answer.json()
    replay = Delivery.objects.get(pk=answer.json()["id"])
    assert (replay.message_id, replay.body, replay.replay_of, replay.status) == (
        "msg_9",
        '{"a":1}',
        done,
        "pending",
    )
    assert delivery_replay(delivery=replay).replay_of == done  # a replay of a replay: the first
    Webhook.objects.filter(pk=made.pk).update(active=False)
    refused = api.post(f"/api/v1/webhooks/deliveries/{done.pk}/replay/")
    assert refused.status_code == 400 and "inactive" in refused.json()["webhook"][0]


def test_the_replay_button_answers_htmx_with_the_deliveries_and_a_plain_post_with_the_page(
    client, admin_user
):
    made = hook("case.opened")
    done = Delivery.objects.create(
        webhook=made, event="case.opened", message_id="msg_p", body="{}", status="succeeded"
    )
    client.force_login(admin_user)
    page = client.get(f"/webhooks/{made.pk}/").content.decode()
    url = f"/webhooks/deliveries/{done.pk}/replay/"
    assert f'action="{url}" hx-post="{url}"' in page  # the form posts without htmx too
    fragment = client.post(url, HTTP_HX_REQUEST="true")
    assert fragment.status_code == 200 and "HX-Request" in fragment["Vary"]
    body = fragment.content.decode()
    assert body.startswith('<div id="deliveries"') and f"(replay of {done.pk})" in body
    assert 'hx-trigger="every 2s"' in body  # polled while the replay waits
    plain = client.post(url)
    assert plain.status_code == 302 and plain["Location"] == f"/webhooks/{made.pk}/"
    assert Delivery.objects.filter(replay_of=done).count() == 2
    Webhook.objects.filter(pk=made.pk).update(active=False)
    refused = client.post(url, HTTP_HX_REQUEST="true").content.decode()
    assert 'id="replay-refused"' in refused and "the webhook is inactive" in refused
    assert Delivery.objects.filter(replay_of=done).count() == 2


# --- What a hook tells of a proof: what its owner may see ------------------------------------


def attempt(delivery):
    return as_job("webhook_delivery", delivery.pk, lambda: delivery_attempt(
        delivery_id=delivery.pk))  # fmt: skip


def test_an_admin_who_grades_a_proof_blind_is_sent_no_label_of_it_until_they_submit(
    django_capture_on_commit_callbacks,
):
    from annotation.services import assignment_next, grade_submit
    from annotation.services.grade_checks import GradeInput
    from tests.annotation.factories import CampaignFactory as OpenCampaign
    from tests.annotation.factories import ItemFactory as OpenItem
    from tests.annotation.factories import expert_in

    campaign = OpenCampaign()
    lead = expert_in(campaign)  # an admin who grades in an open campaign
    lead.groups.add(*UserFactory(roles=["admin"]).groups.all())
    held = OpenItem(campaign=campaign)
    assignment_next(campaign=campaign, expert=lead)  # held, not graded
    item = ItemFactory(proof=held.proof)  # the same proof, labelled in another campaign
    with Receiver() as receiver:
        theirs = hook("item.labelled", url=receiver.url, owner=lead)
        with django_capture_on_commit_callbacks(execute=True):
            final_label_set(item=item, value=Decimal(2), source="adjudication", policy="by hand",
                            grade_ids=[])  # fmt: skip
        (delivery,) = Delivery.objects.filter(webhook=theirs)
        assert delivery.proof_id == item.proof_id
        assert attempt(delivery).state == "failed"
        delivery.refresh_from_db()
        assert delivery.status == "failed" and delivery.error.startswith(
            f"withheld: the webhook's owner {lead.username} grades this proof blind"
        )
        assert receiver.taken == [] and not delivery.tries.exists()  # nothing was sent
        grade_submit(item=held, expert=lead, data=GradeInput(score=Decimal("3")))
        replay = delivery_replay(delivery=delivery)
        assert replay.proof_id == item.proof_id
        assert attempt(replay).state == "delivered"  # the replay asks again, and it is theirs now
    (taken,) = receiver.taken
    assert json.loads(taken.body)["data"]["label"]["value"] == "2"


def test_who_changes_where_a_hook_goes_owns_it_and_a_hook_without_an_admin_owner_tells_no_proof(
    api_client_for, admin_user
):
    other = UserFactory(roles=["admin"])
    made = hook("case.opened", owner=admin_user)
    api = api_client_for(other)
    assert api.get(f"/api/v1/webhooks/{made.pk}/").json()["owner"] == admin_user.username
    moved = api.post(f"/api/v1/webhooks/{made.pk}/update/", {"active": False}, format="json")
    assert moved.json()["owner"] == admin_user.username  # switching it off is not choosing a URL
    moved = api.post(
        f"/api/v1/webhooks/{made.pk}/update/", {"url": "https://other.example/h", "active": True},
        format="json",
    )  # fmt: skip
    assert moved.status_code == 200 and moved.json()["owner"] == other.username
    other.groups.clear()  # no longer an admin
    item = ItemFactory()
    case = Delivery.objects.create(
        webhook=made, event="case.opened", proof=item.proof, message_id="m", body="{}"
    )
    assert attempt(case).state == "failed"
    case.refresh_from_db()
    assert "is no longer an admin" in case.error and not case.tries.exists()
    orphan = Delivery.objects.create(
        webhook=hook("case.opened"), event="case.opened", proof=item.proof, message_id="o",
        body="{}",
    )  # fmt: skip
    assert attempt(orphan).state == "failed"
    orphan.refresh_from_db()
    assert "has no owner" in orphan.error


def test_the_signature_is_standard_webhooks():
    # the example of the Standard Webhooks specification (its secret, id, timestamp and body)
    secret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
    body = '{"test": 2432232314}'
    assert signature(secret, "msg_p5jXN8AQM9LWM0D4loKWxJek", 1614265330, body) == (
        "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE="
    )
    assert secret_new().startswith("whsec_") and len(secret_new()) == len("whsec_") + 32
