"""The warm zygote: one per pool slot, started as ``python -I -S _zygote.py CONFIG REQ_FD RESP_FD``.

It isolates itself once (its slot's CPU cgroup, private mount/net/uts/ipc namespaces, a read-only
tmpfs root holding only the interpreter and system libraries), imports common modules, then serves
runs. Per run it creates a fresh memory cgroup with the run's budget and a fresh pid namespace whose
pid 1 is a tiny spawned program (``_reaper.py``), and forks the *program* into it: the program reads
its request itself, joins that cgroup, enters new mount and IPC namespaces, mounts a private tmpfs
work dir and /proc, drops to the slot's own uid, makes itself non-dumpable and runs under rlimits
and a seccomp filter. A build comes as a descriptor with the request (``SCM_RIGHTS``) and is executed
from it. The zygote only enforces the deadline and output cap: it moves the program's output to the
host with ``splice`` and never reads a program or its output into its own memory, so no later run
(forked from it) can find an earlier one's data. Killing pid 1 makes the kernel kill everything the
run started; then the zygote removes the run's cgroup and has the kernel collect unix sockets the run
left in flight.

Stdlib only: it runs outside the rewardhub package (``-I -S``) and before the host is hidden.
"""

from __future__ import annotations

import ctypes
import errno
import fcntl
import gc
import importlib
import json
import marshal
import math
import os
import resource
import select
import signal
import socket
import struct
import sys
import termios
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import _cgroups as cgroups  # noqa: E402  (found through the line above, before the host is hidden)
import _isolate as iso  # noqa: E402
import _reaper as reaper  # noqa: E402
import _seccomp as seccomp  # noqa: E402
from _python_main import run_python  # noqa: E402

__all__ = [
    "ARGUMENTS",
    "DEVICES",
    "DEV_LINKS",
    "FRAME",
    "MOUNTPOINTS",
    "NOTIF_CONTINUE",
    "Output",
    "PID1",
    "REAPER_GRACE",
    "REQUEST",
    "RUN_TMPFS",
    "SECCOMP",
    "SLEEP",
    "SWEEP_TIMEOUT",
    "THREAD_STACK_MB",
    "WORK",
    "answer_kill",
    "build_root",
    "compile_source",
    "drop_privileges",
    "forward",
    "kill_refusal",
    "mount_run",
    "passed",
    "preload",
    "program",
    "protect_from_oom_killer",
    "read_exact",
    "receive",
    "receive_header",
    "run",
    "send",
    "serve",
    "set_limits",
    "supervise",
    "sweep_unix_sockets",
    "unpack_build",
]

FRAME = struct.Struct("<II")  # kind, length
READY, STDOUT, STDERR, DONE, FAILED = 0, 1, 2, 3, 4
REQUEST = struct.Struct("<QddqQ")  # payload length, timeout, compile budget (0: none), output limit, memory budget
RUN_TMPFS = "/.run"
WORK = "/work"
MOUNTPOINTS = ("work", "tmp", "proc", ".run", "dev", "etc")
DEVICES = ("null", "zero", "full", "random", "urandom")
DEV_LINKS = {"fd": "/proc/self/fd", "stdin": "/proc/self/fd/0", "stdout": "/proc/self/fd/1",
             "stderr": "/proc/self/fd/2"}
THREAD_STACK_MB = 8  # each thread reserves its stack: RLIMIT_STACK, which glibc uses for threads
PID1 = "/.pid1"  # each run's pid 1 (_reaper.py), written into the root; coreutils' sleep where it cannot be
SLEEP = ("/usr/bin/sleep", "/bin/sleep")
REAPER_GRACE = 30  # seconds past the deadline after which a run's pid 1 ends by itself
SWEEP_TIMEOUT = 2.0  # seconds to wait for the kernel to collect unix sockets a run left in flight
ARGUMENTS = ctypes.create_string_buffer(b"python3\0main.py\0")  # what a run's /proc/self/cmdline says
CONSUMED, COMPILE_FAILED, RUNNING, CGROUP_FAILED, LISTENER = b"P", b"C", b"R", b"G", b"N"
NOTIF_RECV, NOTIF_SEND = 0xC0502100, 0xC0182101  # SECCOMP_IOCTL_NOTIF_RECV / _SEND (struct sizes 80 and 24)
NOTIF_CONTINUE = 1  # SECCOMP_USER_NOTIF_FLAG_CONTINUE: the kernel runs the call as asked
SECCOMP = seccomp.prepare()


