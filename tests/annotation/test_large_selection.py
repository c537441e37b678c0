"""A selection of more proofs than a statement takes parameters (PostgreSQL: 65,535): a campaign
made of it gets every item, through the API and the service behind the page and the API; the
ids of the selection travel as one array parameter (core.queries.of_ids), never as a list."""

import hashlib
import json
from decimal import Decimal

import pytest
from django.db import connection
from django.utils import timezone

from annotation import selectors, services
from annotation.models import DoubleDesign, Item, ItemOrder
from annotation.services.review import analysis_items_create
from annotation.signals import items_added
from core.queries import of_ids
from core.sql import update_by_id
from estimation.routing.services import uncertainty_by_proof
from estimation.services.double_scoring import double_scoring_items_added
from problems.models import Problem, Proof, VerifierAnalysis
from problems.selectors import proof_natural_keys
from problems.services.bulk import insert_rows
from tests.annotation.factories import CampaignFactory
from tests.factories import UserFactory
from tests.metaverify.factories import review_campaign
from tests.problems.page_factories import proofs_copied

pytestmark = pytest.mark.django_db

# more than PostgreSQL's 65,535 parameters of one statement
MANY = 70_000


def many_proofs(count: int = MANY, problems: int = 7) -> list[int]:
    """`count` proofs over a few problems, written in a few statements (no factory)."""
    proofs_copied(count=count, generator="model-big", prefix="BIG", problems=problems)
    return list(Proof.objects.filter(generator="model-big").values_list("pk", flat=True))


@pytest.fixture
def sent():
    """The items_added signals sent meanwhile (each a dict of its arguments)."""
    calls = []

    def receiver(sender, **kwargs):
        calls.append(kwargs)

    items_added.connect(receiver, dispatch_uid="test-large-selection")
    yield calls
    items_added.disconnect(dispatch_uid="test-large-selection")


def test_a_campaign_of_70000_proofs_through_the_api(api_client_for, sent):
    campaign = CampaignFactory(slug="big", double_share=Decimal("0.1"), sample_seed=5)
    ids = many_proofs()
    admin = api_client_for(UserFactory(roles=["admin"]))
    answer = admin.post(
        f"/api/v1/campaigns/{campaign.slug}/items/", {"generator": "model-big"}, format="json"
    )
    assert answer.status_code == 201, answer.content[:500]
    body = answer.json()
    assert len(body["created"]) == MANY and body["already_present"] == 0
    assert body["double_scored"] == MANY // 10
    assert Item.objects.filter(campaign=campaign).count() == MANY
    assert set(Item.objects.filter(campaign=campaign).values_list("proof_id", flat=True)) == set(
        ids
    )
    assert len(sent) == 1 and len(sent[0]["item_ids"]) == MANY
    assert sorted(sent[0]["item_ids"]) == sorted(body["created"])
    # again: every proof already there, nothing sent
    again = admin.post(
        f"/api/v1/campaigns/{campaign.slug}/items/", {"generator": "model-big"}, format="json"
    )
    assert again.status_code == 201, again.content[:500]
    assert again.json()["created"] == [] and again.json()["already_present"] == MANY
    assert len(sent) == 1


@pytest.mark.nightly  # a minute or more: the receivers reread, draw and rank all 70,000 items
def test_a_campaign_of_70000_proofs_given_by_id_doubles_adaptively(api_client_for, sent):
    """The API's explicit ids, an adaptive double design (its receiver rereads the new items)
    and ranking by uncertainty (the whole pool's evidence)."""
    campaign = CampaignFactory(
        slug="big-adaptive",
        double_share=Decimal("0.1"),
        double_design=DoubleDesign.ADAPTIVE,
        item_order=ItemOrder.UNCERTAINTY,
    )
    ids = many_proofs()
    admin = api_client_for(UserFactory(roles=["admin"]))
    answer = admin.post(
        f"/api/v1/campaigns/{campaign.slug}/items/", {"proof_ids": ids}, format="json"
    )
    assert answer.status_code == 201, answer.content[:500]
    assert len(answer.json()["created"]) == MANY
    items = Item.objects.filter(campaign=campaign)
    assert items.filter(double_design=DoubleDesign.ADAPTIVE).count() == MANY
    assert items.filter(required_judgements=2).count() == MANY // 10
    assert items.filter(route_rank__isnull=False).count() == MANY
    assert len(sent) == 1


def test_the_existing_items_check_is_one_statement_whatever_the_selection():
    campaign = CampaignFactory(slug="counted")
    many_proofs(count=3000, problems=3)
    services.items_create_from_selection(
        campaign=campaign, proofs=selectors.proof_selection(generator="model-big")[:1000]
    )
    proofs = list(selectors.proof_selection(generator="model-big"))
    statements = []

    def record(execute, sql, params, many, context):
        statements.append((sql, params))
        return execute(sql, params, many, context)

    with connection.execute_wrapper(record):
        result = services.items_create_from_selection(campaign=campaign, proofs=proofs)
    assert result.already_present == 1000 and result.created_count == 2000
    checks = [
        (sql, params)
        for sql, params in statements
        if sql.startswith("SELECT") and 'FROM "annotation_item"' in sql
    ]
    assert len(checks) == 1, checks
    sql, params = checks[0]
    assert "= ANY(" in sql and " IN (" not in sql
    # the 3,000 ids are one parameter (an array's text, "{1,2,3}"), beside the campaign's id
    array = next(p for p in params if isinstance(p, str))
    assert len(params) == 2 and sorted(int(pk) for pk in array.strip("{}").split(",")) == sorted(
        p.pk for p in proofs
    )


