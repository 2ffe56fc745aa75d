"""Run a Python program in an interpreter that is already warm, as ``python3 main.py`` would run it.

Shared by the local backend's zygote and the docker backend's warm interpreter: both fork a process
that has imported the common modules already, set up its descriptors, uid and limits, then call
``run_python``. Stdlib only (it runs outside the rewardhub package, in containers too).
"""

import os
import signal
import sys
import types

__all__ = ["exit_status", "run_python"]

_REPLACED = []  # the interpreter's earlier standard streams, never freed (see run_python)


def run_python(path, compiled=None):
    """Run the script at ``path`` (or ``compiled``, its code object made earlier) as ``__main__``, with
    fds 0-2 as its standard streams, then end the process with the program's exit status."""
    import atexit
    import builtins
    import threading

    # The streams being replaced stay referenced: freeing them would close fds 0-2, now the program's.
    _REPLACED.extend((sys.stdin, sys.stdout, sys.stderr, sys.__stdin__, sys.__stdout__, sys.__stderr__))
    sys.stdin = sys.__stdin__ = open(0, encoding="utf-8", closefd=False)
    sys.stdout = sys.__stdout__ = open(1, "w", encoding="utf-8", closefd=False)
    sys.stderr = sys.__stderr__ = open(2, "w", encoding="utf-8", errors="backslashreplace", closefd=False)
    folder = os.path.dirname(path)
    sys.argv = [os.path.basename(path)]
    sys.orig_argv = ["python3", sys.argv[0]]
    sys.path[:] = [folder] + [entry for entry in sys.path if entry not in ("", folder)]
    main = types.ModuleType("__main__")
    main.__file__ = path
    main.__builtins__ = builtins
    sys.modules["__main__"] = main
    code, interrupted = 0, False
    try:
        if compiled is None:
            with open(path, "rb") as f:  # bytes: the file's own encoding declaration applies, as in python
                compiled = compile(f.read(), path, "exec")
        exec(compiled, main.__dict__)
    except SystemExit as exc:
        code = exit_status(exc.code)
    except BaseException as exc:
        tb = exc.__traceback__.tb_next if exc.__traceback__ else None  # hide this frame, as python does
        sys.excepthook(type(exc), exc.with_traceback(tb), tb)
        code, interrupted = 1, isinstance(exc, KeyboardInterrupt)
    try:
        threading._shutdown()
        atexit._run_exitfuncs()
        sys.stdout.flush()
        sys.stderr.flush()
    except SystemExit as exc:
        code = exit_status(exc.code)
    except BaseException:
        code = code or 120
    if interrupted:  # as python does: end by the signal itself, so the parent sees SIGINT
        signal.signal(signal.SIGINT, signal.SIG_DFL)
        os.kill(os.getpid(), signal.SIGINT)
    os._exit(code)


def exit_status(code):
    """The process exit status ``sys.exit(code)`` gives: ``None`` 0, an int its low byte, else 1 (printed)."""
    if code is None:
        return 0
    if isinstance(code, int):
        return code & 0xFF
    print(code, file=sys.stderr)
    return 1
