"""Runs one program inside a warm docker container: ``python3 -c <this file> REQUEST_JSON --reap-user``.

``--root=DIR`` puts the run's directory elsewhere than ``/work``; without ``--reap-user`` nothing
is killed after the run (so the script can be tested outside a container).

Stdlib only (it runs on the container's interpreter). Writes the program into a fresh directory,
compiles it if needed, runs it with rlimits and a deadline with output going to capped files, then
kills every other process of the sandbox user so nothing outlives the run, and prints one JSON line.
"""

import base64
import json
import math
import os
import resource
import shutil
import signal
import subprocess
import sys
import tempfile
import time

ENV = {"PATH": "/usr/local/bin:/usr/bin:/bin", "LANG": "C.UTF-8"}


def limits(req, cpu, memory_mb):
    """rlimits for the child (processes are capped by the container's pids limit, not RLIMIT_NPROC,
    which would count every process of uid 65534 on the host)."""
    def apply():
        for which, value in ((resource.RLIMIT_CPU, math.ceil(cpu) + 1),
                             (resource.RLIMIT_AS, memory_mb * 1024 * 1024),
                             (resource.RLIMIT_FSIZE, req["disk_mb"] * 1024 * 1024),
                             (resource.RLIMIT_NOFILE, req["max_open_files"]),
                             (resource.RLIMIT_CORE, 0)):
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
                                   env=dict(ENV, HOME=workdir, TMPDIR=workdir), start_new_session=True,
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


def main():
    req = json.loads(sys.argv[1])
    root = next((arg.split("=", 1)[1] for arg in sys.argv[2:] if arg.startswith("--root=")), "/work")
    workdir = tempfile.mkdtemp(dir=root)
    start = time.monotonic()
    result = {"exit_code": None, "timed_out": False, "reason": "", "stdout": "", "stderr": "",
              "stdout_truncated": False, "stderr_truncated": False}
    try:
        for name, content in req["files"].items():
            with open(os.path.join(workdir, name), "w") as f:
                f.write(content)
        command = [sys.executable, "main.py"]
        if req["executable"]:
            with open(os.path.join(workdir, "main"), "wb") as f:
                f.write(base64.b64decode(req["build"]))
            os.chmod(os.path.join(workdir, "main"), 0o755)
            command = ["./main"]
        elif req["compile"]:
            with open(os.path.join(workdir, req["source"]), "w") as f:
                f.write(req["code"])
            if shutil.which(req["compile"][0]) is None:
                result["error"] = f"{req['compile'][0]} is not installed in the container image"
                result["reason"] = "sandbox error: " + result["error"]
                return result
            code, _, err, _ = execute(req, req["compile"], workdir, req["compile_timeout"], req["compile_memory_mb"])
            if code != 0:
                result.update(exit_code=1, reason="compile error", stderr=err.decode(errors="replace"))
                return result
            if req["compile_only"]:
                with open(os.path.join(workdir, "main"), "rb") as f:
                    result.update(exit_code=0, build=base64.b64encode(f.read()).decode())
                return result
            command, start = ["./main"], time.monotonic()
        else:
            with open(os.path.join(workdir, "main.py"), "w") as f:
                f.write(req["code"])
        code, out, err, truncated = execute(req, command, workdir, req["timeout"], req["memory_mb"] + 64)
        result.update(exit_code=code, timed_out=code is None, stdout=out.decode(errors="replace"),
                      stderr=err.decode(errors="replace"), stdout_truncated=truncated[0],
                      stderr_truncated=truncated[1])
        if code is None:
            result["reason"] = f"timeout after {req['timeout']:g} s"
        elif truncated[0] or truncated[1]:
            result["reason"] = f"output limit exceeded ({req['output_limit']} bytes)"
        elif b"MemoryError" in err[-2000:] or b"std::bad_alloc" in err[-2000:]:
            result["reason"] = "memory limit exceeded"
        elif code < 0:
            result["reason"] = "killed by " + signal.Signals(-code).name
        elif code > 0:
            result["reason"] = f"exit code {code}"
        return result
    finally:
        result["duration"] = time.monotonic() - start
        if "--reap-user" in sys.argv and os.getuid() != 0:
            try:  # every other process of the container's sandbox user (never pid 1, never ourselves)
                os.kill(-1, signal.SIGKILL)
            except ProcessLookupError:
                pass
        shutil.rmtree(workdir, ignore_errors=True)


if __name__ == "__main__":
    print(json.dumps(main()))
