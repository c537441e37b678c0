"""Receivers of the lower apps' signals (connected in ExportsConfig.ready); each calls one
service."""

from exports.routing.services import routing_items_added, routing_loop_labelled


def on_items_added(sender, *, campaign_id: int, **kwargs) -> None:
    routing_items_added(campaign_id=campaign_id)


def on_proof_labelled_by_loop(sender, *, proof_id: int, **kwargs) -> None:
    routing_loop_labelled(proof_id=proof_id)
