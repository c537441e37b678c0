"""Rendering ahead: a campaign's new items queue their texts for the worker, on their own queue
(never counted as jobs waiting); the page then reads them rendered, and renders and stores a
text it does not find."""

import pytest
from django.conf import settings
from django.urls import reverse

from annotation import services
from problems.models import RenderedText
from problems.rendering import RENDERER_VERSION, render_markdown_uncached
from problems.services import texts_prerender
from problems.tasks import texts_prerender_run
from tests.annotation.factories import CampaignFactory, expert_in
from tests.problems.page_factories import ProofFactory, ReferenceSolutionFactory

pytestmark = pytest.mark.django_db


def test_rendering_ahead_has_a_queue_of_its_own():
    from config.celery import app  # the queues as the worker consumes them

    route = settings.CELERY_TASK_ROUTES[texts_prerender_run.name]["queue"]
    assert route != settings.CELERY_TASK_DEFAULT_QUEUE
    assert route in app.amqp.queues


def test_texts_rendered_ahead_are_what_the_page_shows(client):
    proof = ProofFactory(text="By induction on $n$: **done**.")
    ReferenceSolutionFactory(problem=proof.problem, text="Take $n = 1$.")
    texts_prerender(proof_ids=[proof.pk])
    stored = dict(RenderedText.objects.values_list("key", "html"))
    assert len(stored) == 3  # the proof, the statement, the solution
    assert render_markdown_uncached(proof.text) in stored.values()
    assert all(key.startswith(f"{RENDERER_VERSION}:") for key in stored)
    texts_prerender(proof_ids=[proof.pk])  # again: nothing new
    assert RenderedText.objects.count() == 3

    campaign = CampaignFactory()
    made = services.items_create_from_selection(campaign=campaign, proofs=[proof])
    expert = expert_in(campaign)
    services.assignment_next(campaign=campaign, expert=expert)
    client.force_login(expert)
    html = client.get(reverse("annotation:item", args=[made.created_ids[0]])).content.decode()
    assert render_markdown_uncached(proof.text) in html
    assert RenderedText.objects.count() == 3  # read, not rendered again


def test_the_page_stores_a_text_it_does_not_find(client):
    campaign = CampaignFactory()
    proof = ProofFactory(text="A proof nobody rendered ahead, with $x^2$.")
    made = services.items_create_from_selection(campaign=campaign, proofs=[proof])
    expert = expert_in(campaign)
    services.assignment_next(campaign=campaign, expert=expert)
    client.force_login(expert)
    assert client.get(reverse("annotation:item", args=[made.created_ids[0]])).status_code == 200
    assert RenderedText.objects.filter(html=render_markdown_uncached(proof.text)).exists()


def test_a_text_read_once_is_kept_by_the_process(monkeypatch):
    """What texts_rendered read (from the shared cache or the database) the template's filter
    finds in the process's own cache: the shared one is not asked again."""
    from django.core.cache import cache, caches

    from problems import rendering

    rendering.texts_rendered(["Kept $x$."])
    html = render_markdown_uncached("Kept $x$.")
    cache.clear()  # the shared cache forgets it; the stored row would be read, not rendered
    RenderedText.objects.all().delete()
    monkeypatch.setattr(rendering, "render_markdown_uncached", lambda text: "rendered again")
    assert rendering.render_markdown("Kept $x$.") == html
    rendering.texts_rendered(["Kept $x$."])  # found in the process: nothing read or stored
    assert not RenderedText.objects.exists()
    caches["rendered"].clear()
    assert rendering.render_markdown("Kept $x$.") == "rendered again"
