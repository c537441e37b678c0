"""proofmark_client: a Python client of Proofmark's API (import, campaigns, grading, exports)."""

from proofmark_client.client import OPERATIONS, Export, Proofmark
from proofmark_client.errors import JobFailed, JobTimeout, ProofmarkError
from proofmark_client.types import (
    TYPES,
    Campaign,
    ExportJob,
    Grade,
    ImportCreated,
    ImportJob,
    Item,
    ItemsCreated,
    Judgement,
    NoWorkLeft,
)

__all__ = [
    "OPERATIONS",
    "TYPES",
    "Campaign",
    "Export",
    "ExportJob",
    "Grade",
    "ImportCreated",
    "ImportJob",
    "Item",
    "ItemsCreated",
    "JobFailed",
    "JobTimeout",
    "Judgement",
    "NoWorkLeft",
    "Proofmark",
    "ProofmarkError",
]
__version__ = "0.1.0"