def test_analysis_items_of_70000_analyses(sent):
    campaign = review_campaign(slug="big-reviews")
    ids = many_proofs()
    now = timezone.now()
    insert_rows(
        VerifierAnalysis,
        ("proof_id", "verifier", "sample_key", "text", "text_hash", "kept_contract",
         "score_problem", "source", "metadata", "created_at", "updated_at"),
        [(pk, "v-big", "0", "Fine.", "0" * 64, False, "", "tests", {}, now, now) for pk in ids],
    )  # fmt: skip
    result = analysis_items_create(
        campaign=campaign,
        analyses=VerifierAnalysis.objects.filter(proof__in=selectors.proof_selection()),
    )
    assert result.created_count == MANY and len(sent) == 1
    again = analysis_items_create(campaign=campaign, analyses=VerifierAnalysis.objects.all())
    assert again.created_count == 0 and again.already_present == MANY


def test_the_readers_of_a_selection_take_any_number_of_ids():
    """What the items_added receivers and the double-scored sample read, given more ids than a
    statement takes parameters (most of them of no row)."""
    campaign = CampaignFactory(slug="readers", double_design=DoubleDesign.ADAPTIVE)
    ids = many_proofs(count=10, problems=2)
    many = ids + list(range(10**9, 10**9 + MANY))
    assert set(proof_natural_keys(proof_ids=many)) == set(ids)
    assert set(uncertainty_by_proof(many)) == set(many)
    assert double_scoring_items_added(campaign_id=campaign.pk, item_ids=many) == 0
    assert of_ids(Proof.objects.all(), "id", many).count() == 10
    # through a relation, and inside a subquery (the table under another alias there)
    VerifierAnalysis.objects.create(proof_id=ids[0], verifier="v", sample_key="0", text="-")
    problems = list(Problem.objects.values_list("pk", flat=True)) + many
    assert of_ids(VerifierAnalysis.objects.all(), "proof__problem", problems).count() == 1
    inner = of_ids(Proof.objects.all(), "id", many).values("problem_id")
    # ids given as a subquery stay one
    assert of_ids(Proof.objects.all(), "id", Proof.objects.values("id")).count() == 10
    assert Problem.objects.filter(pk__in=inner).count() == 2


def test_the_double_scored_sample_is_the_one_the_hex_digests_ranked():
    """The sample drawn from an array of digests is the one sorting hex digests drew (a
    campaign's sample may not change with how it is computed)."""
    keys = {n: (f"P-{n % 13}", "model", str(n)) for n in range(1, 5001)}

    def by_hex(seed, share):
        count = round(share * len(keys))
        ranked = sorted(
            keys,
            key=lambda k: hashlib.sha256(json.dumps([seed, *keys[k]]).encode()).hexdigest(),
        )
        return set(ranked[:count])

    for seed, share in ((3, Decimal("0.1")), (11, Decimal("0.37")), (0, Decimal("1"))):
        assert services.double_scored_keys(seed=seed, share=share, keys=keys) == by_hex(seed, share)
    assert services.double_scored_keys(seed=3, share=Decimal("0"), keys=keys) == set()
    assert services.double_scored_keys(seed=3, share=Decimal("0.5"), keys={}) == set()


def test_rows_are_updated_by_id_in_one_statement():
    """core.sql.update_by_id: every kind of column the receivers write (integers, text, floats,
    JSON, times, booleans, nulls), any number of rows, one statement."""
    campaign = CampaignFactory(slug="updated")
    many_proofs(count=5, problems=1)
    result = services.items_create_from_selection(
        campaign=campaign, proofs=selectors.proof_selection(generator="model-big")
    )
    items = list(Item.objects.filter(pk__in=result.created_ids).order_by("pk"))
    now = timezone.now()
    for n, item in enumerate(items):
        item.route_rank = n + 1
        item.route_uncertainty = n / 10
        item.route_components = {"spread": n, "names": ["a", "b"]} if n else {}
        item.route_ranked_at = now
        item.route_held = n % 2 == 0
        item.double_design = DoubleDesign.ADAPTIVE
        item.double_probability = 0.25
        item.required_judgements = 2 if n == 1 else 1
    fields = (
        "route_rank", "route_uncertainty", "route_components", "route_ranked_at",
        "route_held", "double_design", "double_probability", "required_judgements",
    )  # fmt: skip
    statements = []

    def record(execute, sql, params, many, context):
        statements.append(sql)
        return execute(sql, params, many, context)

    with connection.execute_wrapper(record):
        assert update_by_id(items, fields) == 5
    assert len(statements) == 1 and "unnest(" in statements[0]
    for n, stored in enumerate(Item.objects.filter(campaign=campaign).order_by("pk")):
        assert stored.route_rank == n + 1 and stored.route_uncertainty == n / 10
        assert stored.route_components == ({"spread": n, "names": ["a", "b"]} if n else {})
        assert stored.route_ranked_at == now and stored.route_held == (n % 2 == 0)
        assert stored.double_design == DoubleDesign.ADAPTIVE
        assert stored.required_judgements == (2 if n == 1 else 1)
    assert update_by_id([], fields) == 0
