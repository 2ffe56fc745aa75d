"""The warm zygote: one per pool slot, started as ``python -I -S _zygote.py CONFIG REQ_FD RESP_FD``.

It isolates itself once (private mount/net/uts namespaces, a read-only tmpfs root holding only the
interpreter and system libraries), imports common modules, then loops: for each request header it
forks a *runner*, which reads the program (the zygote never sees it, so no run inherits an earlier
one's data), enters fresh mount/pid/ipc namespaces with a private tmpfs work dir, and forks the
*program* as pid 1 of that pid namespace under the slot's own uid with rlimits. The runner enforces
the wall-clock deadline and output cap; killing pid 1 makes the kernel kill everything it started.

Stdlib only: it runs outside the rewardhub package (``-I -S``) and before the host is hidden.
"""

from __future__ import annotations

import gc
import importlib
import json
import math
import os
import resource
import select
import signal
import struct
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import _isolate as iso  # noqa: E402  (found through the line above, before the host is hidden)

FRAME = struct.Struct("<II")  # kind, length
READY, RESULT, DONE, FAILED = 0, 1, 2, 3
RUN_TMPFS = "/.run"
WORK = "/work"
MOUNTPOINTS = ("work", "tmp", "proc", ".run", "dev", "etc")
DEVICES = ("null", "zero", "full", "random", "urandom")
DEV_LINKS = {"fd": "/proc/self/fd", "stdin": "/proc/self/fd/0", "stdout": "/proc/self/fd/1",
             "stderr": "/proc/self/fd/2"}
CLEAN_ENV = {"PATH": "/usr/local/bin:/usr/bin:/bin", "HOME": WORK, "LANG": "C.UTF-8", "TMPDIR": "/tmp"}
COMPILERS = {"c": ("gcc", "main.c", ["-O2", "-std=gnu17"]), "cpp": ("g++", "main.cpp", ["-O2", "-std=gnu++17"])}
COMPILE_FAILED, RUNNING, EXITED = b"C", b"R", b"X"


def send(fd: int, kind: int, body: bytes) -> None:
    data = FRAME.pack(kind, len(body)) + body
    while data:
        data = data[os.write(fd, data):]


def read_exact(fd: int, n: int) -> bytes:
    chunks, left = [], n
    while left:
        chunk = os.read(fd, min(left, 1 << 20))
        if not chunk:
            raise EOFError
        chunks.append(chunk)
        left -= len(chunk)
    return b"".join(chunks)


# ----- one-time isolation of the zygote --------------------------------------------------------------
def build_root(cfg: dict) -> None:
    """Enter private namespaces and pivot into a read-only tmpfs holding only what programs need."""
    iso.unshare(iso.CLONE_NEWNS | iso.CLONE_NEWNET | iso.CLONE_NEWUTS | iso.CLONE_NEWIPC)
    iso.sethostname("sandbox")
    iso.mount(None, "/", None, iso.MS_REC | iso.MS_PRIVATE)
    root = cfg["root"]
    iso.mount("tmpfs", root, "tmpfs", iso.MS_NOSUID | iso.MS_NODEV, "size=1m,mode=0755")
    for name in MOUNTPOINTS:
        os.makedirs(f"{root}/{name}", exist_ok=True)
    os.chmod(f"{root}/tmp", 0o1777)
    for path, target in cfg["symlinks"].items():
        os.makedirs(os.path.dirname(root + path), exist_ok=True)
        os.symlink(target, root + path)
    for path in cfg["readonly"]:
        mountpoint = root + path
        if os.path.isdir(path):
            os.makedirs(mountpoint, exist_ok=True)
        else:
            os.makedirs(os.path.dirname(mountpoint), exist_ok=True)
            open(mountpoint, "w").close()
        iso.bind_readonly(path, mountpoint)
    iso.mount("tmpfs", f"{root}/dev", "tmpfs", iso.MS_NOSUID | iso.MS_NOEXEC, "size=64k,mode=0755")
    for name in DEVICES:
        open(f"{root}/dev/{name}", "w").close()
        iso.bind_readonly(f"/dev/{name}", f"{root}/dev/{name}", allow_devices=True)
    for name, target in DEV_LINKS.items():
        os.symlink(target, f"{root}/dev/{name}")
    os.makedirs(f"{root}/dev/shm")
    with open(f"{root}/etc/passwd", "w") as f:
        f.write(f"root:x:0:0::/:/bin/false\nsandbox:x:{cfg['uid']}:{cfg['gid']}::{WORK}:/bin/false\n")
    with open(f"{root}/etc/group", "w") as f:
        f.write(f"root:x:0:\nsandbox:x:{cfg['gid']}:\n")
    iso.mount(None, f"{root}/dev", None, iso.MS_REMOUNT | iso.MS_RDONLY | iso.MS_NOSUID | iso.MS_NOEXEC)
    iso.pivot_root(root)
    iso.mount(None, "/", None, iso.MS_REMOUNT | iso.MS_RDONLY | iso.MS_NOSUID | iso.MS_NODEV)


