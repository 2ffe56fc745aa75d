"""The program the ``code`` reward runs around a Python solution, and how to read what it reports.

One harness, two processes in one sandbox run. The *test process* (the run's main program) reads
the solution's part of stdin, forks the *solution process*, and only then reads the tests' part,
so nothing of the tests is ever in the solution process's memory. The solution process loads the
solution in fresh globals and answers calls over a pipe, each value returned as plain data
(``_plain.py``); it has no access to the result records (stdout stays with the test process, which
is not dumpable, so the solution cannot reach its descriptors or memory). The test process never
runs solution code: it either

- makes the calls the trainer planned (``calls``: probes of ``probe`` suites, ``fn_name`` cases)
  and reports each value, which the trainer checks (``suites.py``); or
- runs test scripts (``scripts``: loops, helpers, random inputs) in its own globals with the real
  builtins and the prompt's own helpers, where each name the tests take from the solution is a
  stand-in that makes the call in the solution process. A value the tests pass that cannot cross as
  plain data (a callable, an object of the test's) makes the test *unusable*: the row abstains. A
  value the solution returns that is not plain data fails the test (no verdict may rest on the
  solution's own ``__eq__``, and no solution may turn its 0 into an abstention that way).

Records, one JSON list per line, ``[index, kind, payload]``; index -1 is about the run itself:
``[-1, "loaded", how]`` (``ready``, ``syntax``, ``failed``, ``exited``) first, ``[-1, "done", n]``
last. The trainer counts a run's records only if the run ended that way (``read_report``).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ._plain import NotPlainData, decode

PLAIN_SOURCE = Path(__file__).with_name("_plain.py").read_text()

# Runs in the sandbox after _plain.py's source (stdlib only).
MAIN = r'''
import builtins as _builtins, json as _json, os as _os, signal as _signal, sys as _sys, traceback as _traceback

_REPLY_LIMIT = 1 << 22  # bytes of one answer of the solution process


class _Gone(BaseException):
    """The solution process stopped answering (exited, killed, broke the protocol)."""


class _Unusable(BaseException):
    """A value the tests need cannot cross between the processes as plain data."""


def _send(fd, data, write=_os.write):
    view = memoryview(data)
    while view:
        view = view[write(fd, view):]


def _read_exact(fd, size, read=_os.read):
    chunks = []
    while size > 0:
        chunk = read(fd, min(size, 1 << 20))
        if not chunk:
            break
        chunks.append(chunk)
        size -= len(chunk)
    return b"".join(chunks)


def _read_all(fd, read=_os.read):
    chunks = []
    while chunk := read(fd, 1 << 20):
        chunks.append(chunk)
    return b"".join(chunks)


def _lines(fd, read=_os.read):
    """The lines arriving on ``fd``; a line over _REPLY_LIMIT or the end of the stream raises EOFError."""
    buffer, searched = bytearray(), 0
    while True:
        end = buffer.find(b"\n", searched)
        if end >= 0:
            line = bytes(buffer[:end])
            del buffer[:end + 1]
            searched = 0
            yield line
            continue
        searched = len(buffer)
        if searched > _REPLY_LIMIT:
            raise EOFError("an answer over the size limit")
        chunk = read(fd, 1 << 16)
        if not chunk:
            raise EOFError("the solution process closed its answers")
        buffer += chunk


# ----- the solution process: everything from here on is within the solution's reach ------------------
def _serve(code, requests, replies, compile=compile, exec=exec, dumps=_json.dumps, loads=_json.loads,
           plain=plain, decode=decode, send=_send, lines=_lines):
    """Load the solution, then answer each call; what the solution patches later breaks only its answers."""
    def answer(message):
        send(replies, (dumps(message) + "\n").encode())

    namespace = {"__name__": "solution", "__builtins__": _builtins}
    try:
        solution = compile(code, "solution.py", "exec")
    except (SyntaxError, ValueError) as exc:
        return answer({"loaded": "syntax", "detail": type(exc).__name__})
    try:
        exec(solution, namespace)
    except SystemExit:
        return answer({"loaded": "exited", "detail": ""})
    except BaseException as exc:
        _traceback.print_exception(exc)
        return answer({"loaded": "failed", "detail": _describe(exc)})
    answer({"loaded": "ready"})
    for line in lines(requests):
        answer(_answer(namespace, loads(line), plain, decode))


def _describe(exc):
    try:
        return (type(exc).__name__ + ": " + str(exc))[:200]
    except BaseException:
        return type(exc).__name__[:60]


def _target(namespace, name, method):
    """A call's function: a method of class Solution (LeetCode style, ``method``) or a name of the solution."""
    solution = namespace.get("Solution")
    if method and isinstance(solution, type) and hasattr(solution, name):
        return getattr(solution(), name)
    if name in namespace:
        return namespace[name]
    raise NameError("the solution defines no " + name)


