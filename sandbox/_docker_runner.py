"""Runs one program inside a warm docker container: ``python3 -c <this file> [--root=DIR] [--reap]``,
with the request (JSON) on stdin; prints one JSON line with the result.

Stdlib only (it runs on the container's interpreter). Writes the program into a fresh directory,
compiles it if needed (the request carries the command), runs it with rlimits and a deadline with
output going to capped files, then, with ``--reap``, kills every other process of the sandbox user,
waits until the container's pid 1 has reaped them, and empties ``/work``, ``/tmp`` and ``/dev/shm``
so nothing of the run reaches the next one. ``--root=DIR`` puts the run's folder under DIR instead
of ``/work`` (so the script can be tested as a plain process, where nothing may be killed or wiped).
"""

import base64
import json
import math
import os
import resource
import shutil
import signal
import stat
import subprocess
import sys
import tempfile
import time

ENV = {"PATH": "/usr/local/bin:/usr/bin:/bin", "LANG": "C.UTF-8", "MALLOC_ARENA_MAX": "1"}
SCRATCH = ("/work", "/tmp", "/dev/shm")  # what runs may write, emptied after each one
THREAD_STACK_MB = 8
REAP_TIMEOUT = 5.0


def limits(req, cpu, memory_mb):
    """rlimits for the child (processes are capped by the container's pids limit, not RLIMIT_NPROC,
    which would count every process of uid 65534 on the host). RLIMIT_CORE 1: no core dump, even
    through a pipe core_pattern helper."""
    address_space = (memory_mb + req["max_processes"] * THREAD_STACK_MB) * 1024 * 1024

    def apply():
        for which, value in ((resource.RLIMIT_CPU, math.ceil(cpu) + 1),
                             (resource.RLIMIT_AS, address_space),
                             (resource.RLIMIT_FSIZE, req["disk_mb"] * 1024 * 1024),
                             (resource.RLIMIT_NOFILE, req["max_open_files"]),
                             (resource.RLIMIT_CORE, 1)):
            resource.setrlimit(which, (value, value))
    return apply


def execute(req, command, workdir, timeout, memory_mb):
    """Run ``command``; returns (exit code or None on timeout, stdout bytes, stderr bytes, truncated)."""
    limit = req["output_limit"]
    with open(os.path.join(workdir, ".stdin"), "w") as f:
        f.write(req["stdin"])
    with open(os.path.join(workdir, ".stdin")) as stdin, tempfile.TemporaryFile() as out, \
            tempfile.TemporaryFile() as err:
        process = subprocess.Popen(command, cwd=workdir, stdin=stdin, stdout=out, stderr=err,
                                   env=dict(ENV, HOME=workdir, TMPDIR="/tmp"), start_new_session=True,
                                   preexec_fn=limits(req, timeout, memory_mb))
        try:
            code = process.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            code = None
        try:
            os.killpg(process.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        process.wait()
        streams = []
        for f in (out, err):
            f.seek(0)
            streams.append(f.read(limit + 1))
    return code, streams[0][:limit], streams[1][:limit], [len(s) > limit for s in streams]


def prepare(req, workdir, result):
    """Write the program (compiling it if needed); the command to run, or ``None`` when ``result`` is final."""
    for name, content in req["files"].items():
        with open(os.path.join(workdir, name), "w") as f:
            f.write(content)
    if req["executable"]:
        with open(os.path.join(workdir, "main"), "wb") as f:
            f.write(base64.b64decode(req["build"]))
        os.chmod(os.path.join(workdir, "main"), 0o755)
        return ["./main"]
    with open(os.path.join(workdir, req["source"]), "w") as f:
        f.write(req["code"])
    if not req["compile"]:
        return [sys.executable, req["source"]]
    if shutil.which(req["compile"][0]) is None:
        result["error"] = f"{req['compile'][0]} is not installed in the container image"
        result["reason"] = "sandbox error: " + result["error"]
        return None
    code, _, err, _ = execute(req, req["compile"], workdir, req["compile_timeout"], req["compile_memory_mb"])
    if code != 0:
        result.update(exit_code=1, reason="compile error", stderr=err.decode(errors="replace"))
        return None
    if req["compile_only"]:
        with open(os.path.join(workdir, "main"), "rb") as f:
            result.update(exit_code=0, build=base64.b64encode(f.read()).decode())
        return None
    return ["./main"]


def main(reap, root):
    req = json.loads(sys.stdin.read())
    workdir = tempfile.mkdtemp(dir=root)
    result = {"exit_code": None, "timed_out": False, "reason": "", "stdout": "", "stderr": "",
              "stdout_truncated": False, "stderr_truncated": False}
    start = time.monotonic()
    try:
        command = prepare(req, workdir, result)
        if command is None:
            return result
        start = time.monotonic()
        code, out, err, truncated = execute(req, command, workdir, req["timeout"], req["memory_mb"] + 64)
        result.update(exit_code=code, timed_out=code is None, stdout=out.decode(errors="replace"),
                      stderr=err.decode(errors="replace"), stdout_truncated=truncated[0],
                      stderr_truncated=truncated[1], reason=reason(req, code, err, truncated))
        return result
    finally:
        result["duration"] = time.monotonic() - start
        if reap:
            result["leftover"] = not (kill_the_rest() and wipe(SCRATCH))
        else:
            shutil.rmtree(workdir, ignore_errors=True)


def reason(req, code, err, truncated):
    if code is None:
        return f"timeout after {req['timeout']:g} s"
    if truncated[0] or truncated[1]:
        return f"output limit exceeded ({req['output_limit']} bytes)"
    if b"MemoryError" in err[-2000:] or b"std::bad_alloc" in err[-2000:]:
        return "memory limit exceeded"
    if code < 0:
        return "killed by " + signal.Signals(-code).name
    if code > 0:
        return f"exit code {code}"
    return ""


def kill_the_rest():
    """Kill every other process of this user (never pid 1, never ourselves) and wait until pid 1 has
    reaped them: zombies would count against the pids limit of the next run. False if some remain."""
    mine = {1, os.getpid()}
    deadline = time.monotonic() + REAP_TIMEOUT
    while True:
        try:
            os.kill(-1, signal.SIGKILL)
        except ProcessLookupError:
            pass
        if not [pid for pid in os.listdir("/proc") if pid.isdigit() and int(pid) not in mine]:
            return True
        if time.monotonic() > deadline:
            return False
        time.sleep(0.005)


def wipe(folders):
    """Empty the folders runs may write; False if something could not be removed."""
    try:
        for folder in folders:
            for entry in os.scandir(folder):
                remove(entry)
    except (OSError, RecursionError):
        return False
    return True


def remove(entry):
    """Remove a file or a whole tree (a folder a run made unreadable is made readable again first)."""
    if not entry.is_dir(follow_symlinks=False):
        os.unlink(entry.path)
        return
    os.chmod(entry.path, stat.S_IRWXU)
    for child in os.scandir(entry.path):
        remove(child)
    os.rmdir(entry.path)


if __name__ == "__main__":
    root = next((arg.split("=", 1)[1] for arg in sys.argv[1:] if arg.startswith("--root=")), "/work")
    print(json.dumps(main("--reap" in sys.argv, root)))
