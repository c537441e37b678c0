"""An export that waits with no worker alive says so on its page."""

import pytest
from django.core.cache import cache
from django.urls import reverse

from core import workers
from exports.models import ExportJob
from tests.exports.factories import labelled_campaign
from tests.factories import UserFactory

NO_WORKER_DB = 13  # as in tests/problems/test_import_outcome.py


@pytest.mark.worker  # asks a Redis broker whether a worker answers
@pytest.mark.django_db
def test_a_waiting_export_says_when_no_worker_is_alive(client, settings):
    if not settings.CELERY_BROKER_URL.startswith("redis://"):
        pytest.fail("this test needs a redis:// CELERY_BROKER_URL (`make test` sets one)")
    settings.CELERY_TASK_ALWAYS_EAGER = False
    settings.CELERY_BROKER_URL = settings.CELERY_BROKER_URL.rsplit("/", 1)[0] + f"/{NO_WORKER_DB}"
    cache.delete(workers.CACHE_KEY)
    researcher = UserFactory(roles=["researcher"])
    job = ExportJob.objects.create(
        campaign=labelled_campaign().campaign, format="dv", file_type="csv", created_by=researcher
    )
    client.force_login(researcher)
    url = reverse("exports:detail", args=[job.pk])
    notice = client.get(url, headers={"HX-Request": "true"}).content.decode()
    assert 'id="no-worker"' in notice and "this export waits" in notice
    ExportJob.objects.filter(pk=job.pk).update(status="failed", error="stopped")
    assert 'id="no-worker"' not in client.get(url).content.decode()