def send(fd: int, kind: int, body: bytes, length: int | None = None) -> None:
    """Write one frame; with ``length``, only its header (the caller splices the body after it)."""
    data = FRAME.pack(kind, len(body) if length is None else length) + body
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
    cfg["unix_sockets"] = os.open("/proc/self/net/unix", os.O_RDONLY)  # this new network namespace's listing
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
    for source, target in cfg["readonly"]:
        mountpoint = root + target
        if os.path.isdir(source):
            os.makedirs(mountpoint, exist_ok=True)
        else:
            os.makedirs(os.path.dirname(mountpoint), exist_ok=True)
            open(mountpoint, "w").close()
        iso.bind_readonly(source, mountpoint)
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
    pid1 = reaper.executable()
    if pid1 is not None:
        with open(root + PID1, "wb") as f:
            f.write(pid1)
        os.chmod(root + PID1, 0o755)
    iso.mount(None, f"{root}/dev", None, iso.MS_REMOUNT | iso.MS_RDONLY | iso.MS_NOSUID | iso.MS_NOEXEC)
    iso.pivot_root(root)
    iso.mount(None, "/", None, iso.MS_REMOUNT | iso.MS_RDONLY | iso.MS_NOSUID | iso.MS_NODEV)


def preload(cfg: dict) -> None:
    """Import the common modules, and compile the code many runs share (``sandbox.precompile``)."""
    sys.path.remove(os.path.dirname(os.path.abspath(__file__)))
    sys.path.extend(cfg["sys_path"])
    for name in cfg["preload"]:
        try:
            importlib.import_module(name)
        except Exception:  # a missing optional module only costs the programs that need it
            pass
    cfg["compiled"] = {source: compile(source, f"{WORK}/main.py", "exec") for source in cfg["precompile"]}


def serve(cfg: dict, req_fd: int, resp_fd: int) -> None:
    """Run one program per request header until the host closes the request socket."""
    channel = socket.socket(fileno=req_fd)
    while True:
        try:
            header, stdin, build = receive_header(channel)
        except EOFError:  # the host went away: nothing may outlive it
            return
        if not run(cfg, req_fd, resp_fd, stdin, build, *REQUEST.unpack(header)):
            return  # the program died before reading its whole request: the stream is out of step


def receive_header(channel: socket.socket) -> tuple[bytes, int | None, int | None]:
    """The next request header, and the descriptors the host attached to it: the run's stdin (a memfd,
    so its content never passes through the memory of a process the program is forked from) and its
    build (if any)."""
    header, fds = b"", []
    while len(header) < REQUEST.size:
        data, ancillary, _, _ = channel.recvmsg(REQUEST.size - len(header), socket.CMSG_SPACE(8),
                                                socket.MSG_CMSG_CLOEXEC)
        if not data:
            raise EOFError
        header += data
        fds += passed(ancillary)
    for extra in fds[2:]:
        os.close(extra)
    return header, fds[0] if fds else None, fds[1] if len(fds) > 1 else None


