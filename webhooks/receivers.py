"""Receivers of the lower apps' signals (connected in WebhooksConfig.ready): each calls one
service, imported when the signal comes (not at every start-up), which records a delivery per
matching active hook once the transaction commits."""


def on_label_changed(sender, *, item_id: int, **kwargs) -> None:
    from webhooks.services import event_item_labelled

    event_item_labelled(item_id=item_id)


def on_case_opened(sender, *, case_id: int, **kwargs) -> None:
    from webhooks.services import event_case

    event_case(case_id=case_id, opened=True)


def on_case_settled(sender, *, case_id: int, **kwargs) -> None:
    from webhooks.services import event_case

    event_case(case_id=case_id, opened=False)


def on_export_finished(sender, *, job_id: int, status: str, **kwargs) -> None:
    from webhooks.services import event_export_finished

    event_export_finished(job_id=job_id, status=status)


def on_import_finished(
    sender, *, name, committed, records, errors, warnings, counts, outcome, **kwargs
) -> None:
    from webhooks.services import event_import_finished

    event_import_finished(
        name=name,
        committed=committed,
        records=records,
        errors=errors,
        warnings=warnings,
        counts=counts,
        outcome=outcome,
    )


def on_job_failed(sender, *, kind: str, job_id: int, reason: str = "", **kwargs) -> None:
    from webhooks.services import event_job_failed

    event_job_failed(kind=kind, job_id=job_id, reason=reason)
