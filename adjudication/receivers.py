"""Receivers of the lower apps' signals (connected in AdjudicationConfig.ready); each calls
one service."""

from adjudication.services import imported_ratings_materialise, item_evaluate
from problems.models import Proof


def on_item_judged(sender, *, item_id: int, **kwargs) -> None:
    item_evaluate(item_id=item_id)


def on_corpus_imported(sender, *, problem_ids: list[int], **kwargs) -> None:
    imported_ratings_materialise(
        proofs=Proof.objects.filter(
            problem_id__in=problem_ids, metadata__has_key="imported_ratings"
        )
    )
