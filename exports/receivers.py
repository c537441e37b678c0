"""Receivers of the lower apps' signals (connected in ExportsConfig.ready); each calls one
service, imported when the signal comes (not at every start-up)."""


def on_items_added(sender, *, campaign_id: int, **kwargs) -> None:
    from exports.routing.services import routing_items_added

    routing_items_added(campaign_id=campaign_id)


def on_proof_labelled_by_loop(sender, *, proof_id: int, **kwargs) -> None:
    from exports.routing.services import routing_loop_labelled

    routing_loop_labelled(proof_id=proof_id)
