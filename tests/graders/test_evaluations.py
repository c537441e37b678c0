"""Grader predictions imported and reported against the final labels: metrics, charts, JSON."""

import json
from decimal import Decimal

import orjson
import pytest
from django.urls import reverse

from adjudication.models import FinalLabel
from annotation.models import Campaign, Item
from estimation.models import RaterModelFit, RaterModelRefit
from estimation.services.refit import rater_model_refit_run
from graders import metrics
from graders.models import GraderEvaluation
from graders.services.evaluation_import import PredictionError, evaluation_import
from problems.models import Proof
from problems.services import corpus_import
from tests.exports.factories import labelled_campaign
from tests.factories import UserFactory

pytestmark = pytest.mark.django_db


def jsonl(*records) -> bytes:
    return b"".join(orjson.dumps(r) + b"\n" for r in records)


@pytest.fixture
def researcher():
    return UserFactory(username="res-eval", roles=["researcher"])


def test_proofgrader_predictions_with_k_runs_give_the_report(researcher):
    corpus = labelled_campaign()  # labels: PILOT-1 model-a 5, PILOT-1 model-b 2, PILOT-2 model-a 7
    data = jsonl(
        {"problem_id": "GOLDEN-PILOT-1", "generator": "model-a", "score": 6, "assessment": "ok"},
        {"problem_id": "GOLDEN-PILOT-1", "generator": "model-a", "score": 4},
        {"problem_id": "GOLDEN-PILOT-1", "generator": "model-b", "score": 3, "errors": ["gap"]},
        {"problem_id": "GOLDEN-PILOT-1", "generator": "model-b", "score": 3},
        {"problem_id": "GOLDEN-PILOT-2", "generator": "model-a", "score": 7},
        {"problem_id": "ELSEWHERE-9", "generator": "model-a", "score": 1},
    )
    evaluation = evaluation_import(
        user=researcher,
        campaign=corpus.campaign,
        name="o3 x2",
        source="proofgrader_jsonl",
        data=data,
        aggregation="mean",
    )
    assert evaluation.runs == 2
    assert evaluation.counts == {"predictions": 5, "proofs": 3, "skipped": 1}
    report = evaluation.report
    # Aggregated predictions: 5, 3, 7 against 5, 2, 7.
    pairs = [
        metrics.Pair("GOLDEN-PILOT-1", 5, 5, 0),
        metrics.Pair("GOLDEN-PILOT-1", 2, 3, 0),
        metrics.Pair("GOLDEN-PILOT-2", 7, 7, 0),
    ]
    expected = metrics.macro_metrics(pairs)
    assert report["proofbench"]["mae"] == pytest.approx(expected.mae) == pytest.approx(0.25)
    assert report["proofbench"]["bias"] == pytest.approx(0.25)
    assert report["proofbench"]["tau_b_a3"] == pytest.approx(1.0)
    assert report["proofbench"]["tau_b_a3_problems"] == 1  # one proof of PILOT-2: undefined
    assert report["refgrader"]["mae"] == pytest.approx(1 / 3)
    assert report["confusion_matrix"][2][3] == 1 and report["confusion_matrix"][7][7] == 1
    # Score reward on 0/0.5/1 by cuts 5, 7: experts 0.5, 0, 1; grader 0.5, 0, 1.
    assert report["score_reward"]["mean"] == pytest.approx(1.0)
    # intervals resample problems: PILOT-1 alone (MAE 0.5), PILOT-2 alone (0), or both (0.25)
    assert report["intervals"]["proofbench_mae"] == [0.0, 0.5]
    assert report["intervals"]["score_reward"] == [1.0, 1.0]
    # a new grader: the campaign's rater model is refitted in the background, with it among the
    # raters (the import may be a page's request: it only queues the refit)
    refit = RaterModelRefit.objects.get(campaign=corpus.campaign, reason="grader evaluation")
    rater_model_refit_run(refit_id=refit.pk)
    fit = RaterModelFit.objects.get(campaign=corpus.campaign)
    assert f"grader:{evaluation.pk}" in {rater["key"] for rater in fit.raters}
    assert [p["n"] for p in report["best_of_n"]] == [1, 2]
    # the trust evidence: one double-scored item is too few for the alternative annotator test
    assert report["alt_test"]["campaign"]["tested"] == 0 and not report["verdict"]["passes"]
    assert "needs items scored by two experts or more" in report["verdict"]["text"]
    assert report["probes"]["incomplete"]["n"] == 1  # bob's "skipped steps" span
    assert report["probes"]["incomplete"]["effect"] == 0  # predicted 5 against 5
    assert report["probes"]["self_preference"]["none"] == "no proof by the grader's family (openai)"
    assert report["position"]["none"].startswith("No pairwise grader runs")
    # A.4: PILOT-1's first proof (model-a, 5) and PILOT-2's (7) at n = 1
    assert report["best_of_n"][0]["oracle"] == report["best_of_n"][0]["mean"] == 6
    assert report["best_of_n_subsets"][0]["oracle"] == pytest.approx((3.5 + 7) / 2)


