"""Where things are, for tests in any folder below tests/: the tests folder and the project root."""

from pathlib import Path

TESTS = Path(__file__).resolve().parent
ROOT = TESTS.parent
EXAMPLES = ROOT / "examples"