def run(cfg: dict, req_fd: int, resp_fd: int, stdin: int | None, build: int | None, length: int, timeout: float,
        compile_budget: float, limit: int, budget: int) -> bool:
    """One run in a fresh pid namespace: its own memory cgroup, output forwarded, then a cleanup that
    leaves the slot as it was (namespace emptied, cgroup removed, unix sockets left in flight collected).

    The namespace's pid 1 is a tiny program (``_reaper.py``) spawned without copying the zygote
    (``posix_spawn``); the program is the zygote's own fork, pid 2 there (so its signals behave as
    anywhere else). Killing pid 1 kills everything the run started; pid 1 also ends with the zygote.
    """
    out_r, out_w = os.pipe()
    err_r, err_w = os.pipe()
    status_r, status_w = (end.detach() for end in socket.socketpair())  # a socket: it also carries the listener
    slot = cfg["memory_slot"]
    try:
        cgroup = cgroups.new_run(slot, budget) if slot else None
    except OSError:  # the program reports it once it has consumed the request (the slot then restarts)
        cgroup = None
    start = time.monotonic()
    iso.unshare(iso.CLONE_NEWPID)  # for the children made next
    try:
        lifetime = str(math.ceil(timeout + compile_budget) + REAPER_GRACE)  # only coreutils' sleep reads it
        pid1 = os.posix_spawn(cfg["pid1"], [os.path.basename(cfg["pid1"]), lifetime], {})
        try:
            pid = os.fork()
        except OSError:  # no fork: end the namespace, and this zygote (the slot restarts)
            os.kill(pid1, signal.SIGKILL)
            os.waitpid(pid1, 0)
            raise
        if pid == 0:
            try:
                for fd in (out_r, err_r, status_r, resp_fd):
                    os.close(fd)
                program(cfg, req_fd, length, stdin, out_w, err_w, status_w, build, cgroup)
            finally:
                os._exit(127)
    finally:
        iso.setns(cfg["pid_namespace"], iso.CLONE_NEWPID)  # later children: back in the zygote's own
    for fd in (out_w, err_w, status_w, stdin, build):
        if fd is not None:
            os.close(fd)
    facts = supervise(pid, pid1, Output(resp_fd, out_r, err_r, limit), status_r, start, timeout, compile_budget,
                      cfg["proc"])
    os.close(status_r)  # a unix socket: the sweep below must find none of the zygote's own
    kills, reached = cgroups.end_run(slot, cgroup) if cgroup else (0, False)
    facts["memory_killed"] = kills > 0 and reached
    unexplained = facts.pop("unexplained_kill")  # pid 2 died of SIGKILL that no limit of the run explains
    # runs cannot send SIGKILL where the seccomp filter works: an unexplained one came from outside
    facts["killed_externally"] = not reached and (kills > 0 or unexplained and SECCOMP is not None)
    facts["cgroup_failed"] = facts["cgroup_failed"] or (bool(slot) and cgroup is None)
    facts["leftover"] = not sweep_unix_sockets(cfg["unix_sockets"])
    for fd in (out_r, err_r):
        os.close(fd)
    send(resp_fd, DONE, json.dumps(facts).encode())
    return facts["consumed"]


def sweep_unix_sockets(listing: int) -> bool:
    """Collect the unix sockets a finished run left in flight; ``False`` if some survive.

    With every process of the run gone, a unix socket can only live on as a message in another's
    queue, in a cycle (memfds or socket buffers parked in it stay charged, and an abstract name bound
    to it stays reachable). Closing any unix socket while such messages exist starts the kernel's
    garbage collector; the zygote's network namespace holds no socket of its own, so the listing
    must come back empty.
    """
    if not _listed_sockets(listing):
        return True
    first, second = socket.socketpair()
    first.close()
    second.close()
    deadline = time.monotonic() + SWEEP_TIMEOUT
    while _listed_sockets(listing):
        if time.monotonic() > deadline:
            return False
        time.sleep(0.002)
    return True


def _listed_sockets(listing: int) -> bool:
    return os.pread(listing, 4096, 0).count(b"\n") > 1  # the first line is the header


class Output:
    """The run's stdout and stderr on their way to the host: bytes sent per stream, and which have ended."""

    def __init__(self, resp_fd: int, out_r: int, err_r: int, limit: int):
        self.resp_fd, self.limit = resp_fd, limit
        self.kinds = {out_r: STDOUT, err_r: STDERR}
        self.sent = dict.fromkeys(self.kinds, 0)
        self.ended: set[int] = set()

    @property
    def over_limit(self) -> bool:
        return any(count > self.limit for count in self.sent.values())

    def pump(self, fd: int) -> None:
        """Forward what the pipe holds (called when it is readable, or once every writer is gone)."""
        count = forward(fd, self.resp_fd, self.kinds[fd], self.limit + 1 - self.sent[fd])
        if count:
            self.sent[fd] += count
        else:
            self.ended.add(fd)

    def drain(self) -> None:
        """Forward the rest; only once every writer is gone (then each pipe ends at EOF, no read blocks)."""
        for fd in self.kinds:
            while fd not in self.ended and not self.over_limit:
                self.pump(fd)