def test_ambiguous_and_malformed_lines_are_named_and_nothing_is_kept(researcher):
    corpus = labelled_campaign()
    bad = (
        jsonl(
            {"problem_id": "GOLDEN-PILOT-1", "generator": "model-a", "score": 9},
            {"problem_id": "GOLDEN-PILOT-1", "generator": "model-a"},
        )
        + b"{not json\n"
    )
    with pytest.raises(PredictionError) as info:
        evaluation_import(
            user=researcher,
            campaign=corpus.campaign,
            name="x",
            source="proofgrader_jsonl",
            data=bad,
        )
    assert "line 3: not JSON" in str(info.value)
    with pytest.raises(PredictionError) as info:
        evaluation_import(
            user=researcher,
            campaign=corpus.campaign,
            name="x",
            source="proofgrader_jsonl",
            data=bad.rsplit(b"\n", 2)[0] + b"\n",
        )
    assert "line 1: field score = 9 is outside 0-7" in str(info.value)
    assert "line 2: field score must be a number" in str(info.value)
    nul = {"problem_id": "GOLDEN-PILOT-1", "generator": "model-a", "score": 5}
    with pytest.raises(PredictionError, match="line 1: field 'assessment' holds a NUL"):
        evaluation_import(
            user=researcher,
            campaign=corpus.campaign,
            name="x",
            source="proofgrader_jsonl",
            data=jsonl({**nul, "assessment": "cut \x00 here"}),
        )
    assert not GraderEvaluation.objects.exists()


def test_deepseek_outputs_score_a_campaign_of_imported_proofs(researcher, real_fixtures, tmp_path):
    """The real DeepSeekMath-V2 sample: its proofs imported, a 0-7 campaign labelled with the
    human ratings, then its automatic ratings (0..1) reported against them on 0/0.5/1."""
    source = real_fixtures / "deepseek_math_v2" / "imo_proofbench_outputs_sample.jsonl"
    report = corpus_import(path=source)
    assert report.ok, report
    owner = UserFactory(username="ds-owner", roles=["admin"])
    campaign = Campaign.objects.create(slug="ds", name="DeepSeek sample", created_by=owner)
    records = [json.loads(line) for line in source.read_text().splitlines()]
    human = {r["problem_idx"]: r["model_prediction"]["human_rating"] for r in records}
    for proof in Proof.objects.select_related("problem"):
        item = Item.objects.create(campaign=campaign, proof=proof)
        FinalLabel.objects.create(
            item=item,
            value=Decimal(human[proof.problem.external_id]),
            scale="0-7",
            source="imported",
        )
    evaluation = evaluation_import(
        user=researcher,
        campaign=campaign,
        name="DeepSeekMath-V2 verifier",
        source="deepseek_outputs",
        data=source.read_bytes(),
    )
    assert evaluation.counts["proofs"] == 3
    result = evaluation.report
    assert result["comparison_scale"] == "0-1"
    assert "expert labels from 0-7 onto 0 / 0.5 / 1" in result["conversions"][0]
    # Human 7, 1, 0 -> 1, 0, 0; automatic 1.0, 0.578125, 0.5.
    assert result["refgrader"]["mae"] == pytest.approx((0 + 0.578125 + 0.5) / 3)
    # Snapped to 0/0.5/1: 1, 0.5, 0.5 -> rewards 1, 0.5, 0.5.
    assert result["score_reward"]["mean"] == pytest.approx(2 / 3)


