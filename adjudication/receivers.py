"""Receivers of the lower apps' signals (connected in AdjudicationConfig.ready); each calls
one service."""

from adjudication.services import imported_ratings_materialise, item_evaluate
from config.queries import of_ids
from problems.models import Proof


def on_item_judged(sender, *, item_id: int, **kwargs) -> None:
    item_evaluate(item_id=item_id)


def on_corpus_imported(sender, *, problem_ids: list[int], **kwargs) -> None:
    imported_ratings_materialise(
        proofs=of_ids(Proof.objects.all(), "problem", problem_ids).filter(
            metadata__has_key="imported_ratings"
        )
    )
