"""Models from hand-written SQL rows (core.rows): the values are the ORM's, on PostgreSQL and
on SQLite (where booleans come as integers, dates as text and JSON as a string)."""

from decimal import Decimal

import pytest
from django.db import connection
from django.db.models.signals import post_save, pre_save

from adjudication.models import FinalLabel
from annotation.models import Campaign, ExpertProgress, Grade, Item
from core.rows import columns, model_from_row, model_insert, row_upsert
from tests.annotation.factories import CampaignFactory, ItemFactory, expert_in

pytestmark = pytest.mark.django_db


def read(model, pk, attnames=None):
    names, select = columns(model, "t", attnames)
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT {select} FROM {model._meta.db_table} t WHERE t.id = %s", [pk])
        return model_from_row(model, names, cursor.fetchone())


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


def test_a_hand_inserted_row_is_the_row_save_writes():
    item = ItemFactory()
    expert = expert_in(item.campaign)
    values = dict(
        item=item,
        status="submitted",
        score=Decimal("5.50"),
        awards={"a": "full"},
        deductions=["gap"],
        comment="Fine.",
        seconds_spent=30,
    )
    inserted = Grade(expert=expert, **values)
    model_insert(inserted)
    assert inserted.pk and not inserted._state.adding and inserted.created_at
    saved = Grade(expert=expert_in(item.campaign), **values)
    saved.save()
    got, expected = Grade.objects.get(pk=inserted.pk), Grade.objects.get(pk=saved.pk)
    for field in Grade._meta.concrete_fields:
        if field.name not in {"id", "expert", "created_at", "updated_at"}:
            assert getattr(got, field.attname) == getattr(expected, field.attname), field.name
    assert (got.created_at, got.updated_at) == (inserted.created_at, inserted.updated_at)


def test_an_upsert_creates_then_replaces_only_the_named_columns_of_the_same_row():
    item = ItemFactory()
    values = {"item_id": item.pk, "value": Decimal("4"), "scale": "0-7", "source": "single"}
    first = row_upsert(
        FinalLabel, unique="item_id", replaced=("value", "updated_at"), values=values
    )
    created = FinalLabel.objects.get(pk=first)
    assert (created.value, created.grade_ids, created.policy) == (Decimal("4"), [], "")
    assert created.created_at == created.updated_at
    again = row_upsert(
        FinalLabel,
        unique="item_id",
        replaced=("value", "updated_at"),
        values={**values, "value": Decimal("6.5"), "source": "agreement", "grade_ids": [3]},
    )
    got = FinalLabel.objects.get(item=item)
    assert again == first == got.pk
    assert (got.value, got.source, got.grade_ids) == (Decimal("6.5"), "single", [])
    assert got.created_at == created.created_at and got.updated_at > created.updated_at
    with pytest.raises(TypeError, match="valeu"):
        row_upsert(FinalLabel, unique="item_id", replaced=("value",), values={"valeu": 1})


def test_the_models_inserted_by_hand_have_no_save_receivers():
    """model_insert and row_upsert send no pre_save / post_save: a receiver added for Grade or
    FinalLabel must take the ORM's save back on the submission path (annotation.services.grading,
    adjudication.services.labels)."""
    assert not pre_save.has_listeners(Grade) and not post_save.has_listeners(Grade)
    assert not pre_save.has_listeners(FinalLabel) and not post_save.has_listeners(FinalLabel)


def test_an_insert_may_take_expressions_that_read_a_row_written_in_the_same_statement():
    """`computed` columns take SQL expressions (returned into the instance, converted as the ORM
    converts them) that may read what a data-modifying WITH clause wrote: one statement."""
    item = ItemFactory()
    expert = expert_in(item.campaign)
    grade = Grade(item=item, expert=expert, status="submitted", comment="Counted.")
    model_insert(
        grade,
        computed={"sequence": "(SELECT submitted FROM progress)", "score": "(SELECT 2.5)"},
        with_sql=(
            "WITH progress AS (INSERT INTO annotation_expertprogress (campaign_id, expert_id, "
            "submitted) VALUES (%s, %s, 41) RETURNING submitted) "
        ),
        with_params=[item.campaign_id, expert.pk],
    )
    assert (grade.sequence, grade.score) == (41, Decimal("2.50"))
    stored = Grade.objects.get(pk=grade.pk)
    assert (stored.sequence, stored.score, stored.comment) == (41, Decimal("2.50"), "Counted.")
    assert ExpertProgress.objects.get(expert=expert).submitted == 41
