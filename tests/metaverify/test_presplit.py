"""The LLM pre-split of analyses into suggested defects, run as a verifier-run job against the
fake server: excerpts placed in the analysis text, unplaced ones counted, bad replies recorded,
suggestions shown on the review page (marked as suggestions)."""

import json

import pytest
from django.urls import reverse

from adjudication.verification import verifier_runs
from annotation import services
from annotation.models import DefectSuggestion
from annotation.presplit import PresplitError, excerpts_from_reply
from tests.factories import UserFactory
from tests.llm.fake_openai import text
from tests.metaverify.factories import ANALYSIS_TEXT, analysis_item, expert_in
from tests.rubrics.generation_factories import LLMEndpointFactory

pytestmark = pytest.mark.django_db

GAP = "Step 2 divides by x without checking that x is nonzero."


def test_excerpts_are_read_leniently_and_bad_replies_named():
    fenced = '<think>hmm</think>\n```json\n["a", " b "]\n```'
    assert excerpts_from_reply(fenced) == ["a", "b"]
    with pytest.raises(PresplitError, match="no JSON list"):
        excerpts_from_reply("There are two defects.")
    with pytest.raises(PresplitError, match="list of strings"):
        excerpts_from_reply("[1, 2]")


def test_presplit_run_stores_suggestions_shown_on_the_review_page(fake_llm, client, settings):
    settings.LLM_BACKOFF_SECONDS = 0
    endpoint = LLMEndpointFactory(base_url=fake_llm.base_url, api_key_env="", name="splitter")
    item = analysis_item()
    broken = analysis_item(text="Here is my evaluation of the solution: nothing to say.")
    fake_llm.on(
        ("List every passage", "divides by x"),
        text(json.dumps([GAP, "a sentence the analysis never wrote"])),
    )
    fake_llm.on(("List every passage", "nothing to say"), text("No defects here."))
    cut = analysis_item(text="Here is my evaluation of the solution: step 4 is vague.")
    fake_llm.on(
        ("List every passage", "step 4 is vague"),
        text(json.dumps(["step 4 is vague"]), finish_reason="length"),
    )
    admin = UserFactory(roles=["admin"])
    run = verifier_runs.verifier_run_start(
        kind="defect_split",
        endpoint=endpoint,
        targets=[item.analysis, broken.analysis, cut.analysis],
        samples=5,
        user=admin,
    )
    assert run.total == 3
    run = verifier_runs.verifier_run_execute(run_id=run.pk)
    assert (run.done_count, run.failed_count, run.status) == (1, 2, "failed")
    assert any("1 excerpt(s) not found" in f for f in run.failures)
    assert any("no JSON list" in f for f in run.failures)
    assert any("cut off at the token limit" in f for f in run.failures)
    (suggestion,) = DefectSuggestion.objects.all()  # none from the cut-off reply
    assert ANALYSIS_TEXT[suggestion.start : suggestion.end] == GAP
    calls = len(fake_llm.log)
    verifier_runs.verifier_run_retry(run=run)
    verifier_runs.verifier_run_execute(run_id=run.pk)
    assert len(fake_llm.log) == calls + 2  # the split analysis is not asked for again

    expert = expert_in(item.campaign)
    services.assignment_create_manual(item=item, expert=expert, assigned_by=None)
    client.force_login(expert)
    page = client.get(reverse("annotation:item", args=[item.pk])).content.decode()
    assert '"source": "splitter (fake-model)"' in page and "Suggested by a language model" in page