def preload(cfg: dict) -> None:
    sys.path.remove(os.path.dirname(os.path.abspath(__file__)))
    sys.path.extend(cfg["sys_path"])
    for name in cfg["preload"]:
        try:
            importlib.import_module(name)
        except Exception:  # a missing optional module only costs the programs that need it
            pass


def serve(cfg: dict, req_fd: int, resp_fd: int) -> None:
    """Fork a runner per request header; report each runner's exit status after reaping it."""
    while True:
        try:
            (length,) = struct.unpack("<Q", read_exact(req_fd, 8))
        except EOFError:  # the host went away: nothing may outlive it
            return
        pid = os.fork()
        if pid == 0:
            code = 1
            try:
                runner(cfg, req_fd, resp_fd, length)
                code = 0
            finally:
                os._exit(code)
        _, status = os.waitpid(pid, 0)
        send(resp_fd, DONE, struct.pack("<i", status))


# ----- the runner: one per program, root in the zygote's namespaces ---------------------------------
def runner(cfg: dict, req_fd: int, resp_fd: int, length: int) -> None:
    iso.prctl(iso.PR_SET_PDEATHSIG, signal.SIGKILL)
    req = json.loads(read_exact(req_fd, length))
    uid, gid = cfg["uid"], cfg["gid"]
    iso.unshare(iso.CLONE_NEWNS | iso.CLONE_NEWPID | iso.CLONE_NEWIPC)
    iso.mount("tmpfs", RUN_TMPFS, "tmpfs", iso.MS_NOSUID | iso.MS_NODEV,
              f"size={req['disk_mb']}m,nr_inodes={req['max_files']},mode=0700")
    for name, target in (("work", WORK), ("tmp", "/tmp"), ("shm", "/dev/shm")):
        os.mkdir(f"{RUN_TMPFS}/{name}", 0o1777 if name != "work" else 0o755)
        os.chown(f"{RUN_TMPFS}/{name}", uid, gid)
        iso.mount(f"{RUN_TMPFS}/{name}", target, None, iso.MS_BIND)
    iso.umount(RUN_TMPFS)
    stdin = os.memfd_create("stdin", 0)
    os.write(stdin, req["stdin"].encode())
    os.lseek(stdin, 0, os.SEEK_SET)
    out_r, out_w = os.pipe()
    err_r, err_w = os.pipe()
    phase_r, phase_w = os.pipe()
    start = time.monotonic()
    pid = os.fork()
    if pid == 0:
        try:
            os.close(out_r), os.close(err_r), os.close(phase_r)
            init(req, cfg, stdin, out_w, err_w, phase_w)
        finally:
            os._exit(127)
    for fd in (stdin, out_w, err_w, phase_w):
        os.close(fd)
    outcome = supervise(pid, req, out_r, err_r, phase_r, start)
    header = json.dumps(outcome["meta"]).encode()
    send(resp_fd, RESULT, struct.pack("<I", len(header)) + header + outcome["stdout"] + outcome["stderr"])


