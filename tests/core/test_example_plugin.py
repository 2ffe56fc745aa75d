"""The example plugin's own tests, run as its author would: plugin pip-installed, `pytest` in its folder."""

import os
import subprocess
import sys

from paths import EXAMPLES

PLUGIN = EXAMPLES / "plugin-politeness"


def test_the_example_plugin_passes_its_own_tests(tmp_path):
    site = tmp_path / "site"
    subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--no-build-isolation", "--target",
                    str(site), str(PLUGIN)], check=True, capture_output=True, timeout=300)
    env = {k: v for k, v in os.environ.items() if k != "REWARDHUB_LOAD_PLUGINS"}
    env["PYTHONPATH"] = str(site)
    result = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "tests"],
                            cwd=PLUGIN, env=env, capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-2000:]
    assert "7 passed" in result.stdout  # 3 tests + 4 cases from politeness.cases.yaml
