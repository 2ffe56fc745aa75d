"""Issue 35: under the docker backend ``memory_mb`` bounds the run itself (not the run + disk_mb + the
runner's 64 MB), and a run's CPU seconds come back so a timeout is judged by the CPU it got, as the
local backend judges it. Against a real engine (docker_engine.py), on the session's cached image."""

from __future__ import annotations

import pytest
from docker_engine import docker_engine  # noqa: F401  (the session fixture)

import rewardhub
from rewardhub.sandbox import MemoryLimitWarning, Program
from rewardhub.sandbox.docker_backend import RUNNER_MB, DockerBackend
from rewardhub.sandbox.local import isolation_problem
from rewardhub.sandbox.program import STARVED_SHARE

# bytes touched at once (one object): what the run holds is what it asked for
HOLD = "x = b'\\x01' * ({} * 1024 * 1024)\nprint('held', len(x) >> 20)"
SPIN = "while True:\n    pass"
SLEEP = "import time\ntime.sleep(30)"
MEMORY_KILL = "memory limit exceeded (all the run's processes together; killed by the OOM killer)"


@pytest.fixture(scope="module")
def backend(docker_engine):  # noqa: F811
    """One container (so every run below reuses its runner), without the backend's own memory cap."""
    backend = DockerBackend(image=docker_engine.image, base_url=docker_engine.url, workers=1)
    yield backend
    backend.close()


def test_memory_mb_bounds_the_run_not_the_run_and_its_allowances(backend):
    """The container's limit was memory_mb + disk_mb (64) + the runner's 64 MB: 300 MB passed memory_mb=256."""
    over, within, again = backend.run_many([Program(HOLD.format(300), memory_mb=256, timeout=60),
                                            Program(HOLD.format(200), memory_mb=256, timeout=60),
                                            Program(HOLD.format(300), memory_mb=256, timeout=60)])
    slot = backend._slots[0]
    runner = slot.runner
    assert over.error is None and not over.killed_externally and over.stdout == ""
    assert over.reason == MEMORY_KILL and not over.ok
    assert (within.stdout, within.ok) == ("held 200\n", True)
    assert again.reason == MEMORY_KILL  # the same runner, the same limit: the OOM kill took the run, not it
    after = backend.run(Program("print('next')", memory_mb=256, timeout=60))
    assert (after.stdout, after.ok) == ("next\n", True)
    assert backend._slots == [slot] and slot.runner is runner  # neither the runner nor the container was replaced
    assert backend.memory_limit.startswith("the run's own memory_mb")
    assert slot.baseline is not None and slot.memory_mb < 256 + slot.baseline / 2**20 + RUNNER_MB


def test_files_a_run_writes_count_in_its_memory_and_do_not_cost_the_runner(backend):
    """tmpfs files are memory: a run writing past memory_mb is OOM-killed; the files it left (which no kill
    frees) are wiped before the runner needs memory again, and the next run sees none of them."""
    fill = ("import os\nfor folder in ('/work', '/tmp', '/dev/shm'):\n    for i in range(8):\n"
            "        with open(f'{folder}/f{i}', 'wb') as f:\n            f.write(b'x' * (16 << 20))\nprint('wrote all')")
    filled = backend.run(Program(fill, memory_mb=128, timeout=30))
    assert filled.error is None and filled.reason == MEMORY_KILL and filled.stdout == ""
    seen = backend.run(Program("import os\nprint(sorted(os.listdir('/tmp') + os.listdir('/dev/shm')))"))
    assert (seen.stdout, seen.ok) == ("[]\n", True)
    assert backend.run(Program(HOLD.format(100), memory_mb=128, timeout=60)).ok


def test_a_large_stdin_is_the_runners_not_the_runs_and_does_not_stay_in_the_runner(backend):
    """The runner holds a run's input (~3x) while it runs: that is added to the limit, not taken from
    memory_mb; and its heap gives it back after (glibc kept it: the baseline grew 17 -> 55 MB)."""
    read = "import sys\ndata = sys.stdin.buffer.read()\n" + HOLD
    stdin = "\u00e9" * (8 << 20)  # 16 MB of UTF-8
    backend.run(Program("pass"))
    before = backend._slots[0].baseline
    runs = [backend.run(Program(read.format(200), stdin=stdin, memory_mb=256, timeout=60)) for _ in range(3)]
    assert [(r.stdout, r.ok) for r in runs] == [("held 200\n", True)] * 3, [r.reason for r in runs]
    assert backend._slots[0].baseline <= before + (16 << 20)  # +8 MB here; 38 MB more before the fix
    over = backend.run(Program(read.format(300), stdin=stdin, memory_mb=256, timeout=60))
    assert over.reason == MEMORY_KILL


