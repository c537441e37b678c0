"""Receivers of the lower apps' signals (connected in AdjudicationConfig.ready); each calls
one service."""

from adjudication.services import item_evaluate


def on_item_judged(sender, *, item_id: int, **kwargs) -> None:
    item_evaluate(item_id=item_id)
