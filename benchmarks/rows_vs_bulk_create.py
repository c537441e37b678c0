"""Benchmark: did `core/rows.py`'s hand-written INSERT builder buy 10% on the path it served?

A one-off measurement (not in `make bench`): it answered no (9.9%, below), so core/rows.py's
writers were replaced by the ORM's bulk_create and removed. It runs on the tree of commit 5c089ee,
the last with core/rows.py (`git worktree add /tmp/rows 5c089ee`, then run it there).

Measured on 2026-12-02 (2 cores shared with four other sessions, load average 8-9), 6 rounds x
150 submissions each way: core.rows 44.4 ms, ORM bulk_create 49.3 ms a submission (median of the
rounds' medians; the machine's load made a submission about ten times its quiet cost): core.rows
saved 9.9% (5.5% to 11.1% by round, under 10% in 5 of 6 rounds).

Its writers serve one user path: a judgement submitted without a draft (an API client's submit,
`grade_submit`), which inserts the grade with its place in the expert's count in one statement
(`annotation.services.progress.grade_insert_counted`, `core.rows.model_insert`) and, since each
item here needs one judgement, writes the item's final label in the same transaction
(`adjudication.services.labels.label_write`, `core.rows.row_upsert`). The other way is the ORM's
bulk operations: the count's upsert in its own statement then `Grade.objects.bulk_create`, and
`FinalLabel.objects.bulk_create(update_conflicts=True)`.

The real `grade_submit` runs both ways, interleaved one submission at a time (A B A B ..., the
order flipped every other round, so that the load of a shared machine weighs on both alike), N
submissions each way a round on fresh items of a campaign of its own, one thread, in a fresh
database (bench_<name>, dropped at the end; real data is never touched). Prints each round's
median time of a submission each way, then the median of the rounds and the difference.

    DATABASE_URL=postgres://... .venv/bin/python benchmarks/rows_vs_bulk_create.py [--rounds 6] [--n 150]
"""

from __future__ import annotations

import argparse
import statistics
import time
from datetime import timedelta

from benchdb import machine_line, setup_django

setup_django()

from bench_assignment import experts, make_corpus  # noqa: E402
from django.db import connection, connections  # noqa: E402


def _orm_grade_insert_counted(*, grade) -> None:
    """The ORM's way of `grade_insert_counted`: the count, then the grade by bulk_create."""
    from annotation.models import Grade
    from annotation.services.progress import expert_progress_count

    grade.sequence = expert_progress_count(
        campaign_id=grade.item.campaign_id, expert_id=grade.expert_id
    )
    Grade.objects.bulk_create([grade])


def _orm_row_upsert(model, *, unique: str, replaced: tuple[str, ...], values: dict) -> int:
    """The ORM's way of `row_upsert`: bulk_create with update_conflicts."""
    (row,) = model.objects.bulk_create(
        [model(**values)], update_conflicts=True, unique_fields=[unique], update_fields=replaced
    )
    return row.pk


def use(way: str) -> None:
    """Points the two callers at `core.rows` ("rows") or at the ORM ("orm")."""
    from adjudication.services import labels
    from annotation.services import grading, progress
    from core import rows

    if way == "rows":
        grading.grade_insert_counted = progress.grade_insert_counted
        labels.row_upsert = rows.row_upsert
    else:
        grading.grade_insert_counted = _orm_grade_insert_counted
        labels.row_upsert = _orm_row_upsert


def one_round(index: int, n: int) -> dict[str, list[float]]:
    """`n` submissions each way, interleaved one by one (rows, orm, rows, ...; the order flipped
    on odd rounds), so that the machine's load weighs on both ways alike; each way on items of
    its own campaign, graded by an expert of its own."""
    from django.utils import timezone

    from annotation.models import Assignment, Campaign, Grade, Item
    from annotation.services import GradeInput, grade_submit

    work = {}
    until = timezone.now() + timedelta(hours=2)
    for way in WAYS:
        slug = f"bench-rows-{way}-{index}"
        campaign = Campaign.objects.create(slug=slug, name=slug)
        proofs = make_corpus(n, text="We have x > 1. Hence the claim.")
        items = Item.objects.bulk_create(Item(campaign=campaign, proof=p) for p in proofs)
        user = experts(slug, campaign)[0]
        Assignment.objects.bulk_create(
            Assignment(item=item, expert=user, leased_until=until) for item in items
        )
        work[way] = (campaign, user, items)
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE")
    data = {
        "score": "3",
        "comment": "Partial progress.",
        "spans": [{"start": 15, "end": 20, "quote": "Hence", "category": "skipped_steps"}],
    }
    order = WAYS if index % 2 == 0 else WAYS[::-1]
    times: dict[str, list[float]] = {way: [] for way in WAYS}
    for k in range(n):
        for way in order:
            campaign, user, items = work[way]
            use(way)
            start = time.perf_counter()
            grade_submit(item=items[k], expert=user, data=GradeInput.from_data(data))
            times[way].append(time.perf_counter() - start)
    for way, (campaign, _, _) in work.items():  # both ways wrote the same rows
        grades = Grade.objects.filter(item__campaign=campaign).order_by("sequence")
        assert list(grades.values_list("sequence", flat=True)) == list(range(1, n + 1)), way
        assert Item.objects.filter(campaign=campaign, final_label__isnull=False).count() == n
    return times


WAYS = ("rows", "orm")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=6, help="rounds (each interleaves both)")
    parser.add_argument("--n", type=int, default=150, help="submissions each way a round")
    args = parser.parse_args()
    original = connection.settings_dict["NAME"]
    connection.settings_dict.setdefault("TEST", {})["NAME"] = f"bench_{original}"
    connection.creation.create_test_db(verbosity=0, autoclobber=True, keepdb=False)
    medians: dict[str, list[float]] = {way: [] for way in WAYS}
    try:
        one_round(-1, 30)  # warm-up: caches, the statements' first plans
        for index in range(args.rounds):
            times = one_round(index, args.n)
            for way in WAYS:
                medians[way].append(statistics.median(times[way]) * 1000)
            print(
                f"round {index}: core.rows {medians['rows'][-1]:.3f} ms, "
                f"ORM {medians['orm'][-1]:.3f} ms a submission",
                flush=True,
            )
    finally:
        use("rows")
        connections.close_all()
        connection.creation.destroy_test_db(original, verbosity=0)
    rows_ms, orm_ms = statistics.median(medians["rows"]), statistics.median(medians["orm"])
    print(machine_line())
    print(
        f"submission without a draft, median of {args.rounds} rounds x {args.n} each way: "
        f"core.rows {rows_ms:.3f} ms, ORM bulk_create {orm_ms:.3f} ms; "
        f"core.rows saves {100 * (orm_ms - rows_ms) / orm_ms:.1f}%"
    )


if __name__ == "__main__":
    main()
