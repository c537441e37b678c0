"""Migrating the test database back and forth, for the tests of a model's move between apps."""

from django.db import connection
from django.db.migrations.executor import MigrationExecutor


def migrate(targets=None) -> MigrationExecutor:
    """Migrates to `targets` (every app's latest migration when None)."""
    executor = MigrationExecutor(connection)
    executor.loader.build_graph()
    executor.migrate(targets or executor.loader.graph.leaf_nodes())
    return executor


def models_before(before: list[tuple[str, str | None]]):
    """Migrates back to `before` (the old app's last migration before a move, then the new app's
    `None`) and gives the models as the database then holds them: the state of every migration
    still applied (a later migration of another app that needs what `before` undoes is undone
    with it, and its models are those of before too)."""
    migrate(before)
    executor = MigrationExecutor(connection)
    applied = [
        node for node in executor.loader.applied_migrations if node in executor.loader.graph.nodes
    ]
    return executor.loader.project_state(applied).apps
