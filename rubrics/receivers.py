"""Receivers of lower apps' events; each only calls one service."""

from rubrics.services import ImportCounts, schemes_import_for_problems


def on_corpus_imported(sender, problem_ids: list[int], **kwargs) -> ImportCounts:
    return schemes_import_for_problems(problem_ids=problem_ids)