@pytest.mark.skipif(isolation_problem() is not None, reason=f"no local isolation: {isolation_problem()}")
def test_the_local_backend_counts_disk_mb_in_the_runs_memory():
    """The same programs on the local backend: its per-run cgroup holds memory_mb + disk_mb (processes and
    files together), so 300 MB passes memory_mb=256 with the default disk_mb of 64 and fails with disk_mb=8."""
    local = rewardhub.sandbox.get_backend("local", workers=1)
    loose, tight, within = local.run_many([Program(HOLD.format(300), memory_mb=256, timeout=60),
                                           Program(HOLD.format(300), memory_mb=256, disk_mb=8, timeout=60),
                                           Program(HOLD.format(200), memory_mb=256, disk_mb=8, timeout=60)])
    assert (loose.stdout, loose.ok) == ("held 300\n", True)
    assert tight.reason == MEMORY_KILL and within.ok


def test_without_memory_counters_the_limit_is_the_old_loose_one_and_says_so(docker_engine):  # noqa: F811
    """A container that cannot read its memory counters (here: a tmpfs over /sys/fs/cgroup) cannot tell the
    runner's baseline: the limit falls back to memory_mb + disk_mb + RUNNER_MB, with a warning saying so."""
    backend = DockerBackend(image=docker_engine.image, base_url=docker_engine.url, workers=1)
    backend.container_options["tmpfs"]["/sys/fs/cgroup"] = "size=1m"
    try:
        with pytest.warns(MemoryLimitWarning, match=f"loose: memory_mb \\+ disk_mb \\+ {RUNNER_MB} MB"):
            held = backend.run(Program(HOLD.format(300), memory_mb=256, timeout=60))
        assert (held.stdout, held.ok) == ("held 300\n", True)
        assert backend._slots[0].memory_mb == 256 + 64 + RUNNER_MB and backend.memory_limit.startswith("loose")
    finally:
        backend.close()


# ----- CPU-judged timeouts ---------------------------------------------------------------------------------
def test_docker_runs_report_their_cpu_seconds(backend):
    spin, sleep, done = backend.run_many([Program(SPIN, timeout=1), Program(SLEEP, timeout=1),
                                          Program("x = sum(range(3_000_000))\nprint(x)", timeout=30)])
    assert spin.timed_out and spin.reason == "timeout after 1 s" and spin.cpu_seconds > 0
    assert spin.starved(1) == (spin.cpu_seconds < STARVED_SHARE)  # idle machine: ~1 s of CPU, the program's doing
    assert sleep.timed_out and sleep.cpu_seconds < STARVED_SHARE and sleep.starved(1)  # blocked: no CPU used
    assert done.ok and done.cpu_seconds > 0


@pytest.mark.filterwarnings("ignore::rewardhub.errors.RewardNotScoringWarning")  # both abstain on a loaded machine
def test_the_code_reward_judges_docker_timeouts_by_cpu_as_it_does_local_ones(docker_engine):  # noqa: F811
    """A busy loop past its timeout is the completion's 0.0 "timeout"; a sleep past it used no CPU, which looks
    the same as a run a busy machine starved, so it abstains (outcome "timeout"), as on the local backend."""
    reward = rewardhub.get("code", backend="docker", timeout=1.0,
                           backend_options={"base_url": docker_engine.url, "image": docker_engine.image, "workers": 1})
    tests = [[{"input": "", "output": "1"}]] * 2
    spin, sleep = reward.evaluate(["p"] * 2, [f"```python\n{code}\n```" for code in (SPIN, SLEEP)], tests=tests).scores
    if spin.value is None:  # the busy loop itself was starved (a loaded machine): abstained, with the CPU it got
        assert spin.outcome == "timeout" and "of cpu used" in spin.reason
    else:
        assert spin.value == 0.0 and "timeout" in spin.reason
    assert sleep.value is None and sleep.outcome == "timeout" and "of cpu used" in sleep.reason
