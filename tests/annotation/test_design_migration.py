"""annotation 0013 records the design of items made before designs were recorded: gold items
as gold, items of a campaign that routed with a budget with no known probability (their draw
was the most uncertain first), every other item for experts with probability 1; the double
design as the campaign's uniform share."""

from decimal import Decimal

from annotation.models import Item

BEFORE = [("annotation", "0012_grade_origin_assignment_passed")]


def test_items_made_before_designs_get_one_that_tells_the_truth(migrations):
    old = migrations.models_before(BEFORE)
    Campaign = old.get_model("annotation", "Campaign")
    OldItem = old.get_model("annotation", "Item")
    problem = old.get_model("problems", "Problem").objects.create(external_id="P1", statement="s")
    Proof = old.get_model("problems", "Proof")
    proofs = [
        Proof.objects.create(
            problem=problem, generator="g", sample_key=str(n), text="t", text_hash=str(n)
        )
        for n in range(3)
    ]
    plain = Campaign.objects.create(slug="plain", name="Plain", double_share=Decimal("0.4"))
    routed = Campaign.objects.create(
        slug="routed", name="Routed", item_order="uncertainty", routing_budget=Decimal("0.5")
    )
    ids = {
        "plain": OldItem.objects.create(campaign=plain, proof=proofs[0]).pk,
        "gold": OldItem.objects.create(campaign=plain, proof=proofs[1], is_gold=True).pk,
        "routed": OldItem.objects.create(campaign=routed, proof=proofs[2], route_rank=1).pk,
    }

    migrations.migrate()

    found = {name: Item.objects.get(pk=pk) for name, pk in ids.items()}
    assert (found["plain"].design, found["plain"].inclusion_probability) == ("all", 1.0)
    assert (found["gold"].design, found["gold"].inclusion_probability) == ("gold", 1.0)
    assert (found["routed"].design, found["routed"].inclusion_probability) == ("unknown", None)
    assert (found["plain"].double_design, found["plain"].double_probability) == ("uniform", 0.4)