def test_report_page_draws_the_charts_and_downloads_json(client, researcher):
    corpus = labelled_campaign()
    data = jsonl(
        {"problem_id": "GOLDEN-PILOT-1", "generator": "model-a", "score": 4},
        {"problem_id": "GOLDEN-PILOT-1", "generator": "model-b", "score": 3},
        {"problem_id": "GOLDEN-PILOT-2", "generator": "model-a", "score": 6},
    )
    client.force_login(researcher)
    response = client.post(
        reverse("exports:evaluations"),
        {
            "campaign": corpus.campaign.slug,
            "name": "judge <b>",
            "source": "proofgrader_jsonl",
            "aggregation": "median",
            "file": _upload(data),
        },
    )
    evaluation = GraderEvaluation.objects.get()
    assert response.status_code == 302
    page = client.get(reverse("exports:evaluation", args=[evaluation.pk])).content.decode()
    assert page.count("<svg") == 2 and "<script" not in page.split("<main")[1]
    assert "judge &lt;b&gt;" in page
    assert "Kendall τ<sub>b</sub> as ProofBench A.3" in page
    assert page.count('data-count="') == 64  # 8 x 8 cells
    assert "95% bootstrap intervals, resampling problems" in page and 'class="figure-ci"' in page
    assert "Can this grader be trusted?" in page and 'id="alt-test"' in page
    download = client.get(reverse("exports:evaluation_json", args=[evaluation.pk]))
    assert download["Content-Disposition"].startswith("attachment")
    assert json.loads(download.content)["aggregation"] == "median"


def test_page_shows_import_errors(client, researcher):
    corpus = labelled_campaign()
    client.force_login(researcher)
    response = client.post(
        reverse("exports:evaluations"),
        {
            "campaign": corpus.campaign.slug,
            "name": "j",
            "source": "proofgrader_jsonl",
            "aggregation": "mean",
            "file": _upload(b'{"problem_id": "X", "generator": "g"}\n'),
        },
    )
    assert response.status_code == 400
    assert "line 1: field score must be a number" in response.content.decode()


def _upload(data: bytes):
    from django.core.files.uploadedfile import SimpleUploadedFile

    return SimpleUploadedFile("predictions.jsonl", data, content_type="application/jsonl")


# --- Running a grader endpoint (the fake OpenAI-compatible server) ---------------------------


def reply(score, errors="none"):
    from tests.llm.fake_openai import text

    return text(
        f"<assessment>Checked each checkpoint.</assessment>\n<errors>{errors}</errors>\n"
        f"<score>{score}</score>",
        think="Let me look at the proof first.",
    )


@pytest.fixture
def endpoint(fake_llm):
    from rubrics.models import LLMEndpoint

    return LLMEndpoint.objects.create(
        name="fake-grader", base_url=fake_llm.base_url, model="fake-o3", max_attempts=2
    )


def test_endpoint_run_grades_every_labelled_proof_k_times(researcher, fake_llm, endpoint):
    from graders.services.evaluations import evaluation_run, evaluation_run_create
    from tests.llm.fake_openai import text

    corpus = labelled_campaign()  # labels 5, 2, 7
    # the second run answers in IMO-Bench's ProofAutoGrader contract
    points = text("A gap in the last step.\n<points>4 out of 7</points>", think="Hmm.")
    fake_llm.on("Expand $(a-b)^2$.", reply(6), points)
    fake_llm.on("By AM-GM", reply(2, "- the AM-GM step needs a, b >= 0"))
    fake_llm.on("so 2 and 3 divide it", reply(7), text("I think it is fine."))
    evaluation = evaluation_run_create(
        user=researcher,
        campaign=corpus.campaign,
        endpoint=endpoint,
        name="fake o3 x2",
        runs=2,
        aggregation="mean",
    )
    assert evaluation.total == 6 and evaluation.parameters["prompt"] == "grade_proof@v2"
    evaluation = evaluation_run(evaluation_id=evaluation.pk)
    assert evaluation.status == "succeeded"
    assert evaluation.counts["predictions"] == 5 and evaluation.counts["failed"] == 1
    assert "no <score>" in evaluation.counts["failures"][0]
    assert evaluation.failures.get().raw_reply == "I think it is fine."
    assert evaluation.prompt_tokens > 0 and evaluation.completion_tokens > 0
    prompt = fake_llm.prompts()[0]
    assert "## Marking scheme\n## Checkpoints (7 pts total)" in prompt
    assert "The mathematics decides the score" in fake_llm.log[0]["content"]
    assert "## Reference solution" in prompt
    by_proof = {
        (p.item.proof.generator, p.item.proof.problem.external_id, p.run_index): p
        for p in evaluation.predictions.select_related("item__proof__problem")
    }
    assert by_proof[("model-b", "GOLDEN-PILOT-1", 0)].errors == ["the AM-GM step needs a, b >= 0"]
    imo_style = next(p for p in by_proof.values() if p.score == 4.0)
    assert imo_style.assessment == "A gap in the last step." and imo_style.errors == []
    assert sorted(
        p.score for k, p in by_proof.items() if k[0] == "model-a" and k[1].endswith("1")
    ) == [
        4.0,
        6.0,
    ]
    # Aggregated by mean: 5, 2, 7 against labels 5, 2, 7.
    assert evaluation.report["refgrader"]["mae"] == 0
    # A rerun asks only for what is missing (the broken reply), and stays idempotent.
    evaluation.status = "running"
    evaluation.save()
    calls = len(fake_llm.log)
    evaluation_run(evaluation_id=evaluation.pk)
    assert len(fake_llm.log) == calls + 1