def supervise(pid: int, pid1: int, output: Output, status_r: int, start: float, timeout: float,
              compile_budget: float, proc: int) -> dict:
    """Forward capped output until the program exits, is over its output cap or its deadline; then
    kill the namespace's pid 1 (and so whatever the run left) and forward what remains."""
    deadline = start + (compile_budget or timeout)  # a build has its own budget; the run's clock starts after it
    began = start
    status = bytearray()
    timed_out = exited = False
    listener = None
    ended = os.pidfd_open(pid)
    poller = select.poll()
    for fd in (*output.kinds, status_r, ended):
        poller.register(fd, select.POLLIN)
    while not (exited or output.over_limit):
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            timed_out = True
            break
        for fd, events in poller.poll(remaining * 1000):
            if fd == ended:
                exited = True
            elif fd == listener:
                if events & select.POLLIN:
                    answer_kill(listener, pid, proc)
                elif events & (select.POLLHUP | select.POLLERR):
                    poller.unregister(fd)
            elif fd == status_r:
                chunk, fds = receive(status_r)
                if fds and listener is None and LISTENER in chunk:
                    listener = fds.pop(0)
                    poller.register(listener, select.POLLIN)
                for extra in fds:
                    os.close(extra)
                status += chunk[:64 - len(status)]
                if chunk.endswith(RUNNING):  # compiled: the run's own clock starts now
                    start = time.monotonic()
                    deadline = start + timeout
                if not chunk:
                    poller.unregister(fd)
            else:
                output.pump(fd)
                if fd in output.ended:
                    poller.unregister(fd)
    os.close(ended)
    if listener is not None:
        os.close(listener)  # a kill still waiting for an answer fails (ENOSYS)
    os.kill(pid1, signal.SIGKILL)  # its end kills every process of the namespace
    _, status_of_program, usage = os.wait4(pid, 0)  # first: pid 1's end waits until the zygote has reaped it
    os.waitpid(pid1, 0)  # returns once every process of the run's pid namespace is gone
    exit_status = status_of_program if exited and not output.over_limit else None
    duration = time.monotonic() - start
    output.drain()
    while len(status) < 64 and (chunk := receive(status_r)[0]):
        status += chunk
    markers = {bytes([byte]) for byte in status}
    killed = exit_status is not None and os.WIFSIGNALED(exit_status) and os.WTERMSIG(exit_status) == signal.SIGKILL
    cpu_limit = math.ceil(timeout) + 1 if RUNNING in markers or compile_budget == 0 else math.ceil(compile_budget) + 1
    cpu_used = usage.ru_utime + usage.ru_stime
    compiled = 0.0 if not compile_budget else start - began if RUNNING in markers else duration
    return {
        "compile_duration": compiled,
        "compile_timed_out": timed_out and compile_budget > 0 and RUNNING not in markers,
        "cpu_killed": killed and cpu_used >= cpu_limit - 0.05,
        "unexplained_kill": killed and cpu_used < cpu_limit - 0.05,
        "exit_code": None if exit_status is None else os.waitstatus_to_exitcode(exit_status),
        "timed_out": timed_out, "over_limit": output.over_limit, "duration": duration, "cpu_seconds": cpu_used,
        "compile_failed": COMPILE_FAILED in markers, "consumed": CONSUMED in markers,
        "cgroup_failed": CGROUP_FAILED in markers,
    }


def receive(status_r: int) -> tuple[bytes, list[int]]:
    """Status bytes from the program, and the descriptors it passed (the seccomp listener); b"" at the end."""
    channel = socket.socket(fileno=status_r)
    try:
        data, ancillary, _, _ = channel.recvmsg(64, socket.CMSG_SPACE(4 * 4), socket.MSG_CMSG_CLOEXEC)
    finally:
        channel.detach()
    return data, passed(ancillary)


def passed(ancillary: list) -> list[int]:
    """The descriptors a message carried (``SCM_RIGHTS``)."""
    fds: list[int] = []
    for level, kind, payload in ancillary:
        if level == socket.SOL_SOCKET and kind == socket.SCM_RIGHTS:
            fds += struct.unpack(f"{len(payload) // 4}i", payload[:len(payload) - len(payload) % 4])
    return fds


