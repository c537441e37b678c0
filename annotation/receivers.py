"""Receivers of lower apps' events; each only calls one service, imported when the event comes
(a process that never receives it, such as an export, does not load the services at start-up)."""


def on_scheme_approved(sender, scheme_id: int, problem_id: int, **kwargs) -> int:
    from annotation.services.items import items_repin_to_scheme

    return items_repin_to_scheme(scheme_id=scheme_id, problem_id=problem_id)
