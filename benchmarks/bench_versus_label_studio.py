#!/usr/bin/env python3
"""Proofmark and Label Studio side by side, on this machine and the same corpus:
`make bench COMPARE=label-studio` (and the headline of `make bench`).

    DATABASE_URL=postgres://.../proofmark_bench python benchmarks/bench_versus_label_studio.py \
        [--quick] [--rounds 2] [--write]

Each round runs, one after the other and never at once: Label Studio 1.23.x
(benchmarks/label_studio_round.py: installed from the package index into a venv of its own, served by
gunicorn with 2 sync workers on PostgreSQL), then Proofmark as the Procfile serves it
(bench_http.py, bench_import.py, bench_export.py, each a whole process with its own `web` and
`worker`), then PostgreSQL's COPY of the same rows into one table (the floor an import can
reach). Every system reads benchmarks/corpus.py's corpus (20,000 proofs; `--quick` 2,000-3,000).
The rows, each with both systems' medians over the rounds, their spread and the ratio:
- import: the proofs as tasks (Label Studio's import API) against the API upload run by the
  worker (Proofmark), and Proofmark against COPY (target: within 1.5x of COPY);
- judgements at 1, 4 and 16 clients: an annotation through Label Studio's token API against
  `submit?next=1` (target: 10x, and p95 under 100 ms at 16);
- the page an expert loads: Label Studio's task GET (what its labelling page fetches) against
  Proofmark's grading page, 4 experts (target: 10x);
- export of every labelled row: Label Studio's JSON snapshot against the API's ProofBench JSONL
  job (target: 10x).
With the machine (its reference loop: benchdb.python_speed_ms), each run's load average and
time; `--write` puts the section at the head of benchmarks/RESULTS.md's figures; the raw files of
every run stay in benchmarks/out/versus/ (`--report` renders the section again from them).
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import statistics
import sys
import time
from dataclasses import asdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from benchdb import HERE, OUT, ROOT, machine_words  # noqa: E402
from compare import Figure, Run, cell, run_one, write_section  # noqa: E402
from corpus import corpus_file  # noqa: E402

RUNS = OUT / "versus"
PYTHON = sys.executable
JUDGEMENT_CLIENTS = (1, 4, 16)


# --- The figures of each run's JSON ----------------------------------------------------------


def _label_studio(data: dict) -> dict[Figure, float]:
    results = data["results"]
    out = {Figure("import", "proofs/s", True): results["import"]["proofs_per_s"]}
    for clients in JUDGEMENT_CLIENTS:
        row = results[f"judgements {clients}"]
        out[Figure(f"judgements, {clients} clients", "/s", True)] = row["rate"]
        out[Figure(f"judgements, {clients} clients: p95", "ms", False)] = row["p95_ms"]
        out[Figure(f"judgements, {clients} clients: web CPU each", "ms", False)] = row["web_cpu_ms"]
    out[Figure("page an expert loads, 4 clients: p50", "ms", False)] = results["task page"][
        "p50_ms"
    ]
    out[Figure("page an expert loads, 4 clients: p95", "ms", False)] = results["task page"][
        "p95_ms"
    ]
    out[Figure("export of the labelled rows", "rows/s", True)] = results["export"]["rows_per_s"]
    return out


def _http(data: dict) -> dict[Figure, float]:
    rows = [r for r in data["results"] if r["campaign"] == "http-big"]
    out: dict[Figure, float] = {}
    for row in rows:
        if row["phase"] == "submit?next=1" and row["clients"] in JUDGEMENT_CLIENTS:
            clients = row["clients"]
            out[Figure(f"judgements, {clients} clients", "/s", True)] = row["rate"]
            out[Figure(f"judgements, {clients} clients: p95", "ms", False)] = row["p95_ms"]
            out[Figure(f"judgements, {clients} clients: web CPU each", "ms", False)] = row[
                "web_cpu_ms"
            ]
        if row["phase"] == "grading page" and row["clients"] == 4:
            out[Figure("page an expert loads, 4 clients: p50", "ms", False)] = row["p50_ms"]
            out[Figure("page an expert loads, 4 clients: p95", "ms", False)] = row["p95_ms"]
    return out


def _import(data: dict) -> dict[Figure, float]:
    return {Figure("import", "proofs/s", True): data["api"]["proofs_per_s"]}


def _export(data: dict) -> dict[Figure, float]:
    api = data["exports"]["proofbench jsonl"]["api"]
    return {Figure("export of the labelled rows", "rows/s", True): api["rows_per_s"]}


def _copy(data: dict) -> dict[Figure, float]:
    return {Figure("import", "proofs/s", True): data["rows_per_s"]}


EXTRACT = {
    "label_studio": _label_studio,
    "http": _http,
    "import": _import,
    "export": _export,
    "copy": _copy,
}
SYSTEM = {"label_studio": "label-studio", "copy": "copy"}  # the others are Proofmark's


# --- PostgreSQL's COPY of the same rows --------------------------------------------------------


def copy_baseline(rows: int, json_path: Path) -> None:
    """COPY of the corpus's rows (problem, statement, reference, generator, proof, metadata)
    into one table, from a CSV file written beforehand (not timed): psql's `\\copy`, done by
    psycopg. Writes {"rows", "seconds", "rows_per_s"} to `json_path`."""
    import dj_database_url
    import psycopg

    source = corpus_file(rows, folder=OUT)
    table = OUT / f"{source.stem}.csv"
    if not table.exists():
        with source.open(encoding="utf-8") as lines, table.open("w", newline="") as out:
            writer = csv.writer(out)
            for line in lines:
                row = json.loads(line)
                writer.writerow(
                    [row["problem_id"], row["problem"], row["reference_solution"],
                     row["generator"], row["model_solution"], json.dumps(row["metadata"])]
                )  # fmt: skip
    config = dj_database_url.parse(os.environ["DATABASE_URL"])
    with psycopg.connect(
        host=config["HOST"] or "127.0.0.1", port=config["PORT"] or 5432,
        user=config["USER"], dbname=config["NAME"], autocommit=True,
    ) as connection:  # fmt: skip
        connection.execute(
            "DROP TABLE IF EXISTS bench_copy_baseline; CREATE TABLE bench_copy_baseline ("
            "problem_id text, statement text, reference text, generator text, proof text, "
            "metadata jsonb)"
        )
        started = time.perf_counter()
        copying = "COPY bench_copy_baseline FROM STDIN WITH (FORMAT csv)"
        with (
            connection.transaction(),
            connection.cursor() as cursor,
            cursor.copy(copying) as copy,
            table.open("rb") as data,
        ):
            while block := data.read(1 << 20):
                copy.write(block)
        seconds = time.perf_counter() - started
        connection.execute("DROP TABLE bench_copy_baseline")
    json_path.write_text(
        json.dumps({"rows": rows, "seconds": seconds, "rows_per_s": rows / seconds})
    )


# --- Runs ------------------------------------------------------------------------------------


def plan_of(rounds: int, quick: bool) -> list[Run]:
    """Label Studio, then Proofmark's three, then COPY, round after round."""
    order = ("label_studio", "http", "import", "export", "copy")
    return [
        Run(name, SYSTEM.get(name, "proofmark"), round_, RUNS / f"{name}-{round_}.json")
        for round_ in range(1, rounds + 1)
        for name in order
    ]


