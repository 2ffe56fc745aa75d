"""The resident runner of a docker sandbox container: ``python3 -c <this file> [--root=DIR] [--uid=N]``.

Started once per container by ``docker exec`` as root holding only the capabilities it needs (set
uid/gid, kill, chown, and reading/removing what runs leave); it serves runs until its stdin ends.
Messages both ways are a 4-byte big-endian length and a JSON object. Per run it makes a fresh work
folder, forks the program as the unprivileged sandbox uid (so no run can signal, trace or read the
runner) under rlimits, with its stdin in a memory file passed only as that process's fd 0 (nothing
of the tests is in the work folder), forwards capped output through pipes, enforces the deadline,
then kills every process the run left, waits until the container's pid 1 has reaped them, and
empties ``/work``, ``/tmp`` and ``/dev/shm``: the next run finds nothing of this one.

Warm Python runs (``--preload=MODULES``): before reading any request (its first message is the
host's setup: sources to compile once, public code such as the code reward's harness) the runner
forks a warm interpreter that imports MODULES once and then forks each Python run itself, given
only numbers and the run's descriptors, so no request is ever in its memory. If it ends, its run abstains and the
runner asks the host to be replaced (``retire``): a runner that read requests forks no new one.

Memory: after each run (and in its first message) the runner reports the container's baseline, what
it holds that no run can reclaim (its processes, the warm interpreter, pid 1; file cache excluded),
and the host sets the container's memory limit to that baseline plus the next run's budget, so the
run itself gets its ``memory_mb``, not what the runner leaves unused. A run's processes carry
``oom_score_adj`` 1000, so the OOM killer takes them and not the runner. The container's own memory
counters tell the run's OOM kill (the limit was reached) from a kill from outside (the host's OOM
killer); a SIGKILL no limit explains came from outside too. Each answer also carries the run's CPU
seconds (its build's and its own, from ``wait4``), so a timeout is judged by the CPU it got.

Stdlib only (it runs on the container's interpreter), plus ``_python_main``, which the host sends
along as a module (``docker_backend.runner_script``). ``--root=DIR`` puts run folders under DIR and
leaves other processes and folders alone (to test the script as a plain process, where programs run
as the caller's uid); ``--uid=N`` runs programs as N (default in a container: the sandbox user 65534).
"""

import base64
import json
import math
import os
import resource
import select
import shutil
import signal
import socket
import stat
import struct
import sys
import tempfile
import time

from _python_main import run_python

__all__ = [
    "ENV",
    "HEADER",
    "INTERPRETER_MB",
    "MEMORY_USAGE",
    "Outcome",
    "PEAK_SLACK",
    "REAP_TIMEOUT",
    "Runner",
    "SANDBOX_UID",
    "SCRATCH",
    "STARTUP_TIMEOUT",
    "THREAD_STACK_MB",
    "WARM",
    "WarmInterpreter",
    "WarmInterpreterGone",
    "enter_run",
    "kill_as",
    "limits",
    "memory_baseline",
    "memory_events",
    "memory_file",
    "read_exact",
    "read_text",
    "receive",
    "remove",
    "send",
    "serve_warm",
    "spawn",
    "warm_run",
    "wipe",
]

HEADER = struct.Struct(">I")
ENV = {"PATH": "/usr/local/bin:/usr/bin:/bin", "LANG": "C.UTF-8", "MALLOC_ARENA_MAX": "1", "TMPDIR": "/tmp"}
SCRATCH = ("/work", "/tmp", "/dev/shm")  # what runs may write, emptied after each one
THREAD_STACK_MB = 8
INTERPRETER_MB = 64  # address space of the interpreter itself, on top of the program's memory_mb
REAP_TIMEOUT = 5.0
STARTUP_TIMEOUT = 30.0  # for the warm interpreter's imports
SANDBOX_UID = 65534
PEAK_SLACK = 2 << 20  # cgroup v1: a peak usage this close to the limit reached it
MEMORY_USAGE = (  # under /sys/fs/cgroup, v2 then v1: the usage, the counters, those of the (reclaimable) file cache
    ("memory.current", "memory.stat", ("active_file", "inactive_file")),
    ("memory/memory.usage_in_bytes", "memory/memory.stat", ("total_active_file", "total_inactive_file")),
)