def test_endpoint_failing_everywhere_fails_the_evaluation(researcher, fake_llm, endpoint):
    from graders.services.evaluations import evaluation_run, evaluation_run_create
    from tests.llm.fake_openai import status

    corpus = labelled_campaign()
    fake_llm.on("Grade the proof below", status(400, message="model not found"))
    evaluation = evaluation_run_create(
        user=researcher, campaign=corpus.campaign, endpoint=endpoint, name="broken"
    )
    evaluation = evaluation_run(evaluation_id=evaluation.pk)
    assert evaluation.status == "failed"
    assert "No prediction could be made" in evaluation.error
    assert "HTTP 400" in evaluation.error


def test_run_form_queues_the_run(client, researcher, endpoint, django_capture_on_commit_callbacks):
    corpus = labelled_campaign()
    client.force_login(researcher)
    page = client.get(reverse("exports:evaluations")).content.decode()
    assert "Run a grader endpoint" in page and "fake-grader" in page
    with django_capture_on_commit_callbacks(execute=False) as callbacks:
        response = client.post(
            reverse("exports:evaluation_run"),
            {
                "campaign": corpus.campaign.slug,
                "name": "g",
                "endpoint": endpoint.pk,
                "runs": 3,
                "aggregation": "median",
            },
        )
    evaluation = GraderEvaluation.objects.get()
    assert response.status_code == 302 and len(callbacks) == 1
    assert (evaluation.runs, evaluation.total, evaluation.aggregation) == (3, 9, "median")
    pending = client.get(
        reverse("exports:evaluation", args=[evaluation.pk]), headers={"HX-Request": "true"}
    ).content.decode()
    assert 'hx-trigger="every 1s"' in pending and "0 of 9 predictions" in pending


