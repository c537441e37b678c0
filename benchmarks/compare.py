#!/usr/bin/env python3
"""The starting code and the current code side by side: `make bench BASE=<revision>`.

    DATABASE_URL=postgres://.../proofmark_bench python benchmarks/compare.py --base ffda3b9 [--quick]

The base revision is checked out as a git worktree in .run/bench-base/ (moved to the revision
when it is already there) with its own .venv from its own lock (the worktree's `make deps`: pip's
cache is reused, nothing is installed when its stamp is fresh). Then, for each benchmark
(bench_http.py, bench_import.py, bench_export.py: the figures issue 27 targets), this clone's
script runs against each tree in turn, alternating rounds (base, current, base, current, ...):
with that tree's interpreter and PROOFMARK_BENCH_TREE pointing at it (benchdb.ROOT), so the
Procfile's `web` and `worker`, `manage.py` and the data built in-process are that tree's; each
tree with its own database (DATABASE_URL for the current tree, DATABASE_URL + `_base` for the
base) and its own run folder (the embedded broker). Figures: per figure, the median of the
rounds and their spread (lowest to highest) for each tree, the change; with the machine, the date,
and each run's wall time, CPU time and load average before and after. `--write` adds the dated
section to benchmarks/RESULTS.md; the raw figures of every run stay in benchmarks/out/compare/
(`--report` renders the section again from them).

Full size: 2 rounds (`--rounds`); the export campaign is built and graded in a tree's first round
and reused after (`--skip-load`), the import's five-times-larger file (memory growth) is imported
in the first round only. `--quick`: each script's --quick size, one round.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import resource
import shlex
import statistics
import subprocess
import sys
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

from benchdb import HERE, OUT, TREE_VARIABLE, machine_words, python_speed_ms

CURRENT = HERE.parent
BASE_TREE = CURRENT / ".run" / "bench-base"
RESULTS = HERE / "RESULTS.md"
RUNS = OUT / "compare"
BENCHMARKS = ("http", "import", "export")
SMALL_ITEMS = "1,000"  # bench_http.py's small campaign


# --- The figures of each benchmark's JSON -----------------------------------------------------


@dataclass(frozen=True)
class Figure:
    name: str
    unit: str
    higher_is_better: bool


def _http(data: dict) -> dict[Figure, float]:
    """bench_http.py's --json: the rows issue 27 targets."""
    rows = data["results"]
    items = data["items"]
    big = {(r["phase"], r["clients"]): r for r in rows if r["campaign"] == "http-big"}
    small = next((r for r in rows if r["campaign"] == "http-small"), None)
    out: dict[Figure, float] = {}
    for phase in ("next + submit", "submit?next=1"):
        for clients in (4, 16):
            row = big.get((phase, clients))
            if row is None:
                continue
            out[Figure(f"`{phase}`, {clients} experts", "judgements/s", True)] = row["rate"]
            out[Figure(f"`{phase}`, {clients} experts: p95", "ms", False)] = row["p95_ms"]
            if phase == "submit?next=1":
                name = f"`submit?next=1`, {clients} experts: web CPU / judgement"
                out[Figure(name, "ms", False)] = row["web_cpu_ms"]
                if row.get("page_p95_ms") is not None:
                    name = f"grading page under `submit?next=1`, {clients} experts: p95"
                    out[Figure(name, "ms", False)] = row["page_p95_ms"]
    one_trip = big.get(("submit?next=1", 4))
    if small and one_trip:
        name = f"`submit?next=1`, 4 experts, {SMALL_ITEMS} items"
        out[Figure(name, "judgements/s", True)] = small["rate"]
        name = f"`submit?next=1`, 4 experts, {SMALL_ITEMS} items: web CPU / judgement"
        out[Figure(name, "ms", False)] = small["web_cpu_ms"]
        name = f"`submit?next=1`, 4 experts: {items:,} vs {SMALL_ITEMS} items"
        out[Figure(name, "%", True)] = (one_trip["rate"] / small["rate"] - 1) * 100
    for clients in (4, 16):
        row = big.get(("grading page", clients))
        if row is None:
            continue
        out[Figure(f"grading page, {clients} experts", "loads/s", True)] = row["rate"]
        out[Figure(f"grading page, {clients} experts: web CPU / load", "ms", False)] = row[
            "web_cpu_ms"
        ]
        out[Figure(f"grading page, {clients} experts: p95", "ms", False)] = row["p95_ms"]
    out[Figure("429s (throttled answers), all phases", "", False)] = sum(
        r["throttled"] for r in rows
    )
    return out