# ----- the channel to the host --------------------------------------------------------------------------
def receive(stream):
    """The next message from the host, or ``None`` when it closed the channel."""
    header = read_exact(stream, HEADER.size)
    if header is None:
        return None
    body = read_exact(stream, HEADER.unpack(header)[0])
    return None if body is None else json.loads(body)


def read_exact(stream, n):
    chunks, left = [], n
    while left:
        chunk = stream.read(left)
        if not chunk:
            return None
        chunks.append(chunk)
        left -= len(chunk)
    return b"".join(chunks)


def send(stream, message):
    body = json.dumps(message).encode()
    stream.write(HEADER.pack(len(body)) + body)
    stream.flush()


# ----- one run ---------------------------------------------------------------------------------------------
class Runner:
    """Carries out runs one at a time, as ``uid``, in folders under ``root``; ``reap``: clean the container."""

    def __init__(self, root, uid, reap, preload=None):
        self.root, self.uid, self.reap, self.preload = root, uid, reap, preload
        self.warm = None  # the WarmInterpreter Python runs are forked from, if there is one

    def serve(self, inbox, outbox):
        """Clean, take the host's setup (``precompile``: code many runs share, never secret), start
        the warm interpreter (before any request: its memory never holds one), serve."""
        clean = self.clean(everyone=True)
        setup = receive(inbox) or {}
        if self.preload is not None:
            try:
                self.warm = WarmInterpreter(self.preload, setup.get("precompile", ()),
                                            os.path.join(self.root, "main.py"))
            except Exception:  # Python runs start a fresh interpreter instead
                self.warm = None
        send(outbox, {"ready": True, "clean": clean, "warm": self.warm is not None, "baseline": self.baseline()})
        while (req := receive(inbox)) is not None:
            send(outbox, self.run(req))

    def run(self, req):
        """Compile if needed, run, clean up; the run's facts (output base64-encoded, up to one byte past the cap)."""
        facts = {"exit_code": None, "timed_out": False, "over_limit": False, "compile_failed": False,
                 "memory_killed": False, "cpu_killed": False, "killed_externally": False, "duration": 0.0,
                 "cpu_seconds": 0.0, "stdout": "", "stderr": "", "error": None, "build": None}
        workdir = tempfile.mkdtemp(dir=self.root)
        try:
            os.chown(workdir, self.uid, self.uid)
            command = self.prepare(req, workdir, facts)
            if command is not None:
                before = memory_events()
                outcome = self.execute(req, command, workdir, stdin=req["stdin"].encode(), timeout=req["timeout"],
                                       memory_mb=req["memory_mb"])
                facts.update(outcome.facts(req["timeout"], before, memory_events()),
                             cpu_seconds=facts["cpu_seconds"] + outcome.cpu_used)
        except WarmInterpreterGone as exc:  # this runner cannot fork runs any more: the host starts another
            facts.update(error=f"the container's runner failed: {exc}", retire=True)
            self.warm.close()  # killed and reaped now: the clean below then kills the run's orphans, sparing nothing of it
            self.warm = None
        except Exception as exc:  # the run's behaviour is unknown: the host abstains
            facts["error"] = f"the container's runner failed: {type(exc).__name__}: {exc}"
        finally:
            facts["leftover"] = not self.clean(workdir)
            facts["baseline"] = self.baseline()
        return facts

    def baseline(self):
        """The container's memory baseline once a run is gone (``memory_baseline``); ``None`` outside a container."""
        return memory_baseline() if self.reap else None

    def prepare(self, req, workdir, facts):
        """Write the program (compiling it if needed); the command to run, or ``None`` when ``facts`` are final."""
        for name, content in req["files"].items():
            self.write(os.path.join(workdir, name), content.encode())
        command = req["run"] or ["./" + (req["artefact"] or "main")]
        tools = ([] if req["executable"] else (req["compile"] or [])[:1]) + (req["run"] or [])[:1]
        missing = [tool for tool in tools if shutil.which(tool, path=ENV["PATH"]) is None]
        if missing:  # the image's fault, not the program's: the host abstains
            facts["error"] = f"{missing[0]} is not installed in the container image (Debian package {req['toolchain']!r})"
            return None
        if req["executable"]:
            self.write(os.path.join(workdir, req["artefact"]), base64.b64decode(req["build"]),
                       mode=0o644 if req["run"] else 0o755)
            return command
        self.write(os.path.join(workdir, req["source"]), req["code"].encode())
        if not req["compile"]:
            return [sys.executable, req["source"]] if self.warm is None else WARM
        start = time.monotonic()
        outcome = self.execute(req, req["compile"], workdir, stdin=b"", timeout=req["compile_timeout"],
                               memory_mb=req["compile_memory_mb"])
        facts["compile_duration"] = time.monotonic() - start
        facts["cpu_seconds"] = outcome.cpu_used
        if outcome.timed_out:
            facts.update(timed_out=True, compile_timed_out=True)
            return None
        if outcome.status is None or outcome.status != 0:  # the compiler's messages are on stderr or stdout
            facts.update(exit_code=1, compile_failed=True,
                         stderr=base64.b64encode(bytes(outcome.stderr + outcome.stdout)).decode())
            return None
        artefact = os.path.join(workdir, req["artefact"])
        if req["package"]:  # javac's classes: zipped into the jar the runtime reads
            os.replace(shutil.make_archive(os.path.join(workdir, "build"), "zip", os.path.join(workdir, req["package"])),
                       artefact)
        if req["compile_only"]:
            with open(artefact, "rb") as f:
                facts.update(exit_code=0, build=base64.b64encode(f.read()).decode())
            return None
        return command

    def write(self, path, data, mode=0o644):
        with open(path, "wb") as f:
            f.write(data)
        os.chown(path, self.uid, self.uid)
        os.chmod(path, mode)

    def execute(self, req, command, workdir, *, stdin, timeout, memory_mb):
        """Run ``command`` (``WARM``: the Python source, forked from the warm interpreter) as the
        sandbox uid in its own session, with ``stdin`` as its fd 0 only."""
        stdin_fd = memory_file(stdin)
        out_r, out_w = os.pipe()
        err_r, err_w = os.pipe()
        fds = (stdin_fd, out_w, err_w)
        start = time.monotonic()
        outcome = Outcome(start, req["output_limit"])
        pipes = {out_r: outcome.stdout, err_r: outcome.stderr}
        try:
            try:
                if command is WARM:
                    pid, pidfd = self.warm.start(workdir, req["source"], self.uid,
                                                 limits(req, timeout, memory_mb, self.warm.baseline), fds)
                else:
                    pid = spawn(command, workdir, fds, self.uid, limits(req, timeout, memory_mb, INTERPRETER_MB << 20),
                                req.get("env", {}))
                    pidfd = os.pidfd_open(pid)
            finally:
                for fd in fds:
                    os.close(fd)
            try:
                outcome.supervise(pidfd, pipes, start + timeout)
                try:
                    signal.pidfd_send_signal(pidfd, signal.SIGKILL)  # past its deadline or cap; a no-op once it exited
                except ProcessLookupError:
                    pass
            finally:
                os.close(pidfd)
            if command is WARM:
                status, outcome.cpu_used = self.warm.finish(REAP_TIMEOUT)  # it killed the run's process group
                self.kill_the_rest()
            else:
                self.kill_the_rest(session=pid)
                _, status, usage = os.wait4(pid, 0)
                outcome.cpu_used = usage.ru_utime + usage.ru_stime
            if outcome.exited and not outcome.over_limit:
                outcome.status = status
            outcome.drain(pipes)
        finally:
            for fd in pipes:
                os.close(fd)
        return outcome

    def kill_the_rest(self, session=None, everyone=False):
        """Kill the run's processes: its ``session``, and with ``reap`` every process in the container
        but pid 1, the runner and its warm interpreter (``everyone``: that one too), waited for until
        pid 1 has reaped them (zombies would count against the pids limit of the next run). False if
        some remain."""
        if session is not None:
            try:
                os.killpg(session, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
        if not self.reap:
            return True
        spared = {1, os.getpid(), session}  # session: the run's main process, a zombie until the runner waits for it
        if self.warm is not None and not everyone:
            spared.add(self.warm.pid)
        deadline = time.monotonic() + REAP_TIMEOUT
        while left := [int(p) for p in os.listdir("/proc") if p.isdigit() and int(p) not in spared]:
            if time.monotonic() > deadline:
                return False
            if everyone:
                try:
                    os.kill(-1, signal.SIGKILL)
                except ProcessLookupError:
                    pass
            else:
                kill_as(self.uid, left)
            time.sleep(0.002)
        return True

    def clean(self, workdir=None, everyone=False):
        """Leave nothing of a run: with ``reap`` every other process (``everyone``: the warm
        interpreter too) and every file runs may write, else only ``workdir``; False if something remains."""
        if self.reap:
            return self.kill_the_rest(everyone=everyone) and wipe(SCRATCH)
        if workdir is not None:
            shutil.rmtree(workdir, ignore_errors=True)
        return True


class Outcome:
    """What one process did: its output (capped), whether it exited, ran out of time or output."""

    def __init__(self, start, limit):
        self.start, self.limit = start, limit
        self.stdout, self.stderr = bytearray(), bytearray()
        self.exited = self.timed_out = self.over_limit = False
        self.status = None
        self.cpu_used = 0.0
        self.duration = 0.0

    def supervise(self, ended, pipes, deadline):
        """Collect output until the process (its pidfd ``ended``) exits, passes the output cap or its deadline."""
        poller = select.poll()
        for fd in (*pipes, ended):
            poller.register(fd, select.POLLIN)
        try:
            while not (self.exited or self.over_limit):
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    self.timed_out = True
                    break
                for fd, _ in poller.poll(remaining * 1000):
                    if fd == ended:
                        self.exited = True
                    elif not self.take(fd, pipes[fd]):
                        poller.unregister(fd)
        finally:
            self.duration = time.monotonic() - self.start

    def take(self, fd, buffer):
        """Read what the pipe holds into ``buffer`` (kept up to one byte past the cap); False at its end."""
        chunk = os.read(fd, 1 << 16)
        buffer += chunk[:self.limit + 1 - len(buffer)]
        self.over_limit = self.over_limit or len(buffer) > self.limit
        return bool(chunk)

    def drain(self, pipes):
        """What the pipes still hold once every writer is gone (then reads end at EOF, none blocks)."""
        for fd, buffer in pipes.items():
            os.set_blocking(fd, False)
            try:
                while len(buffer) <= self.limit and self.take(fd, buffer):
                    pass
            except BlockingIOError:  # a writer survived (no reaping): what it did not write is lost
                pass

    def facts(self, timeout, before, after):
        """The run's facts for the host; ``before``/``after``: the container's memory counters around it."""
        killed = self.status is not None and os.WIFSIGNALED(self.status) and os.WTERMSIG(self.status) == signal.SIGKILL
        cpu_killed = killed and self.cpu_used >= math.ceil(timeout) + 1 - 0.05
        oom_kills = reached = 0
        if before is not None and after is not None:
            version, hits, kills = after
            reached, oom_kills = hits - before[1] if version == 2 else hits, kills - before[2]
        return {
            "exit_code": None if self.status is None else os.waitstatus_to_exitcode(self.status),
            "timed_out": self.timed_out, "over_limit": self.over_limit, "duration": self.duration,
            "memory_killed": oom_kills > 0 and reached > 0, "cpu_killed": cpu_killed,
            "killed_externally": not reached and (oom_kills > 0 or (killed and not cpu_killed)),
            "stdout": base64.b64encode(self.stdout).decode(), "stderr": base64.b64encode(self.stderr).decode(),
        }


def spawn(command, workdir, fds, uid, rlimits, env):
    """Fork the run's process and exec ``command`` in it (see ``enter_run``), with the language's ``env``; its pid."""
    pid = os.fork()
    if pid == 0:
        try:
            enter_run(fds, uid, rlimits)
            for number in (signal.SIGPIPE, signal.SIGXFSZ):  # ignored by Python, and an ignored signal survives exec
                signal.signal(number, signal.SIG_DFL)
            os.chdir(workdir)
            os.execve(command[0] if "/" in command[0] else shutil.which(command[0], path=ENV["PATH"]) or command[0], command,
                      dict(ENV, **env, HOME=workdir))
        finally:
            os._exit(127)
    return pid


def enter_run(fds, uid, rlimits):
    """In a run's forked process: the run's descriptors as 0, 1, 2 (nothing else open), its own
    session, first pick of the OOM killer, the sandbox uid for good, then its rlimits."""
    for fd, target in zip(fds, (0, 1, 2), strict=True):
        os.dup2(fd, target)
    os.closerange(3, 1 << 16)
    os.setsid()
    with open("/proc/self/oom_score_adj", "w") as f:
        f.write("1000")
    if os.getuid() != uid:
        os.setgroups([])
        os.setresgid(uid, uid, uid)
        os.setresuid(uid, uid, uid)
    for which, value in rlimits:
        resource.setrlimit(which, (value, value))


def limits(req, cpu, memory_mb, baseline):
    """rlimits for a run, as (resource, value) pairs; ``baseline``: the address space its interpreter
    holds before the program starts, in bytes. Processes are capped by the container's pids limit,
    not RLIMIT_NPROC, which would count every process of uid 65534 on the host. RLIMIT_CORE 1: no
    core dump, even through a pipe core_pattern helper."""
    reserved = req["max_processes"] * THREAD_STACK_MB + req.get("reserve_mb", 0)  # + what a JVM/V8/Go runtime reserves
    address_space = baseline + (memory_mb + reserved) * 1024 * 1024
    return [(resource.RLIMIT_CPU, math.ceil(cpu) + 1), (resource.RLIMIT_AS, address_space),
            (resource.RLIMIT_FSIZE, req["disk_mb"] * 1024 * 1024), (resource.RLIMIT_NOFILE, req["max_open_files"]),
            (resource.RLIMIT_CORE, 1)]


def kill_as(uid, left):
    """Kill every process ``uid`` may signal (``kill(-1)`` from a child that became ``uid``): all a
    run left, and nothing of root's (the runner, its warm interpreter, pid 1). Where no child can be
    forked (the run's processes fill the pids limit) the pids ``left`` are killed one by one."""
    try:
        pid = os.fork()
    except OSError:
        for victim in left:
            try:
                os.kill(victim, signal.SIGKILL)
            except ProcessLookupError:
                pass
        return
    if pid == 0:
        try:
            os.setgroups([])
            os.setresgid(uid, uid, uid)
            os.setresuid(uid, uid, uid)
            os.kill(-1, signal.SIGKILL)
        finally:
            os._exit(0)
    os.waitpid(pid, 0)


# ----- the warm interpreter ------------------------------------------------------------------------------
WARM = ("<warm>",)  # the command of a Python run forked from the warm interpreter


class WarmInterpreterGone(Exception):
    """The warm interpreter ended or stopped answering: this runner can fork no more Python runs."""


class WarmInterpreter:
    """A child of the runner that imported the common modules once and forks each Python run, so a
    run costs a fork instead of an interpreter's start-up. Forked before the runner reads any
    request, and sent only numbers and descriptors after, so nothing of any run's code, tests or
    output is ever in its memory, and so in none of the runs it forks."""

    def __init__(self, preload, precompile=(), filename="main.py"):
        self.channel, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        runner = os.getpid()
        self.pid = os.fork()
        if self.pid == 0:
            try:
                self.channel.close()
                serve_warm(theirs, runner, preload, precompile, filename)
            finally:
                os._exit(0)
        theirs.close()
        try:
            self.baseline = self.receive(STARTUP_TIMEOUT)[0]["baseline"]
        except WarmInterpreterGone:
            self.close()
            raise

    def close(self):
        """End the interpreter and reap it (a zombie would look like a run's leftover)."""
        self.channel.close()
        try:
            os.kill(self.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        os.waitpid(self.pid, 0)

    def start(self, workdir, source, uid, rlimits, fds):
        """Fork a run of ``workdir/source`` with ``fds`` as its 0, 1, 2; its pid and a pidfd of it."""
        job = {"workdir": workdir, "source": source, "uid": uid, "limits": rlimits}
        try:
            socket.send_fds(self.channel, [json.dumps(job).encode()], list(fds))
        except OSError as exc:
            raise WarmInterpreterGone(f"the warm interpreter is gone ({exc})") from None
        started, pidfds = self.receive(REAP_TIMEOUT)
        if "error" in started:
            raise RuntimeError(f"the warm interpreter could not fork the run: {started['error']}")
        if len(pidfds) != 1:
            raise WarmInterpreterGone("the warm interpreter sent no pidfd")
        return started["pid"], pidfds[0]

    def finish(self, timeout):
        """The run's wait status and CPU seconds, once it ended (the interpreter reaps it)."""
        done, _ = self.receive(timeout)
        return done["status"], done["cpu"]

    def receive(self, timeout):
        ready, _, _ = select.select([self.channel], [], [], timeout)
        if not ready:
            raise WarmInterpreterGone(f"the warm interpreter did not answer within {timeout:.0f} s")
        try:
            body, fds, _, _ = socket.recv_fds(self.channel, 1 << 16, 1)
        except OSError as exc:
            raise WarmInterpreterGone(f"the warm interpreter is gone ({exc})") from None
        if not body:
            raise WarmInterpreterGone("the warm interpreter ended")
        return json.loads(body), fds


def serve_warm(channel, runner, preload, precompile, filename):
    """The warm interpreter's life: die with the runner, hold none of its streams, import
    ``preload`` and compile ``precompile`` (code many runs share, as ``filename``), then fork one run
    per job until the runner closes the channel."""
    import ctypes
    import gc
    import importlib

    ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG: end with the runner
    if os.getppid() != runner:
        return
    devnull = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1):  # the host's channel: no run may read requests or write answers through it
        os.dup2(devnull, fd)
    os.close(devnull)
    for name in preload:
        try:
            importlib.import_module(name)
        except Exception:  # a missing optional module only costs the programs that need it
            pass
    compiled = {source.encode(): compile(source, filename, "exec") for source in precompile}
    gc.collect()
    gc.freeze()  # keep the shared heap's pages shared after each fork
    with open("/proc/self/statm") as f:
        channel.send(json.dumps({"baseline": int(f.read().split()[0]) * os.sysconf("SC_PAGE_SIZE")}).encode())
    while True:
        body, fds, _, _ = socket.recv_fds(channel, 1 << 16, 3)
        if not body:
            return
        job = json.loads(body)
        try:
            pid = os.fork()
        except OSError as exc:  # out of processes or memory: this run abstains, the next may fork
            for fd in fds:
                os.close(fd)
            channel.send(json.dumps({"error": str(exc)}).encode())
            continue
        if pid == 0:
            try:
                warm_run(job, fds, compiled)
            finally:
                os._exit(127)
        for fd in fds:
            os.close(fd)
        pidfd = os.pidfd_open(pid)
        socket.send_fds(channel, [json.dumps({"pid": pid}).encode()], [pidfd])
        os.close(pidfd)
        os.waitid(os.P_PID, pid, os.WEXITED | os.WNOWAIT)  # ended, not reaped: its group id is still its own
        try:
            os.killpg(pid, signal.SIGKILL)  # what it started in its session
        except (ProcessLookupError, PermissionError):
            pass
        _, status, usage = os.wait4(pid, 0)
        channel.send(json.dumps({"status": status, "cpu": usage.ru_utime + usage.ru_stime}).encode())


def warm_run(job, fds, compiled):
    """In a run forked from the warm interpreter: enter the run, then run its source as ``python3
    main.py`` (with the code object compiled at the start where the source is one of ``compiled``)."""
    enter_run(fds, job["uid"], job["limits"])
    os.environ.clear()
    os.environ.update(ENV, HOME=job["workdir"])
    os.chdir(job["workdir"])
    path = os.path.join(job["workdir"], job["source"])
    with open(path, "rb") as f:
        source = f.read()
    run_python(path, compiled.get(source))


def memory_file(data):
    """A memory file holding ``data`` at offset 0: a run's stdin, in no folder any run can list."""
    fd = os.memfd_create("stdin")
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]
    os.lseek(fd, 0, os.SEEK_SET)
    return fd