def _answer(namespace, request, plain, decode):
    try:
        if request["op"] == "lookup":
            if request["name"] not in namespace:
                return {"missing": True}
            value = namespace[request["name"]]
            return {"callable": True} if callable(value) else {"value": plain(value)}
        target = _target(namespace, request["name"], request.get("method", False))
        args = [decode(arg) for arg in request["args"]]
        kwargs = {key: decode(value) for key, value in request.get("kwargs", {}).items()}
        value = target(*args, **kwargs)
        reply = {"value": plain(value), "args": [
            None if type(arg) not in (list, dict, set) or plain(arg) == sent else plain(arg)
            for arg, sent in zip(args, request["args"])]}  # what the call changed in its arguments
        return reply
    except NotPlainData as exc:
        return {"unusable": str(exc)[:200]}
    except BaseException as exc:
        return {"raised": type(exc).__name__[:60], "message": _describe(exc),
                "fatal": not isinstance(exc, Exception)}


# ----- the test process: never runs solution code ----------------------------------------------------
class _Solution:
    """The test process's end of the pipes to the solution process."""

    def __init__(self, pid, requests, replies):
        self.pid, self.requests, self.replies = pid, requests, _lines(replies)
        self.gone = ""  # why it no longer answers
        self.status = -1  # its wait status, once it is gone
        self.spoiled = None  # set during a test when something made its verdict void (kind, why)

    def first(self):
        return self._reply()

    def ask(self, message):
        if self.gone:
            raise _Gone(self.gone)
        try:
            _send(self.requests, (_json.dumps(message) + "\n").encode())
        except OSError:
            self.stop("the solution process exited")
        return self._reply()

    def _reply(self):
        try:
            reply = _json.loads(next(self.replies))
            if type(reply) is not dict:
                raise ValueError("not an answer")
            return reply
        except (EOFError, StopIteration, ValueError, RecursionError) as exc:
            self.stop("the solution process stopped answering" if isinstance(exc, (EOFError, StopIteration))
                      else "the solution process broke the protocol")
        raise _Gone(self.gone)

    def stop(self, why):
        if not self.gone:
            self.gone = why
            try:  # stopped, not killed: no run may send SIGKILL (the sandbox reads one as a kill from outside)
                _os.kill(self.pid, _signal.SIGSTOP)
                self.status = _os.waitpid(self.pid, _os.WUNTRACED)[1]
            except OSError:
                pass
        self.spoil("fail", "gone")
        raise _Gone(self.gone)

    def spoil(self, kind, why):
        if self.spoiled is None:
            self.spoiled = (kind, why)

    def unusable(self, why):
        self.spoil("unusable", why)
        raise _Unusable(why)

    def call(self, name, args, kwargs, method=False):
        try:
            request = {"op": "call", "name": name, "args": [plain(a) for a in args],
                       "kwargs": {k: plain(v) for k, v in kwargs.items()}, "method": method}
        except NotPlainData as exc:
            self.unusable("the tests pass the solution a value that cannot cross to it (" + str(exc) + ")")
        reply = self.ask(request)
        if "raised" in reply:
            if reply.get("fatal"):  # SystemExit, KeyboardInterrupt: no test may catch it and pass
                self.spoil("fail", "gone")
                raise _Gone("gone")
            kind = getattr(_builtins, str(reply["raised"]), None)
            if not (isinstance(kind, type) and issubclass(kind, Exception)):
                kind = Exception
            try:
                error = kind(str(reply.get("message", "")))
            except Exception:
                error = Exception(str(reply.get("message", "")))
            raise error
        if "unusable" in reply:  # the solution's value is not plain data: the test fails, whatever it catches
            self.spoil("fail", "unreadable")
            raise _Gone("unreadable")
        try:
            value = decode(reply["value"])
            changed = reply.get("args") or []
            for arg, now in zip(args, changed):
                if now is not None:
                    _write_back(arg, decode(now))
        except (KeyError, TypeError, NotPlainData, RecursionError):
            self.stop("the solution process broke the protocol")
        return value