def command_for(run: Run, *, quick: bool) -> list[str]:
    if run.benchmark == "copy":
        rows = 2000 if quick else 20000
        return [PYTHON, __file__, "--copy-only", str(rows), "--copy-json", str(run.json)]
    script = (
        "label_studio_round.py" if run.benchmark == "label_studio" else f"bench_{run.benchmark}.py"
    )
    words = [PYTHON, str(HERE / script), "--json", str(run.json)]
    if quick:
        words.append("--quick")
    if run.benchmark == "import" and run.round > 1:
        words.append("--skip-large")  # memory growth: the first round's
    if run.benchmark == "export" and run.round > 1:
        words.append("--skip-load")  # the campaign the first round graded
    return words


def env_for(run: Run) -> dict:
    """The run's environment: the export's database is its own, so that the campaign its first
    round graded is still there for the next (`--skip-load`): the import empties the corpus of
    the database it is given, which took that campaign with it (a second round's export found
    no final labels, 2026-12-06)."""
    env = dict(os.environ)
    if run.benchmark == "export":
        env["DATABASE_URL"] = env["DATABASE_URL"] + "_export"
    return env


# --- The table -------------------------------------------------------------------------------

# (figure name, target: the ratio Proofmark must reach over Label Studio, or a bound)
TARGETS = {
    "import": "as far past Label Studio as COPY allows",
    "judgements, 1 clients": 10,
    "judgements, 4 clients": 10,
    "judgements, 16 clients": 10,
    "judgements, 16 clients: p95": "Proofmark under 100 ms",
    "page an expert loads, 4 clients: p50": 10,
    "export of the labelled rows": 10,
}


