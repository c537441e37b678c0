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
    """A new grader of the campaign: every label's confidence is fitted again (in the
    background, as after any change: the import may be a page's request)."""
    from estimation.services.refit import rater_model_refit_request

    rater_model_refit_request(campaign_id=campaign_id, reason="grader evaluation")


def on_judgement_submitted(sender, *, item_id: int, **kwargs) -> None:
    """A grade submitted or revised: the campaign's rater model is refitted (debounced)."""
    from estimation.services.refit import rater_model_refit_request_for_item

    rater_model_refit_request_for_item(item_id=item_id, reason="grade")


def on_label_changed(sender, *, item_id: int, **kwargs) -> None:
    """A label set by an adjudication, an import or the labelling loop: refitted (debounced)."""
    from estimation.services.refit import rater_model_refit_request_for_item

    rater_model_refit_request_for_item(item_id=item_id, reason="label")


def on_corpus_imported(sender, *, problem_ids: list[int], **kwargs) -> None:
    """An import may bring ratings of proofs the campaigns hold: each such campaign refits."""
    from estimation.services.refit import rater_model_refit_request_for_problems

    rater_model_refit_request_for_problems(problem_ids=problem_ids)


def rater_model_summary(campaign):
    """estimation.selectors.rater_model_summary, registered with adjudication's agreement page
    and API and imported on the first read."""
    from estimation.selectors import rater_model_summary

    return rater_model_summary(campaign)


def rater_model_freshness(campaign):
    """estimation.selectors.rater_model_freshness, registered with adjudication's pages."""
    from estimation.selectors import rater_model_freshness

    return rater_model_freshness(campaign)
