"""``rewardhub new-plugin NAME``: write a plugin package whose own tests pass the moment it is made.

The package has a pyproject with the ``rewardhub`` entry point, the ``register_rewards`` hook, a
per-sample scorer, a YAML case file (collected by rewardhub's pytest plugin), tests that run the
contract kit, a README and a GitHub Actions workflow. The author replaces the scorer and its cases.
"""

from __future__ import annotations

import argparse
import re
import string
import sys
from pathlib import Path

from .errors import RewardhubError
from .hookspecs import hookimpl

__all__ = [
    "CASES",
    "INIT",
    "PYPROJECT",
    "README",
    "REWARD",
    "ScaffoldError",
    "TESTS",
    "WORKFLOW",
    "plugin_files",
    "register_commands",
    "reward_name",
    "write_plugin",
]

_NAME = re.compile(r"[a-z][a-z0-9]*(?:[_-][a-z0-9]+)*")


class ScaffoldError(RewardhubError):
    """The plugin cannot be written: a bad name, a name taken, or a folder that already exists."""


PYPROJECT = """\
[build-system]
requires = ["setuptools>=68"]
build-backend = "setuptools.build_meta"

[project]
name = "$distribution"
version = "0.1.0"
description = "A rewardhub plugin: the $reward reward."
readme = "README.md"
requires-python = ">=3.11"
dependencies = [$requirement]

[project.optional-dependencies]
test = ["pytest>=8"]

# rewardhub finds the plugin through this entry point: no code change, no import in the user's script.
[project.entry-points.rewardhub]
$reward = "$module"

[tool.setuptools]
packages = ["$module"]

[tool.pytest.ini_options]
testpaths = ["tests"]
"""

INIT = '''\
"""The $distribution plugin: registers the ``$reward`` reward with rewardhub."""

import rewardhub

from .reward import $function


@rewardhub.hookimpl
def register_rewards(register):
    register($function)
'''

REWARD = '''\
"""The ``$reward`` reward: replace the scorer with yours (its docstring's first line is its description).

A scorer gets the completion's text (chat completions are turned into text for you), then dataset
columns by name (``solution`` here), then its params as keyword-only arguments (what a config's
``params:`` may set). It returns a value, or ``(value, reason)``: the reason shows in TRL's logs.
"""

import re

import rewardhub

CANDIDATE = re.compile(r"[-+]?\\w+(?:[.,]\\w+)*")  # a line that is one bare answer: 12, -3.5, Paris


@rewardhub.sample_reward(name="$reward")
def $function(text: str, solution: str, *, case_sensitive: bool = False) -> tuple[float, str]:
    """1.0 when the completion's last non-empty line is the reference answer (column ``solution``)."""
    lines = [line.strip() for line in text.strip().splitlines() if line.strip()]
    answer = lines[-1] if lines else ""
    expected = str(solution).strip()
    if not case_sensitive:
        answer, expected = answer.lower(), expected.lower()
    if not answer:
        return 0.0, "empty completion"
    if len(lines) > 1 and all(map(CANDIDATE.fullmatch, lines[-2:])) and lines[-2].lower() != lines[-1].lower():
        return 0.0, f"candidates one per line ({lines[-2][:20]!r}, {lines[-1][:20]!r}): no one answer"
    if answer == expected:
        return 1.0, "the last line is the reference answer"
    return 0.0, f"the last line is {answer[:60]!r}, expected {expected[:60]!r}"
'''

CASES = """\
# Offline verifier cases: pytest collects this file (rewardhub's pytest plugin), `rewardhub check` runs it.
reward: $reward
cases:
  - name: the last line is the answer
    completion: "Let me think.\\n42"
    columns: {solution: "42"}
    expect: 1.0
  - name: case does not matter by default
    completion: "Paris"
    columns: {solution: "paris"}
    expect: 1.0
  - name: a wrong answer
    completion: "41"
    columns: {solution: "42"}
    expect: 0.0
  - name: the answer said earlier does not count
    completion: "42\\nor maybe 41"
    columns: {solution: "42"}
    expect: 0.0
  - name: candidates one per line are no answer
    completion: "41\\n42"
    columns: {solution: "42"}
    expect: 0.0
"""