def answer_kill(listener: int, program_pid: int, proc: int) -> None:
    """Answer a run's ``kill(pid > 2, SIGKILL)`` held by the seccomp filter: refused (EPERM) when the
    target is a thread of the run's main program (its whole process would die: a SIGKILL that looks
    as if it came from outside), ESRCH when there is no such process, else carried out as asked."""
    request = bytearray(80)  # struct seccomp_notif: id, pid, flags, then seccomp_data (nr, arch, ip, args)
    try:
        fcntl.ioctl(listener, NOTIF_RECV, request, True)
    except OSError:  # the caller is gone (killed while it waited)
        return
    ident, = struct.unpack_from("<Q", request, 0)
    target, = struct.unpack_from("<i", request, 32)  # args[0] as the kernel reads a pid_t
    error = kill_refusal(program_pid, target, proc)
    response = bytearray(struct.pack("<QqiI", ident, 0, -error, 0 if error else NOTIF_CONTINUE))
    try:
        fcntl.ioctl(listener, NOTIF_SEND, response, True)
    except OSError:
        pass


def kill_refusal(program_pid: int, target: int, proc: int) -> int:
    """0 if the run's process ``target`` (a pid in the run's namespace) is not the main program's, else
    the errno to answer. Read in the run's own /proc, reached through the main program's root."""
    try:
        fd = os.open(f"{program_pid}/root/proc/{target}/status", os.O_RDONLY, dir_fd=proc)
    except FileNotFoundError:
        return errno.ESRCH
    except OSError:
        return errno.EPERM
    try:
        text = os.read(fd, 4096)
    except OSError:
        return errno.EPERM
    finally:
        os.close(fd)
    for line in text.split(b"\n"):
        if line.startswith(b"Tgid:"):
            return errno.EPERM if line.split()[1:2] == [b"2"] else 0
    return errno.EPERM


def forward(fd: int, resp_fd: int, kind: int, budget: int) -> int:
    """Splice what the pipe holds (at most ``budget`` bytes, at least 1) to the host; 0 at EOF.

    Called when poll reports the pipe ready, so no bytes available means every writer is gone.
    """
    available = struct.unpack("i", fcntl.ioctl(fd, termios.FIONREAD, b"\0\0\0\0"))[0]
    if available == 0:
        return 0
    count = max(1, min(available, budget, 1 << 20))
    send(resp_fd, kind, b"", length=count)
    left = count
    while left:
        left -= os.splice(fd, resp_fd, left)
    return count


# ----- the program: the zygote's fork, pid 2 of the run's pid namespace ----------------------------------
def program(cfg: dict, req_fd: int, length: int, stdin: int | None, out_w: int, err_w: int, status_w: int,
            build: int | None, cgroup: dict | None) -> None:
    """Read the request, join the run's memory cgroup, make the run's mounts, drop to the slot's uid
    and run the program (its build is executed, Python code runs in this warm interpreter)."""
    iso.prctl(iso.PR_SET_PDEATHSIG, signal.SIGKILL)
    os.setsid()  # process group and session 2, for good (a session leader cannot move): seccomp knows whom to guard
    req = marshal.loads(read_exact(req_fd, length))  # from the host, same interpreter: fewer pages touched than json
    os.close(req_fd)
    os.write(status_w, CONSUMED)
    if cfg["memory_slot"]:  # before anything of the run allocates: from here on all its processes count together
        try:
            if cgroup is None:
                raise OSError("no cgroup for this run")
            cgroups.enter(cgroup)
        except OSError:  # never run without the limit the slot promised: a sandbox error instead
            os.write(status_w, CGROUP_FAILED)
            os._exit(1)
    iso.unshare(iso.CLONE_NEWNS | iso.CLONE_NEWIPC)
    try:  # /proc/self/cmdline: no host path, no slot configuration
        iso.show_arguments(ARGUMENTS, cfg["layout"])
    except OSError:  # a kernel without CONFIG_CHECKPOINT_RESTORE: the zygote's command line shows
        pass
    mount_run(req, cfg["uid"], cfg["gid"])
    with open("/proc/self/oom_score_adj", "w") as f:
        f.write("1000")  # the zygote protects itself from the OOM killer; runs must not inherit that
    if stdin is None:
        stdin = os.open(os.devnull, os.O_RDONLY)
    for fd, target in ((stdin, 0), (out_w, 1), (err_w, 2)):
        os.dup2(fd, target)
    kept = sorted({status_w} if build is None else {status_w, build})
    for low, high in zip([3] + [fd + 1 for fd in kept], kept + [1 << 16], strict=True):
        os.closerange(low, high)
    drop_privileges(cfg["uid"], cfg["gid"], status_w)
    os.chdir(WORK)
    for name, content in req["files"].items():
        with open(os.path.join(WORK, name), "w") as f:
            f.write(content)
    if req["language"] != "python":
        env = {**os.environ, **req["env"]}
        if build is None:
            set_limits(req, memory_mb=req["compile_memory_mb"], cpu=req["compile_timeout"], baseline=0)
            compile_source(req, status_w, env)
            if req["compile_only"]:
                with open(req["artefact"], "rb") as f, open(1, "wb", closefd=False) as out:
                    while chunk := f.read(1 << 20):
                        out.write(chunk)
                os._exit(0)
            build = os.open(req["artefact"], os.O_RDONLY | os.O_CLOEXEC)
        elif req["run"]:  # a build its runtime reads (a jar, a script): a file of the run's own
            unpack_build(build, req["artefact"])
        set_limits(req, memory_mb=req["memory_mb"], cpu=req["timeout"], baseline=0)
        os.write(status_w, RUNNING)
        if req["run"]:
            os.execvpe(req["run"][0], req["run"], env)
        os.execve(build, [f"{WORK}/main"], env)  # fexecve: a given build runs from its sealed memfd
    os.close(status_w)
    set_limits(req, memory_mb=req["memory_mb"], cpu=req["timeout"], baseline=cfg["baseline_bytes"])
    with open(f"{WORK}/main.py", "w", encoding="utf-8") as f:
        f.write(req["code"])
    run_python(f"{WORK}/main.py", cfg["compiled"].get(req["code"]))