def _write_back(arg, now):
    """Apply what the call did to a list, dict or set argument to the test's own object."""
    if type(arg) is list and type(now) is list:
        arg[:] = now
    elif type(arg) in (dict, set) and type(now) is type(arg):
        arg.clear()
        arg.update(now)


class _Function:
    """What the tests see of a function of the solution: calling it calls it in the solution process."""

    def __init__(self, solution, name):
        self.__name__ = self.__qualname__ = name
        self._solution = solution

    def __call__(self, *args, **kwargs):
        return self._solution.call(self.__name__, args, kwargs)

    def __repr__(self):
        return "<function " + self.__name__ + " of the solution>"


class _Names(dict):
    """The tests' builtins: the real ones, then (for names nothing else defines) the solution's."""

    def __init__(self, solution):
        super().__init__(vars(_builtins))
        self.solution = solution

    def __missing__(self, name):
        reply = self.solution.ask({"op": "lookup", "name": name})
        if reply.get("missing"):
            raise KeyError(name)
        if reply.get("callable"):
            self[name] = found = _Function(self.solution, name)
            return found
        if "value" not in reply:
            self.solution.spoil("fail", "unreadable")
            raise _Gone("unreadable")
        try:
            return decode(reply["value"])
        except NotPlainData:
            self.solution.stop("the solution process broke the protocol")


def _run_calls(solution, calls, record):
    for index, call in enumerate(calls):
        try:
            reply = solution.ask({"op": "call", **call})
        except _Gone as exc:
            record(index, "error", "gone")
            continue
        if "value" in reply:
            try:
                decode(reply["value"])
            except (NotPlainData, RecursionError):
                record(index, "error", "unreadable")
            else:
                record(index, "value", reply["value"])
        elif "raised" in reply:
            record(index, "error", str(reply["raised"])[:60])
            if reply.get("fatal"):
                try:
                    solution.stop("gone")
                except _Gone:
                    pass
        elif "unusable" in reply:
            record(index, "error", "unreadable")
        else:
            try:
                solution.stop("gone")
            except _Gone:
                record(index, "error", "gone")


def _run_scripts(solution, tests, record):
    namespace = {"__name__": "__main__", "__builtins__": _Names(solution)}
    if tests.get("prompt"):
        try:  # the dataset's own code: its helpers are the ones the tests mean, whatever the solution defines
            exec(compile(tests["prompt"], "prompt", "exec"), namespace)
        except BaseException:
            pass
        for name in tests.get("untrusted", []):  # the prompt's stubs and the entry point: the solution's
            namespace.pop(name, None)
        solution.spoiled = None
    for index, script in enumerate(tests["scripts"]):
        solution.spoiled = None
        try:
            exec(compile(script, "test_" + str(index), "exec"), namespace)
        except (_Gone, _Unusable):
            pass
        except BaseException as exc:
            solution.spoil("fail", type(exc).__name__)
        kind, why = solution.spoiled or ("pass", "")
        record(index, kind, why[:200])
        if kind == "unusable":
            return


