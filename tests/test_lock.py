"""The lock file that `make deps` installs from covers every requirement of pyproject.toml, each
pinned with hashes (after a change to the requirements, `make lock` was run)."""

import re
import tomllib

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

from tests.conftest import ROOT


def test_the_lock_pins_every_requirement_with_hashes():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    wanted = [
        Requirement(r) for r in project["dependencies"] + project["optional-dependencies"]["dev"]
    ]
    lock = (ROOT / "requirements.lock").read_text()
    pins: dict[str, list[str]] = {}  # a universal lock may pin one version per Python range
    for name, version in re.findall(r"^([A-Za-z0-9_.\-]+)==([^\s;]+)", lock, re.MULTILINE):
        pins.setdefault(canonicalize_name(name), []).append(version)
    missing = [str(r) for r in wanted if canonicalize_name(r.name) not in pins]
    assert not missing, f"run `make lock`: {missing} not in requirements.lock"
    unmet = [
        str(r)
        for r in wanted
        if not all(r.specifier.contains(v) for v in pins[canonicalize_name(r.name)])
    ]
    assert not unmet, f"run `make lock`: the pinned versions do not meet {unmet}"
    entries = re.split(r"\n(?=[A-Za-z0-9])", lock.split("\n", 2)[2])
    assert all("--hash=sha256:" in entry for entry in entries if "==" in entry)


def _pins(path) -> dict[str, str]:
    text = path.read_text()
    return {
        canonicalize_name(name): version
        for name, version in re.findall(r"^([A-Za-z0-9_.\-]+)==([^\s;]+)", text, re.MULTILINE)
    }


def test_the_run_lock_is_the_runtime_part_of_the_lock_with_the_same_pins():
    """`make run` installs requirements-run.lock: every runtime requirement, each at the version
    `make test` installs, with hashes, and none of the dev extras that pull only in tests."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    full, run = _pins(ROOT / "requirements.lock"), _pins(ROOT / "requirements-run.lock")
    runtime = {canonicalize_name(Requirement(r).name) for r in project["dependencies"]}
    assert runtime <= set(run), f"run `make lock`: {sorted(runtime - set(run))} missing"
    assert {name: v for name, v in run.items() if full.get(name) != v} == {}, "run `make lock`"
    dev_only = {
        canonicalize_name(Requirement(r).name) for r in project["optional-dependencies"]["dev"]
    }
    assert not (dev_only - runtime) & set(run), "a dev extra is in the run lock"
    text = (ROOT / "requirements-run.lock").read_text()
    entries = re.split(r"\n(?=[A-Za-z0-9])", text.split("\n", 2)[2])
    assert all("--hash=sha256:" in entry for entry in entries if "==" in entry)