@pytest.mark.parametrize(
    ("bad", "reason"),
    [
        ("unclosed think", "never closed"),
        ("length stop", "token limit"),
        ("missing contract phrase", "no <score>"),
        ("out-of-range score", "'8' is not an integer from 0 to 7"),
        ("fractional score", "'3.5' is not an integer from 0 to 7"),
        ("cut assessment", "<assessment> is never closed"),
        ("over the size limit", "over the limit of 200,000"),
        ("two scores", "2 <score> tags"),
        ("two points blocks", "2 <points> tags"),
    ],
)
def test_an_incomplete_or_malformed_grade_is_a_failed_prediction_to_retry(
    client,
    researcher,
    fake_llm,
    endpoint,
    django_capture_on_commit_callbacks,
    django_assert_max_num_queries,
    bad,
    reason,
):
    from graders.services.evaluations import evaluation_run, evaluation_run_create
    from tests.llm.fake_openai import text, unclosed_think

    endpoint.input_price_per_million, endpoint.output_price_per_million = 2, 8
    endpoint.save()
    corpus = labelled_campaign()  # labels 5, 2, 7
    good = "<assessment>Fine.</assessment><errors>none</errors><score>5</score>"
    fake_llm.on(
        "Expand $(a-b)^2$.",
        {
            "unclosed think": unclosed_think("The score is <score>5</score>, maybe"),
            "length stop": text(good, finish_reason="length"),
            "missing contract phrase": text("<assessment>Fine.</assessment> Score: 5"),
            "out-of-range score": text(good.replace(">5<", ">8<")),
            "fractional score": text(good.replace(">5<", ">3.5<")),
            "cut assessment": text("<assessment>Step 2 holds, and step 3 <score>5</score>"),
            "over the size limit": text(good.replace("Fine.", "Fine. " * 40_000)),
            "two scores": text(good + " or perhaps <score>6</score>"),
            "two points blocks": text("<points>5 out of 7</points> or <points>6 out of 7</points>"),
        }[bad],
        reply(5),
    )
    fake_llm.on("By AM-GM", reply(2))
    fake_llm.on("so 2 and 3 divide it", reply(7))
    evaluation = evaluation_run_create(
        user=researcher, campaign=corpus.campaign, endpoint=endpoint, name="strict"
    )
    evaluation = evaluation_run(evaluation_id=evaluation.pk)
    assert evaluation.status == "succeeded" and evaluation.counts["predictions"] == 2
    failure = evaluation.failures.get()
    assert reason in failure.reason and "<" in failure.raw_reply  # the raw reply is kept
    assert evaluation.report["labelled_proofs"] == 2  # the failed proof is in no metric
    client.force_login(researcher)
    with django_assert_max_num_queries(6):
        page = client.get(reverse("exports:evaluation", args=[evaluation.pk])).content.decode()
    assert reason.replace("'", "&#x27;").replace("<", "&lt;").replace(">", "&gt;") in page
    assert "Retry the failed predictions" in page and 'id="run-cost"' in page
    with django_capture_on_commit_callbacks(execute=False) as callbacks:
        response = client.post(reverse("exports:evaluation_retry", args=[evaluation.pk]))
    assert response.status_code == 302 and len(callbacks) == 1
    calls = len(fake_llm.log)
    evaluation = evaluation_run(evaluation_id=evaluation.pk)
    assert len(fake_llm.log) == calls + 1  # only the failed prediction is asked again
    assert evaluation.counts["predictions"] == 3 and not evaluation.failures.exists()
    assert evaluation.report["labelled_proofs"] == 3


def test_an_unexpected_error_is_recorded_on_the_evaluation(researcher, fake_llm, endpoint):
    from graders.services.evaluations import evaluation_run_create
    from graders.tasks import evaluation_run_task
    from llm.prompts import PromptError

    corpus = labelled_campaign()
    evaluation = evaluation_run_create(
        user=researcher, campaign=corpus.campaign, endpoint=endpoint, name="no template"
    )
    GraderEvaluation.objects.filter(pk=evaluation.pk).update(
        parameters={**evaluation.parameters, "prompt": "grade_proof@v99"}
    )
    with pytest.raises(PromptError):
        evaluation_run_task(evaluation.pk)
    evaluation.refresh_from_db()
    assert (
        evaluation.status == "failed" and "No prompt template grade_proof@v99" in evaluation.error
    )
    assert fake_llm.log == []


def test_a_failed_endpoint_run_offers_its_retry(client, researcher, fake_llm, endpoint):
    from graders.services.evaluations import evaluation_run, evaluation_run_create
    from tests.llm.fake_openai import status

    corpus = labelled_campaign()
    fake_llm.on("Grade the proof below", status(400, message="model not found"))
    evaluation = evaluation_run_create(
        user=researcher, campaign=corpus.campaign, endpoint=endpoint, name="refused"
    )
    evaluation_run(evaluation_id=evaluation.pk)
    client.force_login(researcher)
    page = client.get(reverse("exports:evaluation", args=[evaluation.pk])).content.decode()
    assert page.count("Retry the failed predictions") == 1 and "model not found" in page
    assert "3 predictions without a usable reply" in page


