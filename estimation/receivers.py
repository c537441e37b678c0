"""Receivers of the lower apps' signals (connected in EstimationConfig.ready); each calls one
service, imported when the signal comes (not at every start-up)."""


def on_items_added(sender, *, campaign_id: int, item_ids=(), **kwargs) -> None:
    """New items: drawn for double-scoring adaptively (where the campaign says so), then
    ranked where the campaign routes by uncertainty."""
    from estimation.routing.services import routing_items_added
    from estimation.services.double_scoring import double_scoring_items_added

    double_scoring_items_added(campaign_id=campaign_id, item_ids=list(item_ids))
    routing_items_added(campaign_id=campaign_id)


def on_proof_labelled_by_loop(sender, *, proof_id: int, **kwargs) -> None:
    from estimation.routing.services import routing_loop_labelled

    routing_loop_labelled(proof_id=proof_id)


def on_grader_evaluated(sender, *, campaign_id: int, **kwargs) -> None:
    """A new grader of the campaign: every label's confidence is fitted again."""
    from estimation.services.confidence import campaign_rater_model_fit

    campaign_rater_model_fit(campaign_id=campaign_id)


def rater_model_summary(campaign):
    """estimation.selectors.rater_model_summary, registered with adjudication's agreement page
    and API and imported on the first read."""
    from estimation.selectors import rater_model_summary

    return rater_model_summary(campaign)
