"""Writes of the corpus: the one import service and the import jobs that run it; renderings
made ahead."""

from problems.services.corpus import ImportReport, corpus_import
from problems.services.jobs import import_job_create, import_job_fail, import_job_run
from problems.services.rendering import texts_prerender, texts_prerender_queue

__all__ = [
    "ImportReport",
    "corpus_import",
    "import_job_create",
    "import_job_fail",
    "import_job_run",
    "texts_prerender",
    "texts_prerender_queue",
]
