"""The side-by-side benchmark harness (`make bench BASE=...`, benchmarks/compare.py) without
measuring anything: the tree option points the benchmarks at another project tree, the table is
built from result files of both trees, and the Makefile runs the harness."""

import json
import os
import subprocess
import sys

import pytest

from tests.conftest import ROOT

BENCHMARKS = ROOT / "benchmarks"
sys.path.append(str(BENCHMARKS))

import benchdb  # noqa: E402
import compare  # noqa: E402


def fake_tree(folder):
    """A project tree of its own: a manage.py and a settings module Django can start with."""
    (folder / "config").mkdir(parents=True)
    (folder / "manage.py").write_text("")
    (folder / "config" / "__init__.py").write_text("")
    (folder / "config" / "settings.py").write_text(
        "SECRET_KEY = 'x'\nINSTALLED_APPS = []\nDATABASES = {}\n"
    )
    return folder


def test_the_tree_option_points_the_benchmarks_at_another_tree(tmp_path):
    tree = fake_tree(tmp_path / "base")
    assert benchdb.project_tree(str(tree)) == tree.resolve()
    assert benchdb.project_tree("") == ROOT
    with pytest.raises(SystemExit, match="no manage.py"):
        benchdb.project_tree(str(tmp_path))
    # A script's in-process code comes from that tree: it is first on sys.path.
    probe = (
        "import benchdb, sys; benchdb.setup_django(); import config; "
        "print(benchdb.ROOT, sys.path[0], config.__file__, sep='\\n')"
    )
    env = {**os.environ, benchdb.TREE_VARIABLE: str(tree)}
    env.pop("DJANGO_SETTINGS_MODULE", None)
    out = subprocess.run(
        [sys.executable, "-c", probe], cwd=BENCHMARKS, env=env, capture_output=True, text=True
    )
    assert out.returncode == 0, out.stderr
    root, first, settings = out.stdout.split()
    assert root == first == str(tree.resolve())
    assert settings == str(tree.resolve() / "config" / "__init__.py")


def http_result(rate: float, web_cpu: float) -> dict:
    """bench_http.py's --json, the phases the issue targets."""

    def row(phase, clients, campaign="http-big", **extra):
        return {
            "phase": phase, "clients": clients, "campaign": campaign, "rate": rate,
            "p50_ms": 50.0, "p95_ms": 50.0, "web_cpu_ms": web_cpu, "throttled": 0, "page_p95_ms": None, **extra,
        }  # fmt: skip

    rows = [row("next + submit", n) for n in (4, 16)]
    rows += [row("submit?next=1", n, page_p95_ms=70.0) for n in (1, 4, 16)]
    rows += [row("grading page", n) for n in (4, 16)]
    rows.append(row("submit?next=1", 4, "http-small", page_p95_ms=60.0))
    return {"machine": "test", "items": 20000, "results": rows}


def test_the_table_puts_both_trees_side_by_side(tmp_path):
    trees = {
        "base": compare.Tree("base", tmp_path, "ffda3b9", "postgres:///b_base"),
        "current": compare.Tree("current", ROOT, "abc1234", "postgres:///b"),
    }
    runs = []
    for round_, (base_rate, current_rate) in enumerate([(100, 300), (120, 340)], start=1):
        for tree, rate, cpu in (("base", base_rate, 7.0 + round_), ("current", current_rate, 3.0)):
            path = tmp_path / f"http-{tree}-{round_}.json"
            path.write_text(json.dumps(http_result(rate, cpu)))
            run = compare.Run("http", tree, round_, path, started="2026-11-27 07:00")
            run.load_before, run.load_after = "1.00", "2.00"
            run.figures = compare.figures_of("http", path)
            runs.append(run)
    text = compare.section(runs, trees, False, "2 cores")
    compare.save_runs(runs, trees, quick=False, machine="2 cores", path=tmp_path / "runs.json")
    assert compare.section(*compare.load_runs(tmp_path / "runs.json")) == text  # --report
    lines = text.splitlines()
    row = next(line for line in lines if line.startswith("| `submit?next=1`, 16 experts (j"))
    assert row == "| `submit?next=1`, 16 experts (judgements/s) | 110 (100 to 120) | 320 (300 to 340) | +191% (better) |"  # fmt: skip
    cpu = next(line for line in lines if "16 experts: web CPU / judgement" in line)
    assert "| 8.5 (8 to 9) | 3 | -65% (better) |" in cpu
    for figure in (
        "`next + submit`, 4 experts (judgements/s)",
        "`next + submit`, 16 experts: p95 (ms)",
        "`submit?next=1`, 4 experts: 20,000 vs 1,000 items (%)",
        "grading page, 16 experts: web CPU / load (ms)",
        "grading page, 16 experts: p95 (ms)",
    ):
        assert any(line.startswith(f"| {figure} |") for line in lines), figure
    assert "`bench_http.py`, round 2, current: " in text and "load 1.00 -> 2.00" in text

    results = tmp_path / "RESULTS.md"
    results.write_text("# Results\n\n## Figures\n\nNone yet.\n\n## Earlier runs\n\nold\n")
    compare.write_section(text, results)
    written = results.read_text()
    assert written.index("## Starting code vs current") < written.index("## Earlier runs")


