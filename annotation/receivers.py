"""Receivers of lower apps' events; each only calls one service."""

from annotation.services.items import items_repin_to_scheme


def on_scheme_approved(sender, scheme_id: int, problem_id: int, **kwargs) -> int:
    return items_repin_to_scheme(scheme_id=scheme_id, problem_id=problem_id)
