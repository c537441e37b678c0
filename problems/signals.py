"""Events of the corpus that higher apps react to (docs/ARCHITECTURE.md: signals and receivers)."""

from django.dispatch import Signal

# Sent after an import commits (never on a dry run), with problem_ids: list[int], the
# problems the import created or changed.
corpus_imported = Signal()

# Sent once an import is over (never on a dry run): on commit when it committed, else when it was
# rolled back, with name: str (the file's name), committed: bool, records: int, errors: int,
# warnings: int, counts: dict (created / updated / unchanged of each model) and outcome: str
# (the report's last line, empty when all went well). Webhooks tell the admins' receivers.
import_finished = Signal()
