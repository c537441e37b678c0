"""How the suite runs: resources of its own for each pytest-xdist worker, the groups that keep
heavy tests together.

Loaded with `-p tests.suite` (pyproject's addopts), so it runs before pytest-django reads the
settings: each xdist worker (`-n 3` in the Makefile) gets its own run folder, Redis database and
queue; pytest-django suffixes the test database per worker itself (`test_proofmark_gw0`, ...).
Servers (live_server, the fake model server, a test's own gunicorn) take free ports from the
system, so no port is shared either.
"""

import os
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
WORKER = os.environ.get("PYTEST_XDIST_WORKER", "")  # gw0, gw1, ... in an xdist worker


def redis_url_for_worker(url: str, index: int) -> str:
    """The Redis database of xdist worker `index`: counting down from the one given (`make test`
    gives 15: gw0 on 15, gw1 on 14), so a helper's database below stays its own."""
    base, _, db = url.rpartition("/")
    number = int(db or 0) - index
    if number < 0:
        raise pytest.UsageError(f"{url}: no Redis database is left for xdist worker {index}")
    return f"{base}/{number}"


if WORKER:
    _index = int(WORKER.removeprefix("gw"))
    _run_dir = Path(os.environ.get("PROOFMARK_RUN_DIR", ROOT / ".run"))
    os.environ["PROOFMARK_RUN_DIR"] = str(_run_dir / WORKER)
    _broker = os.environ.get("CELERY_BROKER_URL", "")
    if _broker.startswith("redis://"):
        os.environ["CELERY_BROKER_URL"] = redis_url_for_worker(_broker, _index)
    os.environ["CELERY_TASK_DEFAULT_QUEUE"] = f"proofmark-{WORKER}"


@pytest.hookimpl(tryfirst=True)  # before pytest-xdist's, which reads the groups to suffix node ids
def pytest_collection_modifyitems(config, items):
    for item in items:
        # one real Celery worker process serves them all (a session fixture per xdist worker):
        # under `--dist loadgroup` they run on one xdist worker instead of starting one each
        if item.get_closest_marker("worker"):
            item.add_marker(pytest.mark.xdist_group("celery-worker"))