def test_make_bench_with_a_base_runs_the_harness_alternating():
    dry = subprocess.run(
        ["make", "-n", "bench", "BASE=ffda3b9", "QUICK=1", "ROUNDS=3", "WRITE=1"],
        cwd=ROOT, capture_output=True, text=True, check=True,
    )  # fmt: skip
    assert "benchmarks/compare.py --base ffda3b9 --quick --rounds 3 --write" in dry.stdout
    env = {**os.environ, "DATABASE_URL": "postgres://postgres@127.0.0.1:5432/proofmark_bench"}
    plan = subprocess.run(
        [sys.executable, str(BENCHMARKS / "compare.py"), "--base", "HEAD", "--dry-run"],
        cwd=ROOT, env=env, capture_output=True, text=True, check=True,
    ).stdout.splitlines()[1:]  # fmt: skip
    http = [line for line in plan if "bench_http.py" in line]
    assert [line.split(":")[0] for line in http] == [
        "round 1 base", "round 1 current", "round 2 base", "round 2 current",
    ]  # fmt: skip
    assert all("proofmark_bench_base " in line for line in http[::2])
    assert all(f"{benchdb.TREE_VARIABLE}={ROOT} " in line for line in http[1::2])
    assert len(plan) == 12 and all("--json" in line for line in plan)


def test_every_benchmark_takes_what_make_bench_passes_it():
    """`make bench` runs every bench_*.py through run_all.py, `make bench QUICK=1` with --quick:
    a script without it failed the whole run (two did, unnoticed, until a clean clone ran it)."""
    for script in sorted(BENCHMARKS.glob("bench_*.py")):
        usage = subprocess.run(
            [sys.executable, str(script), "--help"], capture_output=True, text=True, check=True
        ).stdout
        assert "--quick" in usage, script.name


def test_the_side_by_side_with_label_studio_gives_ratios_and_says_each_target_met_or_missed(
    tmp_path,
):
    """bench_versus_label_studio.py's table from result files: Label Studio's median, Proofmark's,
    the ratio (a rate over a rate, a time under a time) and the target's verdict."""
    import bench_versus_label_studio as versus

    def ls(rate, page_ms):
        per = {"rate": rate, "p50_ms": 100.0, "p95_ms": 300.0, "web_cpu_ms": 90.0}
        return {"machine": "test", "items": 20000, "version": "1.23.2", "results": {
            "import": {"proofs_per_s": 700.0},
            **{f"judgements {n}": per for n in (1, 4, 16)},
            "task page": {"p50_ms": page_ms, "p95_ms": 2 * page_ms},
            "export": {"rows_per_s": 260.0},
        }}  # fmt: skip

    proofmark = {
        "http": http_result(80.0, 13.0),
        "import": {"api": {"proofs_per_s": 2500.0}},
        "export": {"exports": {"proofbench jsonl": {"api": {"rows_per_s": 4000.0}}}},
        "copy": {"rows": 20000, "seconds": 4.0, "rows_per_s": 5000.0},
    }
    runs = []
    for round_, (rate, page_ms) in enumerate([(7.0, 250.0), (9.0, 260.0)], start=1):
        for name, data in (("label_studio", ls(rate, page_ms)), *proofmark.items()):
            path = tmp_path / f"{name}-{round_}.json"
            path.write_text(json.dumps(data))
            run = compare.Run(name, versus.SYSTEM.get(name, "proofmark"), round_, path, started="x")
            run.figures = compare.figures_of(name, path, versus.EXTRACT[name])
            runs.append(run)
    lines = versus.section(runs, False, "2 cores").splitlines()

    def row(name):
        return next(line for line in lines if line.startswith(f"| {name} "))

    # 80 judgements/s against a median of 8: 10x, met; the page 50 ms (p50) against 255: 5.1x
    assert row("judgements, 4 clients (/s)") == "| judgements, 4 clients (/s) | 8 (7 to 9) | 80 | 10.0x | 10x: met |"  # fmt: skip
    assert row("page an expert loads, 4 clients: p50").endswith("| 5.1x | 10x: missed |")
    assert row("judgements, 16 clients: p95").endswith("| under 100 ms: met |")
    assert "within 1.5x of COPY: met (50% of COPY)" not in row("import (proofs/s)")
    assert row("import (proofs/s)").endswith("within 1.5x of COPY: missed (50% of COPY) |")
    assert row("export of the labelled rows").endswith("| 15.4x | 10x: met |")
    assert "| PostgreSQL COPY of the same rows (proofs/s) | | 5,000 | | floor |" in lines


def test_make_bench_starts_with_the_side_by_side_and_compare_runs_it_alone():
    dry = subprocess.run(
        ["make", "-n", "bench", "COMPARE=label-studio", "QUICK=1", "WRITE=1"],
        cwd=ROOT, capture_output=True, text=True, check=True,
    )  # fmt: skip
    assert "benchmarks/bench_versus_label_studio.py --quick  --write" in dry.stdout
    import run_all

    assert run_all.HEADLINE == "bench_versus_label_studio.py"
    assert (BENCHMARKS / run_all.HEADLINE).exists()
