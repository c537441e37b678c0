"""Writes of the exports app: datasets and their jobs, grader evaluations."""

from exports.services.datasets import (
    companion_paths,
    confidence_refresh,
    dataset_write,
    export_create,
    export_fail,
    export_file_open,
    export_run,
)

__all__ = [
    "companion_paths",
    "confidence_refresh",
    "dataset_write",
    "export_create",
    "export_fail",
    "export_file_open",
    "export_run",
]