def _import(data: dict) -> dict[Figure, float]:
    """bench_import.py's --json."""
    median = data["command"]["median"]
    api = data["api"]
    out = {
        Figure("`import_corpus`, empty corpus", "proofs/s", True): median["first"]["proofs_per_s"],
        Figure("`import_corpus`, same file again", "proofs/s", True): median["again"][
            "proofs_per_s"
        ],
        Figure("API upload + worker, empty corpus", "proofs/s", True): api["proofs_per_s"],
        Figure("`import_corpus`: peak RSS", "MB", False): median["first"]["peak_mb"],
        Figure("API upload + worker: worker's peak RSS", "MB", False): api["worker_peak_mb"],
    }
    if "peak_growth_mb" in data:
        out[Figure("`import_corpus`: peak growth, file five times as large", "MB", False)] = data[
            "peak_growth_mb"
        ]
    return out


def _export(data: dict) -> dict[Figure, float]:
    """bench_export.py's --json."""
    out: dict[Figure, float] = {}
    names = {"proofbench jsonl": "ProofBench JSONL", "dv parquet": "D_v Parquet"}
    for key, figures in data["exports"].items():
        name = names.get(key, key)
        out[Figure(f"{name}, `export_dataset`", "rows/s", True)] = figures["command"]["rows_per_s"]
        out[Figure(f"{name}, API job + worker", "rows/s", True)] = figures["api"]["rows_per_s"]
        out[Figure(f"{name}, `export_dataset`: peak RSS", "MB", False)] = figures["command"][
            "peak_mb"
        ]
        out[Figure(f"{name}, API job: worker's peak RSS", "MB", False)] = figures["api"][
            "worker_peak_mb"
        ]
    return out


EXTRACT = {"http": _http, "import": _import, "export": _export}


# --- Runs ---------------------------------------------------------------------------------


@dataclass
class Tree:
    label: str  # "base" or "current"
    path: Path
    revision: str  # short commit (with "+changes" when the current tree has uncommitted ones)
    database_url: str


@dataclass
class Run:
    benchmark: str
    tree: str
    round: int
    json: Path
    started: str = ""
    seconds: float = 0.0
    cpu_seconds: float = 0.0  # of the script and the processes it waited for (not PostgreSQL)
    load_before: str = ""
    load_after: str = ""
    steal_seconds: float = 0.0  # CPU time the hypervisor gave other machines during the run
    loop_ms: float = 0.0  # the reference loop's CPU time just before the run (benchdb)
    failed: str = ""
    figures: dict = field(default_factory=dict)


def git(*words: str, cwd: Path = CURRENT) -> str:
    return subprocess.run(
        ["git", *words], cwd=cwd, check=True, capture_output=True, text=True
    ).stdout.strip()


def revision_of(path: Path) -> str:
    head = git("rev-parse", "--short", "HEAD", cwd=path)
    dirty = git("status", "--porcelain", "--untracked-files=no", cwd=path)
    return f"{head}+changes" if dirty else head


def base_tree(revision: str) -> Path:
    """The base revision in the .run/bench-base worktree, with its .venv and node_modules."""
    commit = git("rev-parse", "--verify", f"{revision}^{{commit}}")
    if (BASE_TREE / ".git").exists():
        git("checkout", "--quiet", "--force", "--detach", commit, cwd=BASE_TREE)
    else:
        git("worktree", "prune")
        git("worktree", "add", "--quiet", "--detach", str(BASE_TREE), commit)
    subprocess.run(["make", "--no-print-directory", "-C", str(BASE_TREE), "deps"], check=True)
    return BASE_TREE


def bytecode_compile(tree: Path) -> None:
    """Compiles the tree's sources and its .venv's packages to bytecode before the first round,
    as an install that has run once has them. uv installs without compiling and a merge changes
    sources, so the first run of a tree just set up paid the compiling alone: `export_dataset` of
    1,906 rows 1.07 -> 0.76 CPU-s once the tree's own modules were compiled, 2.4 -> 0.7 CPU-s for
    a .venv with no bytecode (2026-12-04); issue 35's ProofBench JSONL by command was 1,149 and
    2,815 rows/s in its two rounds of one tree. Errors (a package's Python 2 test file) are left
    to the run that imports the module, if any does."""
    subprocess.run(
        [
            str(tree / ".venv" / "bin" / "python"), "-m", "compileall", "-q", "-j", "0",
            "-x", re.escape(str(tree)) + r"/(node_modules|\.run|\.git)/", str(tree),
        ],
        check=False,
        stdout=subprocess.DEVNULL,
    )  # fmt: skip


