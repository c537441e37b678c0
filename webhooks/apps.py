from django.apps import AppConfig


# the service is imported when a job fails, not at every start-up
def _delivery_fail(pk: int, reason: str) -> None:
    from webhooks.services import delivery_fail

    delivery_fail(delivery_id=pk, reason=reason)


class WebhooksConfig(AppConfig):
    """The top of the app stack: told of the lower apps' events only through their signals."""

    name = "webhooks"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from adjudication.signals import case_opened, case_settled, label_changed
        from exports.signals import export_finished
        from jobs.kinds import JobKind, job_kind_register
        from jobs.models import JobStatus
        from jobs.signals import job_failed
        from problems.signals import import_finished
        from webhooks import receivers

        job_kind_register(
            JobKind(
                "webhook_delivery",
                "webhooks.Delivery",
                "webhooks.delivery_send",
                (JobStatus.PENDING, JobStatus.RETRYING),
                fail=_delivery_fail,
            )
        )
        label_changed.connect(receivers.on_label_changed, dispatch_uid="webhooks.label_changed")
        case_opened.connect(receivers.on_case_opened, dispatch_uid="webhooks.case_opened")
        case_settled.connect(receivers.on_case_settled, dispatch_uid="webhooks.case_settled")
        export_finished.connect(
            receivers.on_export_finished, dispatch_uid="webhooks.export_finished"
        )
        import_finished.connect(
            receivers.on_import_finished, dispatch_uid="webhooks.import_finished"
        )
        job_failed.connect(receivers.on_job_failed, dispatch_uid="webhooks.job_failed")