def ratio(theirs: list[float], ours: list[float], figure: Figure) -> float | None:
    """How many times better Proofmark's median is than Label Studio's (a rate over a rate, a
    time under a time)."""
    if not theirs or not ours:
        return None
    a, b = statistics.median(theirs), statistics.median(ours)
    if a == 0 or b == 0:
        return None
    return b / a if figure.higher_is_better else a / b


def verdict(figure: Figure, times: float | None, ours: list[float], copy: list[float]) -> str:
    target = TARGETS.get(figure.name)
    if target is None:
        return ""
    if isinstance(target, int | float):
        if times is None:
            return f"{target}x: not measured"
        return f"{target}x: {'met' if times >= target else 'missed'}"
    if figure.name.endswith("p95"):
        if not ours:
            return "under 100 ms: not measured"
        return f"under 100 ms: {'met' if statistics.median(ours) < 100 else 'missed'}"
    if copy and ours:
        share = statistics.median(ours) / statistics.median(copy)
        return (
            f"within 1.5x of COPY: {'met' if share >= 1 / 1.5 else 'missed'} ({share:.0%} of COPY)"
        )
    return ""


def table(runs: list[Run]) -> list[str]:
    keys: list[str] = []
    for run in runs:
        keys += [k for k in run.figures if k not in keys and run.tree != "copy"]

    def values(key: str, tree: str) -> list[float]:
        return [r.figures[key] for r in runs if r.tree == tree and key in r.figures]

    lines = [
        "| figure | Label Studio | Proofmark | Proofmark vs Label Studio | target |",
        "|---|---|---|---|---|",
    ]
    for key in sorted(keys, key=lambda k: _order(json.loads(k)[0])):
        figure = Figure(*json.loads(key))
        theirs, ours = values(key, "label-studio"), values(key, "proofmark")
        times = ratio(theirs, ours, figure)
        unit = f" ({figure.unit})" if figure.unit else ""
        lines.append(
            f"| {figure.name}{unit} | {cell(theirs)} | {cell(ours)} | "
            f"{'' if times is None else f'{times:.1f}x'} | "
            f"{verdict(figure, times, ours, values(key, 'copy'))} |"
        )
        if figure.name == "import":
            copy = values(key, "copy")
            lines.append(f"| PostgreSQL COPY of the same rows{unit} | | {cell(copy)} | | floor |")
    return lines


def _order(name: str) -> tuple[int, str]:
    for n, start in enumerate(("import", "judgements", "page", "export")):
        if name.startswith(start):
            return n, name
    return 9, name


