"""The allowed arrows between apps (docs/ARCHITECTURE.md): an app imports only the apps below it.

    problems <- rubrics <- annotation <- adjudication <- graders <- estimation <- exports
    <- calibration <- webhooks
    core, jobs, llm: below every app; they import no app (jobs and llm may use core).
    config: settings and wiring, which nothing imports; it may use core, and its URL modules
    wire every app's URLs.

Every import statement in every module of the apps (tests aside) is read, including imports
inside functions: an import written late to dodge a cycle is still an arrow. No two modules
import each other (through others) at module level. And the page is true to the tree: every
path and name it gives exists.
"""

import ast
import importlib
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
LAYERS = [
    "problems",
    "rubrics",
    "annotation",
    "adjudication",
    "graders",
    "estimation",
    "exports",
    "calibration",
    "webhooks",
]
FOUNDATION = {"core": set(), "jobs": {"core"}, "llm": {"core"}, "config": {"core"}}
URL_MODULES = {"config/urls.py", "config/api_urls.py"}  # config wires the apps' URLs
APPS = [*FOUNDATION, *LAYERS]


def allowed(source: str, target: str) -> bool:
    if source in FOUNDATION:
        return target in FOUNDATION[source]
    if target == "config":  # the wiring: the settings are read through django.conf
        return False
    if target in FOUNDATION:
        return True
    return LAYERS.index(target) < LAYERS.index(source)


def imported_apps(path: Path) -> set[str]:
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names = [node.module]
        else:
            continue
        found.update(name.split(".")[0] for name in names if name.split(".")[0] in APPS)
    return found


def arrows_against_the_table() -> list[str]:
    wrong = []
    for app in APPS:
        for path in sorted((ROOT / app).rglob("*.py")):
            name = path.relative_to(ROOT).as_posix()
            if name in URL_MODULES:
                continue
            for target in sorted(imported_apps(path) - {app}):
                if not allowed(app, target):
                    wrong.append(f"{name} imports {target}")
    return wrong


def test_every_import_between_apps_points_down():
    assert arrows_against_the_table() == []


def test_the_check_sees_an_upward_import(tmp_path):
    module = tmp_path / "upward.py"
    module.write_text("def late():\n    from exports.writers import write\n", encoding="utf-8")
    assert imported_apps(module) == {"exports"}
    assert not allowed("problems", "exports") and not allowed("jobs", "problems")
    assert allowed("exports", "problems") and allowed("problems", "core")
    assert not allowed("problems", "config") and not allowed("core", "config")


ARCHITECTURE = ROOT / "docs" / "ARCHITECTURE.md"
RUNTIME = (".run/",)  # folders `make run` creates, named by the page but not in the tree


def named_in_architecture() -> tuple[set[str], set[str], list[tuple[str, str]]]:
    """What docs/ARCHITECTURE.md names in backticks (outside its code blocks): paths in the tree,
    dotted names of an app (`core.http.page_or_fragment`), and a name beside its module
    (`annotation/slots.py` `open_work_sql`)."""
    text = re.sub(r"```.*?```", "", ARCHITECTURE.read_text(encoding="utf-8"), flags=re.S)
    ticks = re.findall(r"`([^`\n]+)`", text)
    paths = {tick for tick in ticks if re.fullmatch(r"[\w.-]+(/[\w.-]+)+/?", tick)}
    dotted = {
        tick
        for tick in ticks
        if re.fullmatch(r"[a-z_]+(\.[A-Za-z_]+)+", tick) and tick.split(".")[0] in APPS + LAYERS
    }
    beside = re.findall(r"`([\w/]+\.py)` `(\w+)`", text)
    return paths, dotted, beside


def resolves(dotted: str) -> bool:
    """A module and its attributes, a model by its label (`jobs.SweepTurn`), or a Celery task's
    name (`jobs.sweep`)."""
    from django.apps import apps

    parts = dotted.split(".")
    for cut in range(len(parts), 0, -1):
        try:
            target = importlib.import_module(".".join(parts[:cut]))
        except ImportError:
            continue
        try:
            for name in parts[cut:]:
                target = getattr(target, name)
            return True
        except AttributeError:
            break
    if len(parts) == 2 and parts[1][:1].isupper():
        try:
            return apps.get_model(dotted) is not None
        except LookupError:
            pass
    tasks = ROOT / parts[0] / "tasks.py"
    return tasks.exists() and f'name="{dotted}"' in tasks.read_text(encoding="utf-8")


def test_every_path_and_name_the_architecture_gives_exists():
    paths, dotted, beside = named_in_architecture()
    assert len(paths) > 50 and len(dotted) > 10 and len(beside) > 10  # the page still names them
    assert [p for p in sorted(paths) if not p.startswith(RUNTIME) and not (ROOT / p).exists()] == []
    assert [name for name in sorted(dotted) if not resolves(name)] == []
    assert [
        (path, name)
        for path, name in beside
        if not re.search(rf"\b{name}\b", (ROOT / path).read_text(encoding="utf-8"))
    ] == []


def module_imports() -> dict[str, set[str]]:
    """Each module of the apps and the modules of the apps it imports at module level (a package
    that imports its own modules, as `annotation/models/__init__.py` does, is no cycle)."""
    modules = {}
    for app in APPS:
        for path in (ROOT / app).rglob("*.py"):
            name = ".".join(path.relative_to(ROOT).with_suffix("").parts)
            modules[name.removesuffix(".__init__")] = path
    graph = {}
    for name, path in modules.items():
        found = set()
        for node in ast.parse(path.read_text(encoding="utf-8")).body:
            if isinstance(node, ast.Import):
                targets = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                targets = [node.module, *(f"{node.module}.{alias.name}" for alias in node.names)]
            else:
                continue
            found.update(target for target in targets if target in modules and target != name)
        graph[name] = found
    return graph


def test_no_import_cycle_between_modules():
    graph = module_imports()
    cycles = []
    for start in graph:
        seen, todo = set(), list(graph[start])
        while todo:
            module = todo.pop()
            if module == start:
                cycles.append(start)
                break
            if module not in seen:
                seen.add(module)
                todo.extend(graph[module])
    assert cycles == []
