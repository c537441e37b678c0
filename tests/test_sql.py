"""Hand-written SQL (core.sql): its names come from the models' `_meta`, and models built from
its rows hold the values the ORM reads."""

from decimal import Decimal

import pytest
from django.db import connection

from annotation.models import Assignment, Campaign, Item
from core.sql import Table, columns, model_from_row
from tests.annotation.factories import CampaignFactory, ItemFactory

pytestmark = pytest.mark.django_db


def read(model, pk, attnames=None):
    names, select = columns(model, "t", attnames)
    t = Table(model, "t")
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT {select} FROM {t} WHERE {t.id} = %s", [pk])
        return model_from_row(model, names, cursor.fetchone())


def test_a_table_names_its_columns_by_the_model_and_refuses_a_name_it_lacks():
    a = Table(Assignment, "a")
    assert str(a) == '"annotation_assignment" a'
    assert (a.item_id, a.item) == ('a."item_id"', 'a."item_id"')  # attname or field name
    assert Table(Assignment).leased_until == '"leased_until"'  # bare, for SET and INSERT lists
    assert str(Table(Assignment)) == '"annotation_assignment"'
    with pytest.raises(AttributeError, match="no column 'lease_until'"):
        _ = a.lease_until


def test_every_column_reads_as_the_orm_reads_it():
    campaign = CampaignFactory(
        tolerance=Decimal("1.5"), error_taxonomy=[{"key": "gap", "label": "Gap"}]
    )
    item = ItemFactory(campaign=campaign, is_gold=True)
    for model, pk in ((Campaign, campaign.pk), (Item, item.pk)):
        raw, orm = read(model, pk), model.objects.get(pk=pk)
        for field in model._meta.concrete_fields:
            assert getattr(raw, field.attname) == getattr(orm, field.attname), field.name
    got = read(Item, item.pk)
    assert got.is_gold is True and got.is_final is False
    assert read(Campaign, campaign.pk).error_taxonomy == [{"key": "gap", "label": "Gap"}]


def test_some_columns_in_any_order_and_the_rest_deferred():
    item = ItemFactory(required_judgements=2)
    names, _ = columns(Item, "t", ("required_judgements", "id"))
    assert names == ("id", "required_judgements")  # the model's order, whatever was asked
    got = read(Item, item.pk, ("required_judgements", "id"))
    assert got.required_judgements == 2
    assert "created_at" in got.get_deferred_fields()
    assert got.created_at == item.created_at  # loaded on first use


def test_the_columns_of_every_model_are_the_ones_from_db_takes_in_its_order():
    """`columns` lists a model's stored fields through the public `_meta.get_fields()`: the
    order `Model.from_db` takes (its concrete fields), for every model of the project."""
    from django.apps import apps

    for model in apps.get_models():
        names, _ = columns(model, "t")
        assert names == tuple(f.attname for f in model._meta.concrete_fields), model


def test_insert_one_writes_what_bulk_create_writes_and_upserts_on_a_unique_key():
    from adjudication.models import FinalLabel
    from annotation.models import Grade
    from core.sql import insert_one
    from tests.factories import UserFactory

    item, expert = ItemFactory(), UserFactory(roles=["expert"])
    values = dict(
        item=item, expert=expert, status="submitted", score=Decimal("5.5"), sequence=3,
        step_verdicts=[{"step": 1, "verdict": "ok"}], comment="Checked.",
    )  # fmt: skip
    ours, theirs = Grade(**values), Grade(**{**values, "expert": UserFactory()})
    insert_one(ours)
    (theirs,) = Grade.objects.bulk_create([theirs])
    assert ours.pk and not ours._state.adding and ours.created_at is not None
    stored, orm = Grade.objects.get(pk=ours.pk), Grade.objects.get(pk=theirs.pk)
    for field in Grade._meta.concrete_fields:
        if field.attname not in ("id", "expert_id", "created_at", "updated_at"):
            assert getattr(stored, field.attname) == getattr(orm, field.attname), field.name
    first = FinalLabel(item=item, value=Decimal(2), scale="0-7", source="adjudication")
    insert_one(first, unique=("item_id",), update=("value", "source"))
    again = FinalLabel(item=item, value=Decimal(6), scale="0-7", source="imported")
    insert_one(again, unique=("item_id",), update=("value", "source"))
    assert again.pk == first.pk  # the same row, changed
    label = FinalLabel.objects.get(item=item)
    assert (label.value, label.source) == (Decimal(6), "imported")


def test_copy_new_writes_what_bulk_create_writes_and_returns_the_ids_in_order():
    """COPY with the ids drawn first: each column as bulk_create leaves it (defaults, JSON,
    the creation time), the ids in the rows' order; a column with no value and no default is
    refused before anything is written."""
    from core.sql import copy_new
    from problems.models import Proof
    from tests.problems.page_factories import ProofFactory

    campaign = CampaignFactory()
    proofs = [ProofFactory() for _ in range(3)]
    (orm,) = Item.objects.bulk_create([Item(campaign=campaign, proof=proofs[0])])
    rows = [
        {"campaign_id": campaign.pk, "proof_id": proof.pk, "required_judgements": n + 1}
        for n, proof in enumerate(proofs[1:])
    ]
    ids = copy_new(Item, rows)
    made = [Item.objects.get(pk=pk) for pk in ids]
    assert [(i.proof_id, i.required_judgements) for i in made] == [
        (proofs[1].pk, 1),
        (proofs[2].pk, 2),
    ]
    orm = Item.objects.get(pk=orm.pk)
    for field in Item._meta.concrete_fields:
        if field.attname not in ("id", "proof_id", "required_judgements", "created_at"):
            assert getattr(made[0], field.attname) == getattr(orm, field.attname), field.name
    assert made[0].created_at is not None and made[0].route_components == {}
    assert Item.objects.create(campaign=campaign, proof=ProofFactory()).pk > max(ids)
    before = Proof.objects.count()
    with pytest.raises(ValueError, match="Proof.problem_id: no value and no default"):
        copy_new(Proof, [{"text": "A proof."}])
    assert Proof.objects.count() == before