def base_url(url: str) -> str:
    """The base tree's database: the current one's name + `_base` (query string kept)."""
    head, _, query = url.partition("?")
    return head.rstrip("/") + "_base" + (f"?{query}" if query else "")


def command_for(benchmark: str, tree: Tree, round_: int, *, quick: bool, json_path: Path):
    """The command line and environment of one run of `benchmark` against `tree`."""
    words = [
        str(tree.path / ".venv" / "bin" / "python"),
        str(HERE / f"bench_{benchmark}.py"),
        "--json",
        str(json_path),
    ]
    if quick:
        words.append("--quick")
    if benchmark == "import" and round_ > 1:
        words.append("--skip-large")  # memory growth: the first round's
    if benchmark == "export" and round_ > 1:
        words.append("--skip-load")  # the campaign this tree's first round graded
    env = dict(os.environ)
    env.update(
        {
            TREE_VARIABLE: str(tree.path),
            "DATABASE_URL": tree.database_url,
            "PROOFMARK_RUN_DIR": str(tree.path / ".run"),
        }
    )
    env.pop("VIRTUAL_ENV", None)
    return words, env


def load() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def stolen() -> float:
    """Seconds of CPU the hypervisor has given to other machines since boot, all cores (the
    steal column of /proc/stat; 0 where there is none)."""
    try:
        fields = Path("/proc/stat").read_text().split("\n", 1)[0].split()
        return int(fields[8]) / os.sysconf("SC_CLK_TCK")
    except (OSError, IndexError, ValueError):
        return 0.0


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def run_one(run: Run, words: list[str], env: dict, cwd: Path, extract=None) -> None:
    """Runs one benchmark process, timing it; its figures are `extract(json)` (by default the
    benchmark's own extractor here), keyed as figures_of keys them."""
    run.started = time.strftime("%Y-%m-%d %H:%M", time.gmtime())
    run.loop_ms = python_speed_ms()
    run.load_before = load()
    steal_before = stolen()
    start = time.perf_counter()
    cpu_before = _children_cpu()
    log = run.json.with_suffix(".log")
    with log.open("w") as out:
        result = subprocess.run(words, cwd=cwd, env=env, stdout=out, stderr=subprocess.STDOUT)
    run.seconds = time.perf_counter() - start
    run.cpu_seconds = _children_cpu() - cpu_before
    run.steal_seconds = stolen() - steal_before
    run.load_after = load()
    if result.returncode:
        tail = log.read_text(errors="replace").strip().splitlines()[-1:] or [""]
        run.failed = f"exit {result.returncode}: {tail[0][:200]} (see {log})"
        return
    run.figures = figures_of(run.benchmark, run.json, extract)


def figures_of(benchmark: str, path: Path, extract=None) -> dict[str, float]:
    """The figures of one run's JSON file, keyed by their Figure (as JSON, for the raw files)."""
    extract = extract or EXTRACT[benchmark]
    return {
        json.dumps([f.name, f.unit, f.higher_is_better]): value
        for f, value in extract(json.loads(path.read_text())).items()
    }


# --- The table ------------------------------------------------------------------------------


def _fmt(value: float) -> str:
    if abs(value) >= 100 or float(value).is_integer():
        return f"{value:,.0f}"
    return f"{value:.1f}"


def cell(values: list[float]) -> str:
    """The median of the rounds, and their spread when there are several."""
    if not values:
        return "failed"
    middle = _fmt(statistics.median(values))
    if len(values) == 1 or min(values) == max(values):
        return middle
    return f"{middle} ({_fmt(min(values))} to {_fmt(max(values))})"


def change(base: list[float], current: list[float], figure: Figure) -> str:
    if not base or not current:
        return ""
    before, after = statistics.median(base), statistics.median(current)
    if figure.unit == "%":
        return f"{after - before:+.0f} points"
    if before == 0:
        return "" if after == 0 else "new"
    ratio = after / before
    better = (ratio > 1) == figure.higher_is_better
    return f"{ratio - 1:+.0%}" + (" (better)" if better and abs(ratio - 1) >= 0.05 else "")


