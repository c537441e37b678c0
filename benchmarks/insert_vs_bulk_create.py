"""Benchmark: does `core.sql.insert_one` buy 10% on the path it serves, against the ORM's bulk_create?

The path: a judgement submitted without a draft (an API client's submit, `grade_submit`), which
inserts the grade and, since each item here needs one judgement, the item's final label in the
same transaction (`adjudication.services.labels.label_write`, an upsert). The other way is the
ORM's: `Grade.objects.bulk_create([grade])` and `FinalLabel.objects.bulk_create(...,
update_conflicts=True)`. Everything else of the submission (its one statement of bookkeeping,
the reads, the detection) is the same both ways.

The real `grade_submit` runs both ways, interleaved one submission at a time (A B A B ..., the
order flipped every other round, so that the load of a shared machine weighs on both alike), N
submissions each way a round on fresh items of a campaign of its own, one thread, in a fresh
database (bench_<name>, dropped at the end; real data is never touched). Measured: this
process's CPU time a submission (the web process's share of a judgement: PostgreSQL's work is
the same both ways) and its wall time. Prints each round's medians, then the median of the
rounds and what `insert_one` saves.

An earlier form of this script (until 2026-12-03, `rows_vs_bulk_create.py`, on the tree of
5c089ee) timed `core/rows.py`'s writers by wall time alone, on a machine whose load made a
submission ten times its quiet cost: 9.9%, and they were removed. Wall time under load is mostly
waiting; the CPU time is what a busy web process pays.

    DATABASE_URL=postgres://... .venv/bin/python benchmarks/insert_vs_bulk_create.py [--rounds 6] [--n 150]
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


def _orm_insert(obj, *, unique: tuple[str, ...] = (), update: tuple[str, ...] = ()) -> None:
    """The ORM's way of `insert_one`: bulk_create, with update_conflicts for an upsert."""
    if unique:
        names = [name.removesuffix("_id") for name in unique]
        type(obj).objects.bulk_create(
            [obj], update_conflicts=True, unique_fields=names, update_fields=update
        )
    else:
        type(obj).objects.bulk_create([obj])


def use(way: str) -> None:
    """Points the two callers at `core.sql.insert_one` ("insert_one") or at the ORM ("orm")."""
    from adjudication.services import labels
    from annotation.services import grading
    from core import sql

    chosen = sql.insert_one if way == "insert_one" else _orm_insert
    grading.insert_one = labels.insert_one = chosen


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
        slug = f"bench-insert-{way}-{index}"
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
    times: dict[str, list[tuple[float, float]]] = {way: [] for way in WAYS}
    for k in range(n):
        for way in order:
            campaign, user, items = work[way]
            use(way)
            cpu, wall = time.process_time(), time.perf_counter()
            grade_submit(item=items[k], expert=user, data=GradeInput.from_data(data))
            times[way].append((time.process_time() - cpu, time.perf_counter() - wall))
    for way, (campaign, _, _) in work.items():  # both ways wrote the same rows
        grades = Grade.objects.filter(item__campaign=campaign).order_by("sequence")
        assert list(grades.values_list("sequence", flat=True)) == list(range(1, n + 1)), way
        assert Item.objects.filter(campaign=campaign, final_label__isnull=False).count() == n
    return times


WAYS = ("insert_one", "orm")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=6, help="rounds (each interleaves both)")
    parser.add_argument("--n", type=int, default=150, help="submissions each way a round")
    args = parser.parse_args()
    original = connection.settings_dict["NAME"]
    connection.settings_dict.setdefault("TEST", {})["NAME"] = f"bench_{original}"
    connection.creation.create_test_db(verbosity=0, autoclobber=True, keepdb=False)
    cpu: dict[str, list[float]] = {way: [] for way in WAYS}
    wall: dict[str, list[float]] = {way: [] for way in WAYS}
    try:
        one_round(-1, 30)  # warm-up: caches, the statements' first plans
        for index in range(args.rounds):
            times = one_round(index, args.n)
            for way in WAYS:
                cpu[way].append(statistics.median(c for c, _ in times[way]) * 1000)
                wall[way].append(statistics.median(w for _, w in times[way]) * 1000)
            print(
                f"round {index}: insert_one {cpu['insert_one'][-1]:.3f} ms CPU "
                f"({wall['insert_one'][-1]:.3f} wall), ORM {cpu['orm'][-1]:.3f} ms CPU "
                f"({wall['orm'][-1]:.3f} wall) a submission",
                flush=True,
            )
    finally:
        use("insert_one")
        connections.close_all()
        connection.creation.destroy_test_db(original, verbosity=0)
    print(machine_line())
    for name, figures in (("CPU", cpu), ("wall", wall)):
        ours, orm = statistics.median(figures["insert_one"]), statistics.median(figures["orm"])
        print(
            f"submission without a draft, {name} time, median of {args.rounds} rounds x "
            f"{args.n} each way: insert_one {ours:.3f} ms, ORM bulk_create {orm:.3f} ms; "
            f"insert_one saves {100 * (orm - ours) / orm:.1f}%"
        )


if __name__ == "__main__":
    main()