def supervise(pid: int, req: dict, out_r: int, err_r: int, phase_r: int, start: float) -> dict:
    """Collect capped output until EOF or the deadline, then kill pid 1 (and so its namespace)."""
    limit = req["output_limit"]
    compiled = req["language"] in COMPILERS
    deadline = start + req["timeout"] + (req["compile_timeout"] if compiled else 0)
    buffers = {out_r: bytearray(), err_r: bytearray(), phase_r: bytearray()}
    open_fds = {out_r, err_r, phase_r}
    timed_out = over_limit = False
    poller = select.poll()
    for fd in open_fds:
        poller.register(fd, select.POLLIN)
    while out_r in open_fds or err_r in open_fds:
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            timed_out = True
            break
        for fd, _ in poller.poll(remaining * 1000):
            chunk = os.read(fd, 65536)
            if not chunk:
                poller.unregister(fd)
                open_fds.discard(fd)
                continue
            buffers[fd] += chunk
            if fd == phase_r and chunk.endswith(RUNNING):  # compiled: the run's own clock starts now
                start = time.monotonic()
                deadline = start + req["timeout"]
            elif fd != phase_r and len(buffers[fd]) > limit:
                over_limit = True
        if over_limit:
            break
    if timed_out or over_limit:
        os.kill(pid, signal.SIGKILL)
    os.waitpid(pid, 0)  # returns once every process of the namespace is gone
    duration = time.monotonic() - start
    while phase_r in open_fds and (chunk := os.read(phase_r, 4096)):  # every writer is gone: no blocking
        buffers[phase_r] += chunk
    phase = bytes(buffers[phase_r])
    status_at = phase.rfind(EXITED)
    exit_code = None
    if status_at >= 0 and len(phase) >= status_at + 5:
        exit_code = os.waitstatus_to_exitcode(struct.unpack_from("<i", phase, status_at + 1)[0])
    stdout, stderr = bytes(buffers[out_r][:limit]), bytes(buffers[err_r][:limit])
    meta = {
        "exit_code": None if timed_out else exit_code,
        "timed_out": timed_out,
        "duration": duration,
        "stdout_truncated": len(buffers[out_r]) > limit,
        "stderr_truncated": len(buffers[err_r]) > limit,
        "stderr_len": len(stderr),
        "reason": reason(req, exit_code, timed_out, over_limit, COMPILE_FAILED in phase, stderr),
    }
    return {"meta": meta, "stdout": stdout, "stderr": stderr}


def reason(req: dict, exit_code: int | None, timed_out: bool, over_limit: bool, compile_failed: bool,
           stderr: bytes) -> str:
    """Why the program did not finish cleanly ("" when it exited 0 within its limits)."""
    if timed_out:
        return f"timeout after {req['timeout']:g} s"
    if over_limit:
        return f"output limit exceeded ({req['output_limit']} bytes)"
    if compile_failed:
        return "compile error"
    if exit_code is None:
        return "killed before it reported an exit status"
    if exit_code == -signal.SIGXCPU:
        return "cpu time limit exceeded"
    if exit_code == -signal.SIGXFSZ:
        return "file size limit exceeded"
    tail = stderr[-2000:]
    if exit_code != 0 and (b"MemoryError" in tail or b"std::bad_alloc" in tail):
        return "memory limit exceeded"
    if exit_code < 0:
        return f"killed by {signal.Signals(-exit_code).name}"
    if exit_code > 0:
        return f"exit code {exit_code}"
    return ""


# ----- pid 1 of the run's pid namespace (a minimal init) and the program under it ---------------------
def init(req: dict, cfg: dict, stdin: int, out_w: int, err_w: int, phase_w: int) -> None:
    """Mount the run's /proc, drop to the slot's uid, fork the program and report its wait status.

    The program is pid 2, so it has ordinary signal semantics (pid 1 ignores signals it has no
    handler for); when it exits, this process exits and the kernel kills whatever it left behind.
    """
    iso.mount("proc", "/proc", "proc", iso.MS_NOSUID | iso.MS_NODEV | iso.MS_NOEXEC, "hidepid=2")
    with open("/proc/self/oom_score_adj", "w") as f:
        f.write("1000")  # the zygote protects itself from the OOM killer; runs must not inherit that
    for fd, target in ((stdin, 0), (out_w, 1), (err_w, 2)):
        os.dup2(fd, target)
    os.closerange(3, phase_w)
    os.closerange(phase_w + 1, 1 << 16)
    os.set_inheritable(phase_w, False)
    os.setgroups([])
    os.setresgid(cfg["gid"], cfg["gid"], cfg["gid"])
    os.setresuid(cfg["uid"], cfg["uid"], cfg["uid"])
    iso.prctl(iso.PR_SET_NO_NEW_PRIVS, 1)
    iso.prctl(iso.PR_SET_PDEATHSIG, signal.SIGKILL)  # the uid change cleared it
    iso.prctl(iso.PR_SET_DUMPABLE, 1)  # so the program owns its /proc/self like any process
    os.chdir(WORK)
    os.environ.clear()
    os.environ.update(CLEAN_ENV)
    child = os.fork()
    if child == 0:
        try:
            program(req, cfg, phase_w)
        finally:
            os._exit(127)
    for fd in (0, 1, 2):
        os.close(fd)
    while True:  # reap orphans until the program itself exits
        pid, status = os.wait()
        if pid == child:
            break
    os.write(phase_w, EXITED + struct.pack("<i", status))
    os._exit(0)