def table(runs: list[Run], trees: dict[str, Tree]) -> list[str]:
    """The figures of both trees, benchmark by benchmark: median (spread) and the change."""
    base, current = trees["base"], trees["current"]
    lines = []
    titles = {
        "http": "Grading over HTTP (`bench_http.py`)",
        "import": "Import (`bench_import.py`)",
        "export": "Export (`bench_export.py`)",
    }
    for benchmark in BENCHMARKS:
        mine = [r for r in runs if r.benchmark == benchmark]
        if not mine:
            continue
        keys: list[str] = []
        for run in mine:
            keys += [k for k in run.figures if k not in keys]
        lines += [
            "",
            f"{titles[benchmark]}",
            "",
            f"| figure | starting code `{base.revision}` | current `{current.revision}` | change |",
            "|---|---|---|---|",
        ]
        for key in keys:
            figure = Figure(*json.loads(key))
            values = {
                label: [r.figures[key] for r in mine if r.tree == label and key in r.figures]
                for label in ("base", "current")
            }
            unit = f" ({figure.unit})" if figure.unit and figure.unit != "%" else ""
            suffix = " (%)" if figure.unit == "%" else ""
            lines.append(
                f"| {figure.name}{unit}{suffix} | {cell(values['base'])} | "
                f"{cell(values['current'])} | {change(values['base'], values['current'], figure)} |"
            )
        failures = [r for r in mine if r.failed]
        lines += [f"- failed: {r.tree}, round {r.round}: {r.failed}" for r in failures]
    return lines


def section(runs: list[Run], trees: dict[str, Tree], quick: bool, machine: str) -> str:
    rounds = max((r.round for r in runs), default=0)
    lines = [
        "",
        f"## Starting code vs current, {runs[0].started if runs else '(no run)'} UTC "
        f"(`make bench BASE={trees['base'].revision}{' QUICK=1' if quick else ''}`)",
        "",
        f"Machine: {machine}. Each benchmark ran against both trees in turn, {rounds} round"
        f"{'s' if rounds != 1 else ''} each (starting code first in every round), each tree with "
        "its own database and its own `web` and `worker`; a cell is the median of the rounds "
        "with their spread (lowest to highest) in brackets. Change: the current code's median "
        "over the starting code's. The HTTP benchmark stops at any answer other than 200 or 429 "
        "(429s are counted), so every completed run had 0 errors.",
    ]
    lines += table(runs, trees)
    lines += [
        "",
        "Runs (start UTC; wall time; CPU time of the script, `web`, `worker` and the commands it "
        "ran, PostgreSQL not included; CPU time stolen by the hypervisor, all cores; the "
        "reference loop just before (benchdb.python_speed_ms: the machine's speed then); load "
        "average 1/5/15 min before -> after):",
        "",
    ]
    runs = [run for run in runs if run.started]
    for run in runs:
        status = f"{run.seconds:.0f} s, CPU {run.cpu_seconds:.0f} s"
        status = f"FAILED ({run.failed}), {status}" if run.failed else status
        lines.append(
            f"- `bench_{run.benchmark}.py`, round {run.round}, {run.tree}: {run.started}, "
            f"{status}, steal {run.steal_seconds:.0f} s, loop {run.loop_ms:.0f} ms, "
            f"load {run.load_before} -> {run.load_after}"
        )
    return "\n".join(lines) + "\n"


def save_runs(
    runs: list[Run], trees: dict[str, Tree], *, quick: bool, machine: str, path: Path | None = None
) -> None:
    """What `--report` renders again: the trees, and each run's times, load and result file."""
    state = {
        "quick": quick,
        "machine": machine,
        "trees": {label: {**asdict(tree), "path": str(tree.path)} for label, tree in trees.items()},
        "runs": [
            {**asdict(run), "json": str(run.json), "figures": {}} for run in runs if run.started
        ],
    }
    (path or RUNS / "runs.json").write_text(json.dumps(state, indent=1))


