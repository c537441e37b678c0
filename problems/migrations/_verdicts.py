"""The repair that the verdict-contract migrations run (problems 0007, adjudication 0009): every
stored verdict is re-read through its contract's parser (`llm.scores.verifier_score`,
`llm.meta_scores.meta_verifier_score`), so that a row has a score exactly when its text keeps
the contract. A row that had no score gets none (its reply may have stopped at the token limit,
which the text alone does not show)."""

from django.db.models import Q

BATCH = 2000


def verdicts_reread(model, parse) -> int:
    """Re-reads the rows of `model` (a historical model with text, score, kept_contract and
    score_problem) that hold a score or claim the contract; returns how many changed."""
    rows = model.objects.filter(Q(score__isnull=False) | Q(kept_contract=True)).only(
        "id", "text", "score", "kept_contract", "score_problem"
    )
    changed, pending = 0, []
    for row in rows.order_by("id").iterator(chunk_size=BATCH):
        verdict = parse(row.text)
        if row.score is None:
            score, kept = None, False
            problem = verdict.problem or row.score_problem or "no score was stored for this text"
        else:
            score, kept, problem = verdict.score, verdict.kept_contract, verdict.problem
        if (score, kept) != (row.score, row.kept_contract):
            row.score, row.kept_contract, row.score_problem = score, kept, problem[:200]
            pending.append(row)
        if len(pending) >= BATCH:
            changed += _save(model, pending)
    return changed + _save(model, pending)


def _save(model, rows: list) -> int:
    model.objects.bulk_update(rows, ["score", "kept_contract", "score_problem"])
    count = len(rows)
    rows.clear()
    return count