def program(req: dict, cfg: dict, phase_w: int) -> None:
    for name, content in req["files"].items():
        with open(os.path.join(WORK, name), "w") as f:
            f.write(content)
    if req["language"] in COMPILERS:
        set_limits(req, memory_mb=max(req["memory_mb"], 2048), cpu=req["compile_timeout"], baseline=0)
        compile_source(req, phase_w)
        set_limits(req, memory_mb=req["memory_mb"], cpu=req["timeout"], baseline=0)
        os.write(phase_w, RUNNING)
        os.execve(f"{WORK}/main", [f"{WORK}/main"], CLEAN_ENV)
    os.close(phase_w)
    set_limits(req, memory_mb=req["memory_mb"], cpu=req["timeout"], baseline=cfg["baseline_bytes"])
    run_python(req["code"])


def set_limits(req: dict, *, memory_mb: int, cpu: float, baseline: int) -> None:
    """Lower soft and hard limits together so the program cannot raise them back."""
    limits = {
        resource.RLIMIT_CPU: math.ceil(cpu) + 1,
        resource.RLIMIT_AS: baseline + memory_mb * 1024 * 1024,
        resource.RLIMIT_NPROC: req["max_processes"],
        resource.RLIMIT_FSIZE: req["disk_mb"] * 1024 * 1024,
        resource.RLIMIT_NOFILE: req["max_open_files"],
        resource.RLIMIT_CORE: 0,
        resource.RLIMIT_MEMLOCK: 0,
        resource.RLIMIT_MSGQUEUE: 0,
    }
    for which, value in limits.items():
        _, hard = resource.getrlimit(which)
        value = value if hard == resource.RLIM_INFINITY else min(value, hard)
        resource.setrlimit(which, (value, value))


def compile_source(req: dict, phase_w: int) -> None:
    compiler, source, flags = COMPILERS[req["language"]]
    with open(source, "w") as f:
        f.write(req["code"])
    pid = os.fork()
    if pid == 0:
        try:
            os.execve(f"/usr/bin/{compiler}", [compiler, *flags, "-o", "main", source, "-lm"], CLEAN_ENV)
        finally:
            os._exit(127)
    _, status = os.waitpid(pid, 0)
    if status != 0:
        os.write(phase_w, COMPILE_FAILED)
        os._exit(1)


def run_python(source: str) -> None:
    """Run ``source`` as ``python main.py`` would, in this already-warm interpreter."""
    import atexit
    import builtins
    import random
    import threading
    import types

    with open("main.py", "w") as f:
        f.write(source)
    sys.stdin = sys.__stdin__ = open(0, encoding="utf-8", closefd=False)
    sys.stdout = sys.__stdout__ = open(1, "w", encoding="utf-8", closefd=False)
    sys.stderr = sys.__stderr__ = open(2, "w", encoding="utf-8", errors="backslashreplace", closefd=False)
    sys.argv = ["main.py"]
    sys.path.insert(0, WORK)
    random.seed()
    main = types.ModuleType("__main__")
    main.__file__ = f"{WORK}/main.py"
    main.__builtins__ = builtins
    sys.modules["__main__"] = main
    code = 0
    try:
        exec(compile(source, main.__file__, "exec"), main.__dict__)
    except SystemExit as exc:
        code = exit_status(exc.code)
    except BaseException as exc:
        tb = exc.__traceback__.tb_next if exc.__traceback__ else None  # hide this frame, as python does
        sys.excepthook(type(exc), exc.with_traceback(tb), tb)
        code = 1
    try:
        threading._shutdown()
        atexit._run_exitfuncs()
        sys.stdout.flush()
        sys.stderr.flush()
    except SystemExit as exc:
        code = exit_status(exc.code)
    except BaseException:
        code = code or 120
    os._exit(code)


def exit_status(code: object) -> int:
    if code is None:
        return 0
    if isinstance(code, int):
        return code & 0xFF
    print(code, file=sys.stderr)
    return 1


def main() -> None:
    cfg = json.loads(sys.argv[1])
    req_fd, resp_fd = int(sys.argv[2]), int(sys.argv[3])
    try:
        protect_from_oom_killer()
        preload(cfg)
        gc.collect()
        gc.freeze()  # keep the shared heap's pages shared after fork
        cfg["baseline_bytes"] = address_space()
        build_root(cfg)
    except Exception as exc:
        send(resp_fd, FAILED, f"{type(exc).__name__}: {exc}".encode())
        return
    send(resp_fd, READY, b"")
    serve(cfg, req_fd, resp_fd)


def protect_from_oom_killer() -> None:
    """Best effort (needs CAP_SYS_RESOURCE): a run's memory bomb should not take the zygote down."""
    try:
        with open("/proc/self/oom_score_adj", "w") as f:
            f.write("-1000")
    except PermissionError:
        pass


def address_space() -> int:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[0]) * os.sysconf("SC_PAGE_SIZE")


if __name__ == "__main__":
    main()