def load_runs(path: Path | None = None) -> tuple[list[Run], dict[str, Tree], bool, str]:
    """The runs saved by the last `make bench BASE=...`, their figures read from their files."""
    state = json.loads((path or RUNS / "runs.json").read_text())
    trees = {
        label: Tree(**{**tree, "path": Path(tree["path"])})
        for label, tree in state["trees"].items()
    }
    runs = [Run(**{**run, "json": Path(run["json"])}) for run in state["runs"]]
    for run in runs:
        if not run.failed:
            run.figures = figures_of(run.benchmark, run.json)
    return runs, trees, state["quick"], state["machine"]


def write_section(text: str, path: Path = RESULTS) -> None:
    """Adds the section to RESULTS.md before its history of older methods (or at the end)."""
    content = path.read_text()
    marker = "\n## Earlier runs"
    if marker in content:
        head, _, tail = content.partition(marker)
        content = head.rstrip("\n") + "\n" + text + marker + tail
    else:
        content = content.rstrip("\n") + "\n" + text
    path.write_text(content)


def machine_line() -> str:
    return f"{machine_words()}; PostgreSQL on the same machine"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--base", help="the starting code's revision")
    parser.add_argument("--quick", action="store_true", help="each script's --quick size")
    parser.add_argument("--rounds", type=int, help="rounds of each tree (default 2, --quick 1)")
    parser.add_argument(
        "--only", choices=BENCHMARKS, action="append", help="this benchmark (repeatable)"
    )
    parser.add_argument("--write", action="store_true", help="add the section to RESULTS.md")
    parser.add_argument("--dry-run", action="store_true", help="print the runs, run nothing")
    parser.add_argument(
        "--report", action="store_true", help="the section again from the last runs' files"
    )
    args = parser.parse_args()
    if args.report:
        text = section(*load_runs())
        print(text)
        if args.write:
            write_section(text)
        return 0
    if not args.base:
        parser.error("--base is required (the starting code's revision)")
    url = os.environ.get("DATABASE_URL", "")
    if not url.startswith(("postgres://", "postgresql://")):
        sys.exit("DATABASE_URL must point at PostgreSQL (make bench sets it).")
    rounds = args.rounds or (1 if args.quick else 2)
    commit = git("rev-parse", "--short", f"{args.base}^{{commit}}")
    trees = {
        "base": Tree("base", BASE_TREE, commit, base_url(url)),
        "current": Tree("current", CURRENT, revision_of(CURRENT), url),
    }
    benchmarks = args.only or list(BENCHMARKS)
    plan = [
        Run(benchmark, label, round_, RUNS / f"{benchmark}-{label}-{round_}.json")
        for benchmark in benchmarks
        for round_ in range(1, rounds + 1)
        for label in ("base", "current")
    ]
    if args.dry_run:
        print(f"base {commit}: worktree {BASE_TREE}, its own .venv (make -C {BASE_TREE} deps)")
        for run in plan:
            tree = trees[run.tree]
            words, _ = command_for(
                run.benchmark, tree, run.round, quick=args.quick, json_path=run.json
            )
            print(
                f"round {run.round} {run.tree}: {TREE_VARIABLE}={tree.path} "
                f"DATABASE_URL={tree.database_url} {shlex.join(words)}"
            )
        return 0
    base_tree(args.base)
    trees["base"].revision = revision_of(BASE_TREE)
    for tree in trees.values():
        bytecode_compile(tree.path)
    RUNS.mkdir(parents=True, exist_ok=True)
    machine = machine_line()
    started = time.perf_counter()
    for run in plan:
        tree = trees[run.tree]
        words, env = command_for(
            run.benchmark, tree, run.round, quick=args.quick, json_path=run.json
        )
        run.json.unlink(missing_ok=True)
        print(f"=== bench_{run.benchmark}.py, round {run.round}, {run.tree} ...", flush=True)
        run_one(run, words, env, tree.path)
        print(
            f"    {run.failed or f'{run.seconds:.0f} s, CPU {run.cpu_seconds:.0f} s'}; "
            f"steal {run.steal_seconds:.0f} s; loop {run.loop_ms:.0f} ms; load {run.load_before} -> "
            f"{run.load_after}",
            flush=True,
        )
        save_runs(plan, trees, quick=args.quick, machine=machine)
    text = section(plan, trees, args.quick, machine)
    print(text)
    print(f"(all runs: {time.perf_counter() - started:.0f} s)")
    (RUNS / "section.md").write_text(text)
    if args.write:
        write_section(text)
    return 1 if any(run.failed for run in plan) else 0


if __name__ == "__main__":
    sys.exit(main())
