"""Lists the top-level function names defined in more than one module of the apps (one name per
function: issue 35), private names included, so that each can be judged: the same rule written
twice, two meanings under one name, or a convention (`ready`, `setUp`) that means the same."""

from __future__ import annotations

import ast
import sys
from collections import defaultdict
from pathlib import Path

APPS = [
    "accounts",
    "adjudication",
    "annotation",
    "calibration",
    "core",
    "estimation",
    "exports",
    "graders",
    "jobs",
    "llm",
    "problems",
    "rubrics",
    "config",
]


def top_level_defs(root: Path) -> dict[str, list[str]]:
    found: dict[str, list[str]] = defaultdict(list)
    for app in APPS:
        for path in sorted((root / app).rglob("*.py")):
            if "migrations" in path.parts:
                continue
            tree = ast.parse(path.read_text(), filename=str(path))
            for node in tree.body:
                if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                    found[node.name].append(f"{path.relative_to(root)}:{node.lineno}")
    return {name: places for name, places in found.items() if len(places) > 1}


def main() -> None:
    root = Path(sys.argv[1]) if len(sys.argv) > 1 else Path(__file__).resolve().parent.parent
    for name, places in sorted(top_level_defs(root).items()):
        print(f"{name}: {', '.join(places)}")


if __name__ == "__main__":
    main()