def mount_run(req: dict, uid: int, gid: int) -> None:
    """The run's own size-limited tmpfs as /work, /tmp and /dev/shm, and its own /proc (hidepid)."""
    iso.mount("tmpfs", RUN_TMPFS, "tmpfs", iso.MS_NOSUID | iso.MS_NODEV,
              f"size={req['disk_mb']}m,nr_inodes={req['max_files']},mode=0700")
    for name, target in (("work", WORK), ("tmp", "/tmp"), ("shm", "/dev/shm")):
        os.mkdir(f"{RUN_TMPFS}/{name}", 0o1777 if name != "work" else 0o755)
        os.chown(f"{RUN_TMPFS}/{name}", uid, gid)
        iso.mount(f"{RUN_TMPFS}/{name}", target, None, iso.MS_BIND)
    iso.umount(RUN_TMPFS)
    iso.mount("proc", "/proc", "proc", iso.MS_NOSUID | iso.MS_NODEV | iso.MS_NOEXEC, "hidepid=2")


def drop_privileges(uid: int, gid: int, status_w: int) -> None:
    """The slot's uid, no way back, non-dumpable, and the seccomp filter (its listener handed to the
    zygote over ``status_w`` and closed here, before any of the program runs).

    Not dumpable: no core dump, whatever the host's core_pattern (a pipe helper runs as root), and
    /proc/self stays root's; the seccomp filter keeps the program from undoing it.
    """
    os.setgroups([])
    os.setresgid(gid, gid, gid)
    os.setresuid(uid, uid, uid)
    iso.prctl(iso.PR_SET_DUMPABLE, 0)
    iso.prctl(iso.PR_SET_NO_NEW_PRIVS, 1)
    iso.prctl(iso.PR_SET_PDEATHSIG, signal.SIGKILL)  # the uid change cleared it
    listener = seccomp.install(SECCOMP)
    if listener is not None:
        channel = socket.socket(fileno=status_w)
        try:
            socket.send_fds(channel, [LISTENER], [listener])
        finally:
            channel.detach()
            os.close(listener)