def section(runs: list[Run], quick: bool, machine: str) -> str:
    rounds = max((r.round for r in runs), default=0)
    started = next((r.started for r in runs if r.started), "(no run)")
    lines = [
        "",
        f"## Proofmark and Label Studio side by side, {started} UTC "
        f"(`make bench COMPARE=label-studio{' QUICK=1' if quick else ''}`)",
        "",
        f"Machine: {machine}; PostgreSQL on the same machine. {rounds} round"
        f"{'s' if rounds != 1 else ''}, each Label Studio then Proofmark then COPY, never at "
        "once, on benchmarks/corpus.py's corpus; a cell is the median of the rounds with their "
        "spread in brackets. Label Studio 1.23.2 served by gunicorn with 2 sync workers on "
        "PostgreSQL, as Proofmark's Procfile serves Proofmark. Judgements: Label Studio's "
        "annotation API against Proofmark's `submit?next=1`; the page: Label Studio's task GET "
        "against Proofmark's grading page; export: Label Studio's JSON snapshot of the annotated "
        "tasks against Proofmark's ProofBench JSONL export job.",
        "",
        *table(runs),
        "",
        "Runs (start UTC; wall time; the reference loop just before; load average before -> after):",
        "",
    ]
    for run in runs:
        if not run.started:
            continue
        status = f"FAILED ({run.failed})" if run.failed else f"{run.seconds:.0f} s"
        lines.append(
            f"- {run.benchmark}, round {run.round}: {run.started}, {status}, loop "
            f"{run.loop_ms:.0f} ms, load {run.load_before} -> {run.load_after}"
        )
    return "\n".join(lines) + "\n"


def save(runs: list[Run], quick: bool, machine: str) -> None:
    state = {
        "quick": quick,
        "machine": machine,
        "runs": [{**asdict(r), "json": str(r.json), "figures": {}} for r in runs if r.started],
    }
    (RUNS / "runs.json").write_text(json.dumps(state, indent=1))


def restore() -> tuple[list[Run], bool, str]:
    from compare import figures_of

    state = json.loads((RUNS / "runs.json").read_text())
    runs = [Run(**{**r, "json": Path(r["json"])}) for r in state["runs"]]
    for run in runs:
        if not run.failed:
            run.figures = figures_of(run.benchmark, run.json, EXTRACT[run.benchmark])
    return runs, state["quick"], state["machine"]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="each script's --quick size, 1 round")
    parser.add_argument("--rounds", type=int, help="rounds (default 2, --quick 1)")
    parser.add_argument("--write", action="store_true", help="put the section in RESULTS.md")
    parser.add_argument("--report", action="store_true", help="the section from the last runs")
    parser.add_argument("--dry-run", action="store_true", help="print the runs, run nothing")
    parser.add_argument("--copy-only", type=int, metavar="ROWS", help=argparse.SUPPRESS)
    parser.add_argument("--copy-json", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.copy_only:
        copy_baseline(args.copy_only, args.copy_json)
        return 0
    if args.report:
        text = section(*restore())
        print(text)
        if args.write:
            write_section(text)
        return 0
    if not os.environ.get("DATABASE_URL", "").startswith(("postgres://", "postgresql://")):
        sys.exit("DATABASE_URL must point at PostgreSQL (make bench sets it).")
    plan = plan_of(args.rounds or (1 if args.quick else 2), args.quick)
    if args.dry_run:
        for run in plan:
            print(f"round {run.round} {run.tree}: {' '.join(command_for(run, quick=args.quick))}")
        return 0
    RUNS.mkdir(parents=True, exist_ok=True)
    machine = machine_words()
    for run in plan:
        run.json.unlink(missing_ok=True)
        print(f"=== {run.benchmark}, round {run.round} ...", flush=True)
        run_one(run, command_for(run, quick=args.quick), env_for(run), ROOT,
                EXTRACT[run.benchmark])  # fmt: skip
        print(f"    {run.failed or f'{run.seconds:.0f} s'}; load {run.load_after}", flush=True)
        save(plan, args.quick, machine)
    text = section(plan, args.quick, machine)
    print(text)
    (RUNS / "section.md").write_text(text)
    if args.write:
        write_section(text)
    return 1 if any(run.failed for run in plan) else 0


if __name__ == "__main__":
    sys.exit(main())
