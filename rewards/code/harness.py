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

from ._plain import NotPlainData, Opaque, decode

__all__ = ["HARNESS", "MAIN", "PLAIN_SOURCE", "Report", "harness_input", "read_report"]

PLAIN_SOURCE = Path(__file__).with_name("_plain.py").read_text()

# Runs in the sandbox after _plain.py's source (stdlib only).
MAIN = r'''
import builtins as _builtins, json as _json, os as _os, signal as _signal, sys as _sys, traceback as _traceback

_REPLY_LIMIT = 1 << 22  # bytes of one answer of the solution process
MAX_HANDLES = 1 << 16  # objects of the solution the tests may hold in one run


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
    """Load the solution, then answer each request; what the solution patches later breaks only its answers."""
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
    objects = _Objects()
    for line in lines(requests):
        request = loads(line)
        for call in request["calls"] if request["op"] == "batch" else [request]:  # a batch: one reply per call
            reply = _answer(namespace, call, objects, plain, decode)
            answer(reply)
            if reply.get("fatal"):
                break


class _Objects:
    """The solution's objects the tests hold handles to: numbered, kept alive, at most MAX_HANDLES."""

    def __init__(self):
        self.kept, self.numbers = [], {}

    def handle(self, obj):
        number = self.numbers.get(id(obj))
        if number is None:
            if len(self.kept) >= MAX_HANDLES:
                raise NotPlainData("more objects than the tests may hold")
            number = self.numbers[id(obj)] = len(self.kept)
            self.kept.append(obj)
        return [number, kind_name(obj)]

    def resolve(self, body):
        if type(body) is not list or not body or type(body[0]) is not int or not 0 <= body[0] < len(self.kept):
            raise NotPlainData("an unknown handle")
        return self.kept[body[0]]


def _describe(exc):
    try:
        return (type(exc).__name__ + ": " + str(exc))[:200]
    except BaseException:
        return type(exc).__name__[:60]


def _target(namespace, request, objects):
    """A call's function: a method of class Solution (LeetCode style, ``method``), a name of the solution,
    or an object the tests hold (called, or one of its attributes called)."""
    if request["op"] == "invoke":
        obj = objects.resolve(request["handle"])
        return obj if request.get("attr") is None else getattr(obj, request["attr"])
    name, solution = request["name"], namespace.get("Solution")
    if request.get("method", False) and isinstance(solution, type) and hasattr(solution, name):
        return getattr(solution(), name)
    if name in namespace:
        return namespace[name]
    raise NameError("the solution defines no " + name)


_MODULE, _METHODS = type(_json), (type(_Objects().handle), type([].append), type(_os.getpid))


def _answer(namespace, request, objects, plain, decode):
    try:
        op, handle = request["op"], objects.handle
        if op == "lookup":
            if request["name"] not in namespace:
                return {"missing": True}
            value = namespace[request["name"]]
            if type(value) is _MODULE and getattr(value, "__name__", None) in _sys.stdlib_module_names:
                return {"module": value.__name__}  # the test process imports its own, untouched copy
            return {"callable": True} if callable(value) else {"value": plain(value, 0, handle)}
        if op == "get":
            value = getattr(objects.resolve(request["handle"]), request["attr"])
            return {"method": True} if type(value) in _METHODS else {"value": plain(value, 0, handle)}
        if op == "set":
            setattr(objects.resolve(request["handle"]), request["attr"], decode(request["value"], 0, objects.resolve))
            return {"value": None}
        target = _target(namespace, request, objects)
        args = [decode(arg, 0, objects.resolve) for arg in request["args"]]
        kwargs = {key: decode(value, 0, objects.resolve) for key, value in request.get("kwargs", {}).items()}
        value = target(*args, **kwargs)
        reply = {"value": plain(value, 0, handle), "args": [
            None if type(arg) not in (list, dict, set) or plain(arg, 0, handle) == sent else plain(arg, 0, handle)
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
        self.proxies = {}  # object number -> the one proxy of it
        self.methods = {}  # object number -> names of its attributes known to be methods

    def first(self):
        return self._reply()

    def batch(self, messages):
        """Send ``messages`` as one request; the replies, one per message, as they arrive."""
        if messages:
            yield self.ask({"op": "batch", "calls": messages})
        for _ in messages[1:]:
            if self.gone:
                raise _Gone(self.gone)
            yield self._reply()

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
            try:  # stopped, not killed: a SIGKILL costs a round trip to the zygote, and the run's end kills it anyway
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
        return self.request({"op": "call", "name": name, "method": method}, args, kwargs)

    def invoke(self, number, attr, args, kwargs):
        return self.request({"op": "invoke", "handle": [number], "attr": attr}, args, kwargs)

    def request(self, message, args, kwargs):
        """Make a call in the solution process; its value (plain data and handles), with what the call
        changed in list, dict and set arguments written back to the test's own objects."""
        message["args"] = [self.plain(a) for a in args]
        message["kwargs"] = {k: self.plain(v) for k, v in kwargs.items()}
        reply = self.answer(self.ask(message))
        try:
            changed = reply.get("args") or []
            for arg, now in zip(args, changed):
                if now is not None:
                    _write_back(arg, self.decode(now))
        except (TypeError, AttributeError, NotPlainData, RecursionError):
            self.stop("the solution process broke the protocol")
        return self.decode(reply["value"])

    def answer(self, reply):
        """The reply of a request that returns a value; an exception the solution raised is raised here."""
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
        if "unusable" in reply:  # the solution's value cannot cross: the test fails, whatever it catches
            self.spoil("fail", "unreadable")
            raise _Gone("unreadable")
        if "value" not in reply and "method" not in reply:
            self.stop("the solution process broke the protocol")
        return reply

    def plain(self, value):
        try:
            return plain(value, 0, self.number)
        except NotPlainData as exc:
            self.unusable("the tests pass the solution a value that cannot cross to it (" + str(exc) + ")")

    def decode(self, data):
        try:
            return decode(data, 0, self.proxy)
        except (NotPlainData, RecursionError):  # e.g. objects as keys of a set: unhashable here
            self.spoil("fail", "unreadable")
            raise _Gone("unreadable")
        except TypeError:
            self.stop("the solution process broke the protocol")

    def number(self, value):
        """A handle's body, for a proxy of this solution's objects (anything else of the tests' cannot cross)."""
        if type(value) is _Handle and _solution_of(value) is self:
            return [_object_number(value), _object_kind(value)]
        raise NotPlainData("a " + type(value).__name__[:40] + " of the tests is not plain data")

    def proxy(self, body):
        if type(body) is not list or len(body) != 2 or type(body[0]) is not int or type(body[1]) is not str:
            raise NotPlainData("a bad handle")
        found = self.proxies.get(body[0])
        if found is None:
            found = self.proxies[body[0]] = _Handle(self, body[0], body[1][:MAX_NAME])
        return found


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


class _Unsupported(BaseException):
    """A test used an object of the solution in a way that would let the solution decide the check."""


_state = {}  # id(proxy) -> (its solution, the object's number, its type's name): nothing a test reaches as an attribute


class _Handle:
    """What the tests hold of an object of the solution, which stays in the solution process.

    Supported, each a request to the solution process: reading an attribute (plain data or another
    handle), setting one, calling a method or the object itself, and passing the handle back in a
    call (it stands for the object itself there). ``is``/``is not`` compare handles (one per object).
    Everything that would let the solution's own code decide a check, or run it here (``==`` and
    the other comparisons, ``bool``, ``hash``, ``len``, iteration, ``in``, ``str``, indexing,
    arithmetic, conversions, copying) fails the test, whatever the test catches; ``repr`` is our text.
    """

    __slots__ = ()

    def __init__(self, solution, number, kind):
        _state[id(self)] = (solution, number, kind)  # proxies live as long as the run (their solution keeps them)

    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        solution = _solution_of(self)
        methods = solution.methods.setdefault(_object_number(self), set())
        if name in methods:
            return _Method(self, name)
        reply = solution.answer(solution.ask({"op": "get", "handle": [_object_number(self)], "attr": name}))
        if reply.get("method"):
            methods.add(name)
            return _Method(self, name)
        return solution.decode(reply["value"])

    def __setattr__(self, name, value):
        solution = _solution_of(self)
        solution.answer(solution.ask({"op": "set", "handle": [_object_number(self)], "attr": str(name),
                                      "value": solution.plain(value)}))

    def __call__(self, *args, **kwargs):
        return _solution_of(self).invoke(_object_number(self), None, args, kwargs)

    def __repr__(self):
        return "<an object of the solution: " + _object_kind(self) + ">"

    def __delattr__(self, name):
        _unsupported(self, "del")

    __hash__ = None


def _solution_of(proxy):
    return _state[id(proxy)][0]


def _object_number(proxy):
    return _state[id(proxy)][1]


def _object_kind(proxy):
    return _state[id(proxy)][2]


def _unsupported(proxy, use):
    kind = _object_kind(proxy)
    if kind.startswith(STANDARD_MARK):  # the standard library's value: no verdict can be made on it here
        _solution_of(proxy).spoil("unusable", "a " + kind[len(STANDARD_MARK):] + " (standard library) used with "
                                  + use.strip("_") + ": the tests cannot check it outside the program")
    else:
        _solution_of(proxy).spoil("fail", "an object of the solution used with " + use.strip("_"))
    raise _Unsupported(use)


def _refusing(use):
    def refuse(self, *args, **kwargs):
        _unsupported(self, use)

    return refuse


for _use in ("__eq__", "__ne__", "__lt__", "__le__", "__gt__", "__ge__", "__bool__", "__len__", "__iter__",
             "__reversed__", "__contains__", "__getitem__", "__setitem__", "__delitem__", "__str__", "__format__",
             "__bytes__", "__int__", "__float__", "__complex__", "__index__", "__round__", "__trunc__", "__floor__",
             "__ceil__", "__enter__", "__exit__", "__reduce__", "__reduce_ex__", "__copy__", "__deepcopy__",
             "__length_hint__", "__dir__", "__sizeof__", "__instancecheck__", "__subclasscheck__",
             *("__%s__" % op for base in ("add", "sub", "mul", "matmul", "truediv", "floordiv", "mod", "divmod",
                                          "pow", "lshift", "rshift", "and", "xor", "or")
               for op in (base, "r" + base, "i" + base)),
             "__neg__", "__pos__", "__abs__", "__invert__"):
    setattr(_Handle, _use, _refusing(_use))
del _use


class _Method:
    """A method of an object of the solution, as the tests got it: calling it calls it there."""

    def __init__(self, proxy, name):
        self._proxy, self.__name__ = proxy, name

    def __call__(self, *args, **kwargs):
        return _solution_of(self._proxy).invoke(_object_number(self._proxy), self.__name__, args, kwargs)

    def __repr__(self):
        return "<method " + self.__name__ + " of an object of the solution>"


class _Names(dict):
    """The tests' builtins: the real ones, then (for names nothing else defines) the solution's."""

    def __init__(self, solution):
        super().__init__(vars(_builtins))
        self.solution = solution

    def __missing__(self, name):
        solution = self.solution
        reply = solution.ask({"op": "lookup", "name": name})
        if reply.get("missing"):
            raise KeyError(name)
        if reply.get("callable"):
            self[name] = found = _Function(solution, name)
            return found
        if type(reply.get("module")) is str and reply["module"] in _sys.stdlib_module_names:
            return __import__("importlib").import_module(reply["module"])  # this process's own copy
        return solution.decode(solution.answer(reply)["value"])


def _run_calls(solution, calls, record):
    """The planned calls, sent at once (one pipe round trip in all), each reply recorded as it comes."""
    replies = solution.batch([{"op": "call", **call} for call in calls])
    for index in range(len(calls)):
        try:
            reply = next(replies)
        except (_Gone, StopIteration):  # once gone, every later call is too
            record(index, "error", "gone")
            continue
        if "value" in reply:
            try:  # objects stay handles: the trainer sees them as opaque, and no check passes on one
                decode(reply["value"], 0, _handle_body)
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


def _handle_body(body):
    if type(body) is not list or len(body) != 2 or type(body[0]) is not int or type(body[1]) is not str:
        raise NotPlainData("a bad handle")


def _run_scripts(solution, tests, record):
    names = _Names(solution)
    namespace = {"__name__": "__main__", "__builtins__": names}
    if tests.get("prompt"):
        try:  # the dataset's own code: its helpers are the ones the tests mean, whatever the solution defines
            exec(compile(tests["prompt"], "prompt", "exec"), namespace)
        except BaseException:
            pass
        solution.spoiled = None
    for name in tests.get("untrusted", []):  # the prompt's stubs and the entry point: the solution's, even
        namespace.pop(name, None)  # where they are named like a builtin (MBPP's ``sum``)
        names.pop(name, None)
    for index, script in enumerate(tests["scripts"]):
        solution.spoiled = None
        try:
            exec(compile(script, "test_" + str(index), "exec"), namespace)
        except (_Gone, _Unusable, _Unsupported):  # the verdict is set already (fail, or unusable)
            pass
        except BaseException as exc:
            solution.spoil("fail", type(exc).__name__)
        kind, why = solution.spoiled or ("pass", "")
        record(index, kind, why[:200])
        if kind == "unusable":
            return


def _not_dumpable():
    """Make the test process non-dumpable unless its sandbox did (its /proc entries are then root's):
    a process of the same uid (the solution process) can then neither trace it nor open its
    descriptors (the tests' stdin) or memory through /proc. Where the sandbox execs the harness
    (docker), exec made it dumpable again."""
    if _os.getuid() == 0 or _os.stat("/proc/self/status").st_uid != _os.getuid():
        return
    import ctypes

    ctypes.CDLL(None, use_errno=True).prctl(4, 0, 0, 0, 0)  # PR_SET_DUMPABLE


def _main():
    _not_dumpable()
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
                payload = decode(payload, 0, Opaque)  # an object of the solution: opaque, no check passes on it
            except (NotPlainData, RecursionError) as exc:
                kind, payload = "error", f"unreadable value ({exc})"
        report.entries[index] = (kind, payload)
    return report if done else Report(problem="the run did not finish")
