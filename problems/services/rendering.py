"""Renderings made ahead: the texts a grading page shows (the problem, the proof, the reference
solutions) rendered and stored (problems.rendering.texts_rendered) by the worker when items are
made, so that an expert's first view of a proof does not render it on the web process."""

from __future__ import annotations

import logging

from django.db import transaction

from jobs.services import task_by_name
from problems.models import Proof, ReferenceSolution

logger = logging.getLogger(__name__)

PRERENDER_BATCH = 200  # proofs a task renders (and a query reads) at once


def texts_prerender(*, proof_ids: list[int]) -> None:
    """Renders and stores the proofs' texts and their problems' statements and reference
    solutions that no rendering is stored for yet. Idempotent: a text stored is not rendered
    again."""
    # the renderer (markdown-it, nh3 and their plugins) is loaded here, by the worker that
    # renders, not by every process that imports the services (import_corpus: 0.02 CPU-s)
    from problems.rendering import texts_rendered

    for start in range(0, len(proof_ids), PRERENDER_BATCH):
        proofs = list(
            Proof.objects.filter(pk__in=proof_ids[start : start + PRERENDER_BATCH])
            .select_related("problem")
            .only("text", "problem__statement")
        )
        problems = {p.problem_id for p in proofs}
        solutions = ReferenceSolution.objects.filter(problem_id__in=problems).values_list(
            "text", flat=True
        )
        texts_rendered(
            [p.text for p in proofs] + [p.problem.statement for p in proofs] + list(solutions)
        )


def texts_prerender_queue(*, proof_ids: list[int]) -> None:
    """Queues texts_prerender for the proofs once the caller's transaction commits, in tasks of
    PRERENDER_BATCH proofs. A message the broker does not take is only logged: the page renders
    a text it does not find, and stores it."""

    def send() -> None:
        from kombu.exceptions import OperationalError

        # by the name it is registered under: problems.tasks imports these services
        task = task_by_name("problems.tasks.texts_prerender_run")
        for start in range(0, len(proof_ids), PRERENDER_BATCH):
            try:
                task.delay(proof_ids[start : start + PRERENDER_BATCH])
            except OperationalError as exc:
                logger.warning("texts not queued for rendering ahead: %s", exc)
                return

    transaction.on_commit(send)