def memory_events():
    """The container's memory counters: (cgroup version, limit hits, OOM kills), or ``None`` where
    unreadable. v2 counts the times the limit was hit with an OOM kill; v1 counts no such thing, so
    there "hits" is 1 if the peak usage (since the container started) reaches the limit now in force."""
    try:
        with open("/sys/fs/cgroup/memory.events") as f:
            counters = dict(line.split() for line in f if line.strip())
        return 2, int(counters["oom"]), int(counters["oom_kill"])
    except (OSError, ValueError, KeyError):
        pass
    try:
        with open("/sys/fs/cgroup/memory/memory.oom_control") as f:
            counters = dict(line.split() for line in f if line.strip())
        peak, limit = (int(read_text(f"/sys/fs/cgroup/memory/memory.{name}"))
                       for name in ("max_usage_in_bytes", "limit_in_bytes"))
        return 1, int(peak >= limit - PEAK_SLACK), int(counters["oom_kill"])
    except (OSError, ValueError, KeyError):
        return None


def memory_baseline():
    """What the container holds in memory that it cannot reclaim (its usage less the file cache: the
    runner, the warm interpreter, pid 1, the kernel's share), in bytes; ``None`` where unreadable."""
    for usage, counters_file, cache in MEMORY_USAGE:
        try:
            lines = read_text(f"/sys/fs/cgroup/{counters_file}").splitlines()
            counters = dict(line.split() for line in lines if line.strip())
            return max(0, int(read_text(f"/sys/fs/cgroup/{usage}")) - sum(int(counters[name]) for name in cache))
        except (OSError, ValueError, KeyError):
            pass
    return None


def read_text(path):
    with open(path) as f:
        return f.read()


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
    for child_entry in os.scandir(entry.path):
        remove(child_entry)
    os.rmdir(entry.path)


def main(argv):
    options = dict(arg[2:].split("=", 1) for arg in argv if arg.startswith("--") and "=" in arg)
    reap = "root" not in options
    uid = int(options.get("uid", SANDBOX_UID if reap else os.getuid()))
    preload = [name for name in options["preload"].split(",") if name] if "preload" in options else None
    Runner(options.get("root", "/work"), uid, reap, preload).serve(sys.stdin.buffer, sys.stdout.buffer)


if __name__ == "__main__":
    main(sys.argv[1:])
