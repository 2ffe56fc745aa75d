"""Workers start however the caller was launched, and never re-run the caller's top level.

Each test runs one real program (the same top-level code, no ``if __name__ == "__main__":`` guard)
the way users launch training: a script, ``python -c``, stdin, a Jupyter kernel, after torch started
its threads, and every process of ``accelerate launch``. The program scores with ``math`` and an
isolated reward through worker processes, and its top level appends its pid to a file: exactly one
line per launched process proves no worker re-imported it.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import textwrap
from pathlib import Path

from jupyter_client.manager import start_new_kernel
from paths import TESTS as HERE
from test_workers import wait_gone

PROGRAM = textwrap.dedent(
    """
    import json, os
    {prefix}
    import rewardhub
    import core_rewards
    from rewardhub.workers import WorkerFunctionError, shared_pool

    with open(os.environ["LAUNCH_MARKS"], "a") as marks:  # the top level's side effect
        marks.write(f"{{os.getpid()}}\\n")

    workers = int(os.environ["LAUNCH_WORKERS"])
    math_reward = rewardhub.get("math", workers=workers)
    math_values = math_reward(
        prompts=["q"] * 4,
        completions=[r"\\boxed{{2(x+1)}}", r"\\boxed{{\\sqrt{{12}}}}", r"\\boxed{{2x+1}}", r"\\boxed{{42}}"],
        solution=["2x+2", r"2\\sqrt{{3}}", "2x+2", "42"],
    )
    isolated = core_rewards.t_isolated(timeout=10, workers=workers)
    isolated_values = isolated(prompts=["q"] * 2, completions=["42", "41"], solution=["42", "42"])

    @rewardhub.sample_reward(name="scorer_in_main", isolated=True)
    def scorer_in_main(text):
        return 1.0

    try:
        scorer_in_main()
        main_error = None
    except WorkerFunctionError as exc:
        main_error = str(exc)
    print("RESULT " + json.dumps({{
        "pid": os.getpid(), "math": math_values, "isolated": isolated_values, "main_error": main_error,
        "workers": shared_pool(workers).pids, "threads": len(os.listdir("/proc/self/task")),
        "rank": os.environ.get("LAUNCH_RANK"),
    }}), flush=True)
    """
)

TORCH_FIRST = """
import torch
torch.set_num_threads(2)
_x = torch.randn(384, 384)
_ = (_x @ _x).sum().item()
"""


ACCELERATE_FIRST = """
from accelerate import PartialState
state = PartialState(cpu=True)  # joins the gloo process group torchrun set up
os.environ["LAUNCH_RANK"] = f"{state.process_index}/{state.num_processes}"
"""


def program(prefix: str = "") -> str:
    return PROGRAM.format(prefix=prefix)


def environment(marks: Path, workers: int = 2) -> dict[str, str]:
    return {
        **os.environ,
        "PYTHONPATH": os.pathsep.join(filter(None, [str(HERE), os.environ.get("PYTHONPATH")])),
        "LAUNCH_MARKS": str(marks),
        "LAUNCH_WORKERS": str(workers),
    }


def results(output: str) -> list[dict]:
    return [json.loads(line[len("RESULT ") :]) for line in output.splitlines() if line.startswith("RESULT ")]


def assert_scored_once_each(found: list[dict], marks: Path, processes: int = 1) -> None:
    """Right verdicts in every process, and each process's top level ran exactly once."""
    assert len(found) == processes
    for result in found:
        assert result["math"] == [1.0, 1.0, 0.0, 1.0]
        assert result["isolated"] == [1.0, 0.0]
        assert "defined in __main__" in result["main_error"] and "move scorer_in_main into a module" in result["main_error"]
        assert result["workers"] and result["pid"] not in result["workers"]
    assert sorted(int(line) for line in marks.read_text().split()) == sorted(r["pid"] for r in found)


def run(args: list[str], marks: Path, *, stdin: str | None = None, workers: int = 2) -> list[dict]:
    done = subprocess.run(
        args, input=stdin, capture_output=True, text=True, timeout=240, env=environment(marks, workers),
        cwd=marks.parent,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    found = results(done.stdout)
    assert wait_gone([pid for result in found for pid in result["workers"]]) == []  # none outlives its program
    return found


def test_unguarded_script(tmp_path):
    script = tmp_path / "train.py"
    script.write_text(program())
    marks = tmp_path / "marks"
    assert_scored_once_each(run([sys.executable, str(script)], marks), marks)


def test_python_dash_c(tmp_path):
    marks = tmp_path / "marks"
    assert_scored_once_each(run([sys.executable, "-c", program()], marks), marks)


def test_python_reading_stdin(tmp_path):
    marks = tmp_path / "marks"
    assert_scored_once_each(run([sys.executable, "-"], marks, stdin=program()), marks)


def test_after_torch_started_its_threads(tmp_path):
    script = tmp_path / "train.py"
    script.write_text(program(TORCH_FIRST))
    marks = tmp_path / "marks"
    found = run([sys.executable, str(script)], marks)
    assert_scored_once_each(found, marks)
    assert found[0]["threads"] > 2  # torch's compute threads and our launcher thread were running


def test_each_process_of_accelerate_launch(tmp_path):
    script = tmp_path / "train.py"
    script.write_text(program(ACCELERATE_FIRST))
    marks = tmp_path / "marks"
    with socket.socket() as free:
        free.bind(("127.0.0.1", 0))
        port = free.getsockname()[1]
    # --multi_gpu picks accelerate's torchrun launcher; the processes then run on CPU (PartialState(cpu=True)).
    launcher = [
        sys.executable, "-m", "accelerate.commands.launch", "--multi_gpu", "--num_processes", "2", "--num_machines", "1",
        "--mixed_precision", "no", "--dynamo_backend", "no", "--main_process_port", str(port), str(script),
    ]  # fmt: skip
    found = run(launcher, marks, workers=1)
    assert_scored_once_each(found, marks, processes=2)
    assert sorted(r["rank"] for r in found) == ["0/2", "1/2"]


def test_jupyter_kernel(tmp_path):
    marks = tmp_path / "marks"
    manager, client = start_new_kernel(
        kernel_name="python3", env=environment(marks), cwd=str(tmp_path), startup_timeout=60
    )
    output: list[str] = []

    def collect(message: dict) -> None:
        if message["msg_type"] == "stream":
            output.append(message["content"]["text"])
        elif message["msg_type"] == "error":
            output.append("\n".join(message["content"]["traceback"]))

    try:
        reply = client.execute_interactive(program(), timeout=180, output_hook=collect)
        assert reply["content"]["status"] == "ok", "".join(output)
        found = results("".join(output))
        assert_scored_once_each(found, marks)
        assert found[0]["pid"] == manager.provisioner.pid
    finally:
        client.stop_channels()
        manager.shutdown_kernel(now=True)  # a SIGKILL: the workers go with the kernel
    assert wait_gone(found[0]["workers"]) == []
