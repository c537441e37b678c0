"""Receivers of the lower apps' signals (connected in AdjudicationConfig.ready); each calls
one service, imported when the signal comes (not at every start-up)."""


def on_item_judged(sender, *, item_id: int, **kwargs) -> None:
    from adjudication.services import item_evaluate

    item_evaluate(item_id=item_id)


def on_corpus_imported(sender, *, problem_ids: list[int], **kwargs) -> None:
    """Judgements and labels from the ratings the import shipped; an import that shipped none
    (one EXISTS) leaves the services unloaded (0.09 CPU-s of `import_corpus` of 2,000 rows)."""
    from problems.selectors import proofs_with_imported_ratings

    proofs = proofs_with_imported_ratings(problem_ids=problem_ids)
    if not proofs.exists():
        return
    from adjudication.services import imported_ratings_materialise

    imported_ratings_materialise(proofs=proofs)
