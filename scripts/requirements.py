"""Prints the Python requirements from pyproject.toml (runtime and dev), one per line.

The project itself is not installed: it runs from its folder, so several checkouts can share
one environment without shadowing each other.
"""

import tomllib
from pathlib import Path

project = tomllib.loads((Path(__file__).resolve().parent.parent / "pyproject.toml").read_text())[
    "project"
]
for requirement in project["dependencies"] + project["optional-dependencies"]["dev"]:
    print(requirement)