TESTS = '''\
"""The $reward reward tested the way trainers call it (after `pip install -e ".[test]"`, run `pytest`)."""

import rewardhub
from rewardhub.testing import check_contract


def test_found_through_its_entry_point():
    spec = {r["name"]: r for r in rewardhub.list_rewards()}["$reward"]
    assert spec["source"] == "$distribution"
    assert spec["params"]["case_sensitive"]["default"] is False


def test_values_and_reasons_as_trl_sees_them():
    reward = rewardhub.get("$reward")
    completions = ["Step 1...\\n42", "42\\nno, 43", [{"role": "assistant", "content": "42"}]]
    result = reward.evaluate(None, completions, solution=["42", "42", "42"])
    assert result.values == [1.0, 0.0, 1.0]
    assert result.reasons[1] == "the last line is 'no, 43', expected '42'"
    assert rewardhub.get("$reward", case_sensitive=True)(None, ["PARIS"], solution=["Paris"]) == [0.0]


def test_contract():
    report = check_contract(rewardhub.get("$reward"), columns={"solution": "10"}, correct_completion="Thinking...\\n10")
    assert report.ok, report
'''

WORKFLOW = """\
name: tests
on: [push, pull_request]
jobs:
  test:
    runs-on: ubuntu-latest
    strategy:
      matrix:
        python-version: ["3.11", "3.12"]
    steps:
      - uses: actions/checkout@v4
      - uses: actions/setup-python@v5
        with:
          python-version: $${{ matrix.python-version }}
      - run: python -m pip install -e ".[test]"
      - run: python -m pytest -q
"""

README = """\
# $distribution

A [rewardhub](https://pypi.org/project/rewardhub/) plugin providing the `$reward` reward.

```bash
pip install -e ".[test]"
pytest                      # the tests, the contract kit and the cases in tests/$reward.cases.yaml
rewardhub list              # `$reward` is listed, from $distribution
```

Use it in a config like any built-in reward:

```yaml
rewards:
  - name: $reward
    weight: 1.0
    params: {case_sensitive: false}
```
"""


def plugin_files(reward: str, requirement: str = '"rewardhub"') -> dict[str, str]:
    """The package's files (path -> text) for a reward named ``reward``."""
    names = {"reward": reward, "function": reward, "module": f"rewardhub_{reward}",
             "distribution": f"rewardhub-{reward.replace('_', '-')}", "requirement": requirement}
    files = {
        "pyproject.toml": PYPROJECT, "README.md": README, f"{names['module']}/__init__.py": INIT,
        f"{names['module']}/reward.py": REWARD, f"tests/{reward}.cases.yaml": CASES, f"tests/test_{reward}.py": TESTS,
        ".github/workflows/tests.yml": WORKFLOW, ".gitignore": "__pycache__/\n*.egg-info/\nbuild/\ndist/\n.venv/\n",
    }
    return {path: string.Template(text).substitute(names) for path, text in files.items()}


def reward_name(name: str) -> str:
    """The reward's registry name for ``name`` (hyphens become underscores); refuses unusable or taken names."""
    if not _NAME.fullmatch(name):
        raise ScaffoldError(f"plugin name {name!r}: use lowercase letters, digits, '-' or '_', starting with a letter "
                            f"(e.g. 'politeness' or 'citation-check')")
    reward = name.replace("-", "_")
    from ._registry import registry

    if reward in registry.names():
        raise ScaffoldError(f"a reward named {reward!r} is already installed ({registry.spec(reward).source}); "
                            f"pick another name")
    return reward


def write_plugin(name: str, folder: Path | None = None) -> Path:
    """Write the plugin package for ``name`` into ``folder`` (default ``./rewardhub-NAME``), which must not exist."""
    reward = reward_name(name)
    folder = Path(folder) if folder is not None else Path.cwd() / f"rewardhub-{reward.replace('_', '-')}"
    if folder.exists() and any(folder.iterdir()):
        raise ScaffoldError(f"{str(folder)!r} already exists and is not empty: choose another --dir")
    from . import __version__

    release = re.match(r"\d+\.\d+", __version__)
    requirement = f'"rewardhub>={release.group(0)}"' if release and __version__ != "0+unknown" else '"rewardhub"'
    for path, text in plugin_files(reward, requirement).items():
        target = folder / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text, encoding="utf-8")
    return folder


def _new_plugin(args: argparse.Namespace) -> int:
    try:
        folder = write_plugin(args.name, Path(args.dir) if args.dir else None)
    except ScaffoldError as exc:
        print(f"rewardhub new-plugin: {exc}", file=sys.stderr)
        return 2
    print(f"wrote {folder}\nnext: cd {folder} && pip install -e '.[test]' && pytest")
    return 0


@hookimpl
def register_commands(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser("new-plugin", help="scaffold a plugin package (entry point, scorer, cases, tests, CI)")
    parser.add_argument("name", help="the reward's name, e.g. politeness (the package is rewardhub-NAME)")
    parser.add_argument("--dir", help="where to write it (default: ./rewardhub-NAME); must not exist or be empty")
    parser.set_defaults(handler=_new_plugin)
