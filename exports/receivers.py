"""Receivers of the lower apps' signals (connected in ExportsConfig.ready); each calls one
service."""

from exports.services.routing import routing_items_added


def on_items_added(sender, *, campaign_id: int, **kwargs) -> None:
    routing_items_added(campaign_id=campaign_id)