def set_limits(req: dict, *, memory_mb: int, cpu: float, baseline: int) -> None:
    """Lower soft and hard limits together so the program cannot raise them back.

    The address space allows ``memory_mb`` of use plus the stacks threads reserve without using them
    (malloc arenas are bounded by the environment), so threads work; what is used is limited by the
    run's memory cgroup.
    ``RLIMIT_CORE`` is 1, the value at which the kernel skips even a pipe ``core_pattern`` helper
    (for programs that ``exec``, which makes a process dumpable again).
    """
    reserved = req["max_processes"] * THREAD_STACK_MB + req.get("reserve_mb", 0)  # + what a JVM/V8/Go reserves
    limits = {
        resource.RLIMIT_CPU: math.ceil(cpu) + 1,
        resource.RLIMIT_AS: baseline + (memory_mb + reserved) * 1024 * 1024,
        resource.RLIMIT_NPROC: req["max_processes"] + req.get("threads", 0),  # + the runtime's own threads
        resource.RLIMIT_FSIZE: req["disk_mb"] * 1024 * 1024,
        resource.RLIMIT_NOFILE: req["max_open_files"],
        resource.RLIMIT_CORE: 1,
        resource.RLIMIT_MEMLOCK: 0,
        resource.RLIMIT_MSGQUEUE: 0,
        resource.RLIMIT_RTPRIO: 0,  # no realtime scheduling, so no RLIMIT_RTTIME kill
    }
    for which, value in limits.items():
        _, hard = resource.getrlimit(which)
        value = value if hard == resource.RLIM_INFINITY else min(value, hard)
        resource.setrlimit(which, (value, value))
    resource.setrlimit(resource.RLIMIT_STACK, (THREAD_STACK_MB * 1024 * 1024, resource.getrlimit(resource.RLIMIT_STACK)[1]))


def compile_source(req: dict, status_w: int, env: dict) -> None:
    """Write the source and run the compiler (its messages all on stderr: stdout may carry the build);
    a compiler that leaves a folder (``package``: javac's classes) has it zipped into the build."""
    with open(req["source"], "w") as f:
        f.write(req["code"])
    pid = os.fork()
    if pid == 0:
        try:
            os.dup2(2, 1)
            os.execvpe(req["compile"][0], req["compile"], env)
        finally:
            os._exit(127)
    _, status = os.waitpid(pid, 0)
    if status != 0:
        os.write(status_w, COMPILE_FAILED)
        os._exit(1)
    if req["package"]:
        import shutil

        os.replace(shutil.make_archive("build", "zip", req["package"]), req["artefact"])


def unpack_build(build: int, name: str) -> None:
    """Copy a build given as a descriptor into the work folder as ``name`` (what its runtime reads)."""
    with open(name, "wb") as out:
        offset = 0
        while chunk := os.pread(build, 1 << 20, offset):
            out.write(chunk)
            offset += len(chunk)
    os.close(build)


def main() -> None:
    cfg = json.loads(sys.argv[1])
    req_fd, resp_fd = int(sys.argv[2]), int(sys.argv[3])
    for fd in (req_fd, resp_fd):
        os.set_inheritable(fd, False)  # the runs' pid 1 is exec'ed: it must inherit nothing
    try:
        protect_from_oom_killer()
        if cfg["cpu"]:
            cgroups.join(cfg["cpu"]["path"], cfg["cpu"]["version"])
        cfg["memory_slot"] = cgroups.open_slot(**cfg["memory"]) if cfg["memory"] else None  # /sys is hidden next
        statm = os.open("/proc/self/statm", os.O_RDONLY)  # there is no /proc in the new root
        cfg["proc"] = os.open("/proc", os.O_RDONLY | os.O_DIRECTORY)  # a run's /proc, through its root (answer_kill)
        cfg["layout"] = iso.memory_layout()
        cfg["pid_namespace"] = os.open("/proc/self/ns/pid", os.O_RDONLY)
        build_root(cfg)
        cfg["pid1"] = PID1 if os.path.exists(PID1) else next((p for p in SLEEP if os.path.exists(p)), None)
        if cfg["pid1"] is None:
            raise FileNotFoundError(f"no sleep program at {' or '.join(SLEEP)} (coreutils) for the runs' pid 1")
        preload(cfg)  # after the pivot, so modules and their lazy imports use the sandbox's paths
        gc.collect()
        gc.freeze()  # keep the shared heap's pages shared after fork
        cfg["baseline_bytes"] = int(os.pread(statm, 100, 0).split()[0]) * os.sysconf("SC_PAGE_SIZE")
        os.close(statm)
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


if __name__ == "__main__":
    main()