def refgrader_scheme_for_first_problem(corpus):
    """PILOT-1 gets a RefGrader scheme of two clusters: squares (C1) and AM-GM (C2)."""
    from rubrics.services import scheme_version_create
    from rubrics.structure import parse_refgrader_clusters, scheme_to_markdown
    from tests.llm.replies import rubric
    from tests.problems.page_factories import ReferenceSolutionFactory, sha256

    problem = corpus.campaign.items.order_by("id").first().proof.problem
    first = problem.reference_solutions.get()
    second = ReferenceSolutionFactory(
        problem=problem, text="AM-GM on $a^2$ and $b^2$.", text_hash=sha256("amgm")
    )
    joined, _ = parse_refgrader_clusters(
        [
            rubric("plain", "squares", ((3, "Square"), (4, "Expand"))),
            rubric("plain", "AM-GM", ((3, "Means"), (4, "Equality"))),
        ]
    )
    clusters = [
        {"label": "C1", "main_steps": ["square"], "representative_id": first.pk, "chains": [0]},
        {"label": "C2", "main_steps": ["AM-GM"], "representative_id": second.pk, "chains": [1]},
    ]
    scheme = scheme_version_create(
        problem=problem,
        text=scheme_to_markdown(joined),
        method="refgrader_plain",
        provenance={"clusters": clusters},
    )
    corpus.campaign.items.filter(proof__problem=problem).update(scheme=scheme)
    return first, second


def test_refgrader_scheme_grades_each_proof_with_its_matched_cluster(
    researcher, fake_llm, endpoint
):
    """Seed 004's match step: one match per proof (not per run), cached; the grader then sees
    the matched cluster's rubric and representative only. A reply naming no known cluster is a
    failure with its text, asked again by a rerun."""
    from graders.services.evaluations import evaluation_run, evaluation_run_create
    from tests.llm.fake_openai import text

    corpus = labelled_campaign()
    first, second = refgrader_scheme_for_first_problem(corpus)
    match = "Expert solution groups"
    fake_llm.on((match, "Expand $(a-b)^2$."), text('{"closest_rep_id": "C1"}'))
    fake_llm.on(
        (match, "By AM-GM"),
        text('{"closest_rep_id": "C9", "justification": "?"}'),
        text('```json\n{"closest_rep_id": "C2", "justification": "same first step"}\n```'),
    )
    fake_llm.on("Grade the proof below", reply(5))
    evaluation = evaluation_run_create(
        user=researcher, campaign=corpus.campaign, endpoint=endpoint, name="refgrader", runs=2
    )
    evaluation = evaluation_run(evaluation_id=evaluation.pk)
    assert evaluation.status == "succeeded"
    assert evaluation.counts["predictions"] == 4  # model-b of PILOT-1 could not be matched
    failures = evaluation.counts["failures"]  # both runs of the unmatched proof
    assert len(failures) == 2 and all("by model-b, run" in f for f in failures)
    failure = failures[0]
    assert "matching step" in failure and "'C9', which is not one of C1, C2" in failure
    assert '"closest_rep_id": "C9"' in failure  # the raw reply is kept
    assert evaluation.counts["clusters"] == {"C1": 1}
    # every answered call counts, the match calls with the grading ones (the failed match too)
    answered = [e["content"] for e in fake_llm.log if e["status"] == 200]
    assert any(match in c for c in answered)
    assert evaluation.prompt_tokens == sum(max(1, len(c) // 4) for c in answered)
    grading = [u for u in fake_llm.prompts() if u.startswith("Grade the proof below")]
    squares = [u for u in grading if "Expand $(a-b)^2$." in u]
    assert len(squares) == 2
    assert all("Square" in u and "Means" not in u and first.text in u for u in squares)
    assert "Chain B" not in squares[0]
    third = [u for u in grading if "divide it" in u]  # PILOT-2: no clusters, the whole scheme
    assert third and "Expert solution groups" not in "".join(third)

    evaluation.status = "running"
    evaluation.save()
    evaluation = evaluation_run(evaluation_id=evaluation.pk)
    assert evaluation.counts["predictions"] == 6 and evaluation.counts["failed"] == 0
    assert evaluation.counts["clusters"] == {"C2": 1}  # what this run matched
    matched = [u for u in fake_llm.prompts() if match in u]
    assert len(matched) == 3  # model-a once (two runs), model-b twice (refused, then C2)
    amgm = [u for u in fake_llm.prompts() if u.startswith("Grade") and "By AM-GM" in u]
    assert len(amgm) == 2 and all("Means" in u and second.text in u for u in amgm)