def _main():
    size_line = b""
    while not size_line.endswith(b"\n") and len(size_line) < 24:
        size_line += _os.read(0, 1)
    solution_part = _json.loads(_read_exact(0, int(size_line)))
    requests_r, requests_w = _os.pipe()
    replies_r, replies_w = _os.pipe()
    pid = _os.fork()
    if pid == 0:
        try:
            for fd in (requests_w, replies_r, 0):
                _os.close(fd)
            _os.dup2(2, 1)
            _sys.stdin = open(_os.devnull)
            _serve(solution_part["solution"], requests_r, replies_w)
        finally:
            _os._exit(0)
    for fd in (requests_r, replies_w):
        _os.close(fd)
    _signal.signal(_signal.SIGINT, _signal.SIG_DFL)  # a signal from the solution must not become an exception here
    records = _os.dup(1)
    _os.dup2(2, 1)
    _sys.path[:] = [p for p in _sys.path if p and not p.startswith(("/work", "/tmp", "/dev"))]
    _os.chdir("/")
    tests = _json.loads(_read_all(0))
    _os.close(0)

    def record(index, kind, payload):
        _send(records, (_json.dumps([index, kind, payload]) + "\n").encode())

    solution = _Solution(pid, requests_w, replies_r)
    try:
        loaded = solution.first()
    except _Gone:
        exited = solution.status >= 0 and _os.WIFEXITED(solution.status)
        loaded = {"loaded": "exited" if exited else "failed", "detail": "" if exited else "it died"}
    record(-1, "loaded", [str(loaded.get("loaded")), str(loaded.get("detail", ""))[:200]])
    if loaded.get("loaded") == "ready":
        if "calls" in tests:
            _run_calls(solution, tests["calls"], record)
        else:
            _run_scripts(solution, tests, record)
    if not solution.gone:
        try:
            solution.stop("done")
        except _Gone:
            pass
    record(-1, "done", len(tests.get("calls", tests.get("scripts", []))))
    _os._exit(0)


_main()
'''

HARNESS = PLAIN_SOURCE + MAIN


def harness_input(solution: str, tests: dict) -> str:
    """The harness's stdin: the solution's part (length first), then the tests' part (read after the fork)."""
    head = json.dumps({"solution": solution})  # ASCII: its length in characters is its length in bytes
    return f"{len(head)}\n{head}{json.dumps(tests)}"


# ----- reading a run's records ---------------------------------------------------------------------------
@dataclass
class Report:
    """What one harness run reported, read only if the run ended as an honest run ends.

    ``problem``: why the records do not count ("" when they do); ``loaded``: how the solution
    loaded (``ready``, ``syntax``, ``failed``, ``exited``) and the detail; ``entries``: per index,
    ``(kind, payload)`` with values decoded.
    """

    problem: str = ""
    loaded: tuple[str, str] = ("missing", "")
    entries: dict[int, tuple[str, Any]] = field(default_factory=dict)

    def entry(self, index: int) -> tuple[str, Any]:
        return self.entries.get(index, ("error", "not run"))


def read_report(result: Any, count: int) -> Report:
    """Parse a harness run's records; work is bounded by ``count`` (lines past it are not read)."""
    if result.timed_out or result.stdout_truncated or result.exit_code != 0:
        return Report(problem="the run did not finish")
    lines = result.stdout.split("\n", count + 3)
    if len(lines) > count + 3:
        return Report(problem="more records than the tests have")
    report, done = Report(), False
    for line in lines[:-1] if lines and lines[-1] == "" else lines:
        try:
            index, kind, payload = json.loads(line)
        except (ValueError, TypeError, RecursionError):
            return Report(problem="malformed records")
        if type(index) is not int or type(kind) is not str or not -1 <= index < count:
            return Report(problem="malformed records")
        if index == -1:
            if kind == "loaded" and isinstance(payload, list) and len(payload) == 2 and report.loaded[0] == "missing":
                report.loaded = (str(payload[0]), str(payload[1]))
            elif kind == "done" and report.loaded[0] != "missing" and not done:
                done = True
            else:
                return Report(problem="malformed records")
            continue
        if done or index in report.entries:
            return Report(problem="malformed records")
        if kind == "value":
            try:
                payload = decode(payload)
            except (NotPlainData, RecursionError) as exc:
                kind, payload = "error", f"unreadable value ({exc})"
        report.entries[index] = (kind, payload)
    return report if done else Report(problem="the run did not finish")
