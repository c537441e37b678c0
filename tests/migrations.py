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
    `None`) and gives the models as they were then, every other app as it is today."""
    graph = migrate(before).loader.graph
    moved = {app for app, _ in before}
    nodes = [node for node in graph.leaf_nodes() if node[0] not in moved] + [before[0]]
    return MigrationExecutor(connection).loader.project_state(nodes).apps
