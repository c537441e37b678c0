"""Receivers of the lower apps' signals (connected in AdjudicationConfig.ready); each calls
one service, imported when the signal comes (not at every start-up)."""


def on_item_judged(sender, *, item_id: int, **kwargs) -> None:
    from adjudication.services import item_evaluate

    item_evaluate(item_id=item_id)


def on_corpus_imported(sender, *, problem_ids: list[int], **kwargs) -> None:
    from adjudication.services import imported_ratings_materialise
    from core.queries import of_ids
    from problems.models import Proof

    imported_ratings_materialise(
        proofs=of_ids(Proof.objects.all(), "problem", problem_ids).filter(
            metadata__has_key="imported_ratings"
        )
    )
