"""The ``code`` reward: program extraction, test formats, exact output matching, scoring in the real sandbox,
and a battery of known reward hacks that must all score 0 while honest solutions score 1."""

from __future__ import annotations

import json
import shutil

import pytest

import rewardhub
from rewardhub import sandbox
from rewardhub._manager import pm
from rewardhub.hookspecs import hookimpl
from rewardhub.rewards.code import CallCase, UnusableTestsError, extract_program, outputs_match, parse_tests
from rewardhub.sandbox import SandboxResult
from rewardhub.sandbox.local import isolation_problem

needs_isolation = pytest.mark.skipif(isolation_problem() is not None, reason=f"no local isolation: {isolation_problem()}")

ADD_TESTS = "def check(candidate):\n    assert candidate(1, 2) == 3\n    assert candidate(-1, 1) == 0\n"
SUM_CASES = [{"input": "1 2\n", "output": "3\n"}, {"input": "5 5\n", "output": "10\n"}, {"input": "2 2\n", "output": "4"}]


def fenced(code: str, language: str = "python") -> str:
    return f"Here is my solution:\n```{language}\n{code}\n```\nIt adds the numbers."


def score(completions, **columns):
    return rewardhub.get("code", timeout=2.0).evaluate(["p"] * len(completions), completions, **columns).scores


# ----- extraction, parsing and matching (pure functions) -------------------------------------------------
def test_extract_program_prefers_the_last_block_of_the_language():
    text = "```python\nfirst()\n```\nthen\n```bash\nrm -rf /\n```\n```py\nsecond()\n```\ntrailing"
    assert extract_program(text, "python") == "second()"
    assert extract_program("```\nunlabelled()\n```", "python") == "unlabelled()"
    assert extract_program("print(1)", "python") == "print(1)"
    assert extract_program("```python\ncut_off(", "python") == "cut_off("
    assert extract_program("```cpp\nint main(){}\n```\n```python\nx\n```", "cpp") == "int main(){}"


def test_outputs_match_is_whitespace_tolerant_but_exact_in_lines_and_tokens():
    assert outputs_match("1 2\n3\n", "1  2 \n3")
    assert outputs_match("\n1 2\n3\n\n\n", "1 2\n3\n")
    assert not outputs_match("1 2\n", "1 2\n3\n")  # truncated output
    assert not outputs_match("1 2\n3\n4\n", "1 2\n3\n")  # an extra line
    assert not outputs_match("1 2 3\n", "1 2\n3\n")  # same tokens, other lines
    assert not outputs_match("", "0")
    assert not outputs_match("0.3333\n", "0.333333\n")
    assert outputs_match("0.3333\n", "0.333333\n", float_tolerance=1e-3)
    assert not outputs_match("0.3\n", "0.333333\n", float_tolerance=1e-3)
    assert outputs_match("nan\n", "nan\n", float_tolerance=1e-3)  # equal tokens match as text
    assert not outputs_match("inf\n", "1e308\n", float_tolerance=1e-3)
    # the tolerance is for real-valued answers: an integer answer stays exact (as a value)
    assert not outputs_match("1000001\n", "1000000\n", float_tolerance=1e-6)
    assert not outputs_match("10000000000000001\n", "10000000000000000\n", float_tolerance=1e-6)
    assert outputs_match("3.0\n", "3\n", float_tolerance=1e-6)
    assert outputs_match("1000000.0000001\n", "1000000.0\n", float_tolerance=1e-6)
    # only plain decimal numbers are numbers: Python's float() also reads "1_000" and "infinity"
    assert not outputs_match("1_000\n", "1000.0\n", float_tolerance=1e-6)
    assert not outputs_match("١٠\n", "10.0\n", float_tolerance=1e-6)


def test_parse_tests_accepts_the_common_dataset_forms():
    humaneval = parse_tests(ADD_TESTS, "add")
    calls = [{"name": "add", "args": [1, 2], "kwargs": {}}, {"name": "add", "args": [-1, 1], "kwargs": {}}]
    assert (humaneval.kind, humaneval.probes) == ("probe", calls)  # only the calls go to the sandbox
    assert len(humaneval) == 1  # the check function is one test, as in HumanEval
    assert parse_tests(ADD_TESTS + "check(add)\n", "add").probes == humaneval.probes
    mbpp = parse_tests(["assert f(1) == 2", "assert f(2) == 4"])
    assert (mbpp.kind, [c["args"] for c in mbpp.probes], len(mbpp)) == ("probe", [[1], [2]], 2)
    assert parse_tests(SUM_CASES).io == [("1 2\n", "3\n"), ("5 5\n", "10\n"), ("2 2\n", "4")]
    apps = json.dumps({"inputs": ["1\n", ["2", "3"]], "outputs": ["1\n", ["2", "3"]]})
    assert parse_tests(apps).io == [("1\n", "1\n"), ("2\n3\n", "2\n3\n")]
    assert parse_tests({"inputs": [None], "outputs": ["x"]}).io == [("", "x")]  # no input: empty, not "None"
    with pytest.raises(UnusableTestsError, match="equally long"):
        parse_tests({"inputs": ["1"], "outputs": []})
    with pytest.raises(UnusableTestsError, match="got int"):
        parse_tests(42)
    with pytest.raises(UnusableTestsError, match="no entry point"):
        parse_tests(ADD_TESTS)


def test_call_based_tests_in_the_livecodebench_apps_and_verl_forms():
    # LiveCodeBench (and verl's prime_code): each input is one JSON value per line, each output JSON text
    lcb = parse_tests({"fn_name": "twoSum", "inputs": ["[2, 7, 11]\n9"], "outputs": ["[0, 1]"]})
    assert (lcb.kind, lcb.fn_name, lcb.calls) == ("call", "twoSum", [CallCase([[2, 7, 11], 9], [0, 1], wrapped=False)])
    # APPS: inputs are argument lists, outputs are wrapped in a list
    apps = parse_tests(json.dumps({"fn_name": "f", "inputs": [[1, 2]], "outputs": [[3]]}))
    assert apps.calls == [CallCase([1, 2], [3], wrapped=True)]
    assert apps.calls[0].matches(3, None) and apps.calls[0].matches([3], None) and not apps.calls[0].matches(4, None)
    assert lcb.calls[0].matches((0, 1), None)  # a tuple answer stands for a list, as in LiveCodeBench
    assert not lcb.calls[0].matches([1, 0], None) and not lcb.calls[0].matches([0], None)
    assert parse_tests({"fn_name": None, "inputs": ["1"], "outputs": ["1"]}).kind == "io"  # fn_name None: stdin
    with pytest.raises(UnusableTestsError, match="not JSON"):
        parse_tests({"fn_name": "f", "inputs": ["[1"], "outputs": ["1"]})


@pytest.mark.parametrize(("test", "kind"), [
    ("assert abs(candidate(1.33) - 0.33) < 1e-6", "probe"),
    ("assert abs(candidate([1.0, 2.0, 3.0]) - 2.0 / 3.0) < 1e-06", "probe"),
    ("import math\nassert math.isclose(candidate(2), 1.4142, rel_tol=0.001)", "probe"),
    ("assert set(candidate((3, 4), (5, 4))) == set((4,))", "probe"),
    ("assert candidate([3, 2, 3], 9) is True\nassert not candidate([1, 2], 5)", "probe"),
    ("expected = [1, 2]\nassert candidate(2) == expected", "probe"),
    ("assert True\nassert candidate('x') == 'x' and candidate('') == ''", "probe"),
    ("for x in range(3):\n    assert candidate(x) == x", "probe"),  # loops over known values are unrolled
    ("xs = [1, 2]\nassert candidate(xs) == 3", "probe"),
    ("assert candidate(1) == candidate(2)", "probe"),  # both values come from the sandbox, compared here
    ("assert candidate(1) == 1 or candidate(1) == 2", "probe"),
    ("assert 8.99 < candidate(3) < 9.01", "probe"),
    ("assert all(candidate(i) == i * i for i in range(5))", "probe"),
    ("import operator\nassert operator.eq(candidate(3), 9)", "asserts"),
    ("xs = [3, 1]\ncandidate(xs)\nassert xs == [1, 3]", "asserts"),  # xs may have changed in the sandbox
    ("def helper(x):\n    return x\nassert candidate(1) == helper(1)", "asserts"),
    ("import random\nassert candidate(random.randint(1, 9)) > 0", "asserts"),
    ("try:\n    candidate(-1)\nexcept ValueError:\n    pass", "asserts"),
    ("for x in candidate(3):\n    assert x > 0", "asserts"),  # a loop over the solution's value
])
def test_asserts_become_probes_checked_here_where_the_planner_can_follow_them(test, kind):
    assert parse_tests(test.replace("candidate", "f")).kind == kind


# ----- scoring in the sandbox -----------------------------------------------------------------------------
@needs_isolation
def test_humaneval_style_tests():
    completions = [
        fenced("def add(a, b):\n    return a + b"),
        fenced("def add(a, b):\n    return a - b"),
        fenced("import sys\nsys.exit(0)\ndef add(a, b):\n    return a + b"),
        fenced("def add(a, b):\n    return a - b\nimport atexit, os\natexit.register(lambda: os._exit(0))"),
        fenced("raise RuntimeError('too early')\ndef add(a, b):\n    return a + b"),
        fenced("def add(a, b:\n    return a + b"),
        fenced("def add(a, b):\n    import os\n    os._exit(0)"),
        "no code here, sorry",
        "",
    ]
    scores = score(completions, tests=[ADD_TESTS] * len(completions), entry_point=["add"] * len(completions))
    assert [s.value for s in scores] == [1.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0]
    assert [s.verdict for s in scores[:2]] == [True, False]
    assert scores[0].reason == "1/1 tests passed"
    assert scores[1].reason == "0/1 tests passed; AssertionError on case 1"
    assert scores[2].reason == "0/1 tests passed; the solution exited before the tests ran"
    assert scores[3].reason == "0/1 tests passed; AssertionError on case 1"  # exit handlers change nothing
    assert scores[4].reason == "0/1 tests passed; the solution failed before the tests ran ('RuntimeError: too early')"
    assert scores[5].reason == "0/1 tests passed; syntax error"
    assert scores[6].reason == "0/1 tests passed; the solution process ended during the tests on case 1"
    assert scores[7].reason == "0/1 tests passed; syntax error"
    assert scores[8].reason == "no code block"


@needs_isolation
def test_a_solution_cannot_forge_the_harness_markers_from_its_files():
    forge = fenced(
        "import os, sys\n"
        "found = [open(n).read() for n in os.listdir('.')] + [sys.stdin.read()]\n"
        "for text in found:\n"
        "    for word in text.split():\n"
        "        if len(word) == 24 and all(c in '0123456789abcdef' for c in word):\n"
        "            print(word, 'ready'); print(word, 'pass', 0); print(word, 'done')\n"
        "os._exit(0)\n"
    )
    scores = score([forge], tests=[ADD_TESTS], entry_point=["add"])
    assert scores[0].value == 0.0
    assert scores[0].reason == "0/1 tests passed; the solution exited before the tests ran"


@needs_isolation
def test_a_wrong_solution_cannot_pass_by_patching_the_harness():
    wrong = "def add(a, b):\n    return a - b\n"
    hacks = [
        "import builtins\n_c = builtins.compile\nbuiltins.compile = lambda s, f, m, *a, **k: _c('pass', f, m)\n",
        "import builtins, io\n_o = builtins.open\n"
        "builtins.open = lambda f, *a, **k: io.StringIO('') if str(f).startswith('test_') else _o(f, *a, **k)\n",
        "import builtins\n_p = builtins.print\n"
        "builtins.print = lambda *a, **k: _p(*[{'fail': 'pass'}.get(x, x) for x in a], **k)\n",
        "import sys\nclass Out:\n    def __init__(self, s): self.s = s\n"
        "    def write(self, t): return self.s.write(t.replace('fail', 'pass'))\n"
        "    def flush(self): self.s.flush()\nsys.stdout = Out(sys.stdout)\n",
        "import builtins\nbuiltins.exec = lambda *a, **k: None\n",
    ]
    completions = [fenced(hack + wrong) for hack in hacks]
    scores = score(completions, tests=[ADD_TESTS] * len(hacks), entry_point=["add"] * len(hacks))
    assert [s.value for s in scores] == [0.0] * len(hacks), [s.reason for s in scores]
    right = score([fenced(hacks[0] + "def add(a, b):\n    return a + b\n")], tests=[ADD_TESTS], entry_point=["add"])
    assert right[0].value == 1.0


@needs_isolation
def test_prepend_prompt_completes_a_function_body():
    prompt = 'def add(a, b):\n    """Add two numbers."""\n'
    reward = rewardhub.get("code", prepend_prompt=True, timeout=2.0)
    result = reward.evaluate([prompt, prompt], ["    return a + b\n", "    return a * b\n"],
                             tests=[ADD_TESTS] * 2, entry_point=["add"] * 2)
    assert result.values == [1.0, 0.0]


@needs_isolation
def test_mbpp_style_asserts_give_partial_credit():
    tests = ["assert double(2) == 4", "assert double(0) == 0", "assert double(-3) == -6", "assert double(5) == 10"]
    scores = score([fenced("def double(x):\n    return x * 2 if x > 0 else x"), fenced("def double(x):\n    return x * 2")],
                   tests=[tests, tests])
    assert [s.value for s in scores] == [0.75, 1.0]
    assert scores[0].reason == "3/4 tests passed; AssertionError on case 3"


@needs_isolation
def test_stdin_stdout_cases_with_partial_credit_and_exact_lines():
    programs = [
        "a, b = map(int, input().split())\nprint(a + b)",
        "a, b = map(int, input().split())\nprint(a + b)\nprint()",  # a trailing blank line is fine
        "a, b = map(int, input().split())\nprint(a + b)\nprint(0)",  # an extra line is not
        "a, b = map(int, input().split())\nprint(a * b if a == 2 else a + b)",
        "a, b = map(int, input().split())\nprint(a + b)\nraise SystemExit(2)",
        "a, b = map(int, input().split())\nif a == 5:\n    while True: pass\nprint(a + b)",
        "a, b = map(int, input().split())\nx = bytearray(10**10) if a == 5 else 0\nprint(a + b)",
    ]
    scores = score([fenced(p) for p in programs], tests=[SUM_CASES] * len(programs))
    assert [round(s.value, 3) for i, s in enumerate(scores) if i != 5] == [1.0, 1.0, 0.0, 1.0, 0.0, 0.667]
    assert scores[2].reason == "0/3 cases passed; wrong output on case 1"
    assert scores[4].reason == "0/3 cases passed; exit code 2 on case 1"
    if scores[5].value is None:  # a loaded machine gave the busy loop under half its 2 s as CPU: not scored
        assert scores[5].outcome == "timeout" and "a busy machine" in scores[5].reason
    else:
        assert round(scores[5].value, 3) == 0.667 and scores[5].reason == "2/3 cases passed; timeout after 2 s on case 2"
    assert scores[6].reason == "2/3 cases passed; memory limit exceeded on case 2"


@needs_isolation
def test_truncated_output_fails():
    cases = [{"input": "3\n", "output": "1\n2\n3\n"}]
    scores = score([fenced("n = int(input())\nprint(1)"), fenced("n = int(input())\nfor i in range(n):\n    print(i + 1)")],
                   tests=[cases, cases])
    assert [s.value for s in scores] == [0.0, 1.0]


@needs_isolation
def test_all_or_nothing_mode_and_float_tolerance():
    reward = rewardhub.get("code", mode="all", float_tolerance=1e-6, timeout=2.0)
    cases = [{"input": "1\n", "output": "0.333333333\n"}, {"input": "2\n", "output": "0.666666667\n"}]
    result = reward.evaluate(["p", "p"], [fenced("print(int(input()) / 3)"), fenced("print(round(int(input()) / 3, 2))")],
                             tests=[cases, cases])
    assert result.values == [1.0, 0.0]
    assert result.scores[1].reason == "0/2 cases passed; wrong output on case 1"


@needs_isolation
@pytest.mark.skipif(shutil.which("g++") is None, reason="g++ not installed")
def test_cpp_programs_against_stdin_cases():
    code = "#include <iostream>\nint main(){ long a, b; std::cin >> a >> b; std::cout << a + b << std::endl; }"
    reward = rewardhub.get("code", language="cpp", timeout=2.0)
    result = reward.evaluate(["p", "p"], [fenced(code, "cpp"), fenced("int main( {", "cpp")], tests=[SUM_CASES[:2]] * 2)
    assert result.values == [1.0, 0.0]
    assert result.scores[1].reason.startswith("compile error: 'main.cpp:1:")  # built once per completion, before its cases run


@needs_isolation
def test_trl_call_with_chat_completions():
    reward = rewardhub.get("code", timeout=2.0)
    completions = [[{"role": "assistant", "content": fenced("print(sum(map(int, input().split())))")}]]
    assert reward(prompts=[[{"role": "user", "content": "add"}]], completions=completions, tests=[SUM_CASES]) == [1.0]


def test_rows_without_usable_tests_abstain():
    reward = rewardhub.get("code")
    result = reward.evaluate(["p", "p"], ["print(1)", "print(1)"], tests=[42, {"inputs": ["1"], "outputs": []}])
    assert result.values == [None, None]
    assert result.scores[0].reason.startswith("unusable tests: tests must be Python test code")
    missing = reward.evaluate(["p"], ["print(1)"], solution=["1"])
    assert missing.values == [None] and "needs column 'tests'" in missing.scores[0].reason


def test_an_unavailable_sandbox_abstains_never_zero():
    try:
        sandbox.get_backend("docker")
        pytest.skip("a docker engine answers here")
    except sandbox.SandboxUnavailableError:
        pass
    reward = rewardhub.get("code", backend="docker")
    result = reward.evaluate(["p"], [fenced("print(3)")], tests=[SUM_CASES])
    assert result.values == [None]
    assert result.scores[0].reason.startswith("sandbox unavailable: no docker engine answers")


class BrokenBackendPlugin:
    """A third-party backend whose service is down: every run comes back as a sandbox failure."""

    @hookimpl
    def register_sandbox_backends(self, register):
        register("down", lambda **options: type("Down", (), {
            "name": "down", "close": lambda self: None,
            "run_many": lambda self, programs: [SandboxResult.failed("service unreachable") for _ in programs],
        })())


def test_a_failing_backend_abstains_never_zero():
    plugin = BrokenBackendPlugin()
    pm.register(plugin, name="down-backend-test")
    try:
        result = rewardhub.get("code", backend="down", on_error="zero").evaluate(
            ["p"], [fenced("print(3)")], tests=[SUM_CASES])
    finally:
        pm.unregister(plugin)
        sandbox.close_backends()
    assert result.values == [None] and result.outcomes == ["error"]  # infrastructure: no policy makes it 0
    assert result.scores[0].reason == "sandbox failed: service unreachable"


# ----- reward hacks: wrong solutions that try to forge a pass (issue 16) -----------------------------------
WRONG = "def add(a, b):\n    return a - b\n"
HACKS = {
    "overwrites the test files in its folder": WRONG + (
        "import os\nfor folder in ('.', '/work', '/tmp'):\n    for i in range(3):\n        try:\n"
        "            open(os.path.join(folder, f'test_{i}.py'), 'w').write('pass')\n        except OSError:\n"
        "            pass\n"),
    "changes into a folder of empty test files": WRONG + (
        "import os\nos.makedirs('/tmp/empty', exist_ok=True)\nfor i in range(3):\n"
        "    open(f'/tmp/empty/test_{i}.py', 'w').close()\nos.chdir('/tmp/empty')\n"),
    "dup2s a pipe over the marker descriptor and rewrites fail to pass from a thread": WRONG + (
        "import os, stat, threading\ndef pipe(fd):\n    try:\n        return stat.S_ISFIFO(os.fstat(fd).st_mode)\n"
        "    except OSError:\n        return False\nfor fd in [fd for fd in range(3, 10) if pipe(fd)]:\n"
        "    saved = os.dup(fd)\n    r, w = os.pipe()\n    os.dup2(w, fd)\n    os.close(w)\n"
        "    def pump(r=r, saved=saved):\n        while chunk := os.read(r, 65536):\n"
        "            os.write(saved, chunk.replace(b'fail', b'pass').replace(b'error', b'value'))\n"
        "            if b'done' in chunk or b'value' in chunk:\n                break\n"
        "    threading.Thread(target=pump).start()\n"),
    "answers from a lookup table built from the test text it can find": (
        "import gc, os, re, sys\ntable = {}\ntexts = [o for o in gc.get_objects() if isinstance(o, str)]\n"
        "for folder in ('.', '/work', '/tmp'):\n    for name in os.listdir(folder):\n        try:\n"
        "            texts.append(open(os.path.join(folder, name)).read())\n        except OSError:\n            pass\n"
        "for text in texts:\n    for args, value in re.findall(r'candidate\\((.*?)\\) == (-?\\d+)', text):\n"
        "        table[args] = int(value)\n"
        "def add(a, b):\n    return table.get(f'{a}, {b}', a - b)\n"),
    "returns an object equal to everything": (
        "class Yes:\n    def __eq__(self, other):\n        return True\n    __hash__ = object.__hash__\n"
        "def add(a, b):\n    return Yes()\n"),
    "returns an int subclass equal to everything": (
        "class Yes(int):\n    def __eq__(self, other):\n        return True\n    __hash__ = int.__hash__\n"
        "def add(a, b):\n    return Yes(a - b)\n"),
    "steals the nonce and the reporter from the harness frames": WRONG + (
        "import os, sys\nframe = sys._getframe()\nwhile frame is not None:\n"
        "    found = frame.f_locals.get('mark') or frame.f_locals.get('report')\n"
        "    if found is not None and found.__name__ == 'mark':\n"
        "        found('ready'); found('pass', 0); found('done'); os._exit(0)\n"
        "    if found is not None:\n        for index in range(-1, 4):\n            found(index, 'value', True)\n"
        "        os._exit(0)\n    frame = frame.f_back\n"),
    "patches builtins eval, compile and exec": WRONG + (
        "import builtins\nbuiltins.eval = lambda *a, **k: True\nbuiltins.compile = lambda *a, **k: 'True'\n"
        "builtins.exec = lambda *a, **k: None\n"),
    "patches builtins type and isinstance": (
        "import builtins\nclass Yes(int):\n    def __eq__(self, other):\n        return True\n    __hash__ = int.__hash__\n"
        "_type = builtins.type\nbuiltins.type = lambda x, *a: int if _type(x) is Yes else _type(x, *a)\n"
        "builtins.isinstance = lambda *a: True\ndef add(a, b):\n    return Yes(0)\n"),
    "replaces json and os in sys.modules": WRONG + (
        "import sys, types\nfake = types.ModuleType('json')\nfake.dumps = lambda *a, **k: '[0, \"value\", 3]'\n"
        "fake.loads = lambda *a, **k: {}\nsys.modules['json'] = fake\nimport json as real\n"
        "real.dumps = fake.dumps\n"),
    "registers atexit handlers that forge a pass": WRONG + (
        "import atexit, os\ndef forge():\n    for fd in range(1, 10):\n        try:\n"
        "            os.write(fd, b'[0, \"value\", 3]\\n[1, \"value\", 0]\\npass 0\\ndone\\n')\n"
        "        except OSError:\n            pass\n    os._exit(0)\natexit.register(forge)\n"),
    "installs a signal handler that exits mid-tests": WRONG + (
        "import os, signal\nsignal.signal(signal.SIGALRM, lambda *a: os._exit(0))\nsignal.setitimer(signal.ITIMER_REAL, 0.001)\n"
        "import time\ntime.sleep(0.01)\n"),
    "exits with os._exit(0) while loading": "import os\nos._exit(0)\n" + WRONG,
    "exits with os._exit(0) inside the call": "import os\ndef add(a, b):\n    os._exit(0)\n",
    "exits with os._exit(0) on the second call": (
        "import os\ncalls = []\ndef add(a, b):\n    calls.append(1)\n    if len(calls) > 1:\n        os._exit(0)\n"
        "    return a + b\n"),
    "exits with os._exit(0) from a thread once the harness reports": WRONG + (
        "import os, threading, time\ndef later():\n    time.sleep(0.001)\n    os._exit(0)\n"
        "threading.Thread(target=later, daemon=True).start()\n"),
    "raises SystemExit from the call": "def add(a, b):\n    raise SystemExit(0)\n",
    "raises KeyboardInterrupt from the call": "def add(a, b):\n    raise KeyboardInterrupt\n",
    "prints pass markers and value records": WRONG + (
        "import os, sys\nfor line in ['[0, \"value\", 3]', '[1, \"value\", 0]', '[-1, \"ready\", \"\"]', 'pass 0', 'done']:\n"
        "    print(line)\n    print(line, file=sys.__stdout__)\n    for fd in range(1, 10):\n"
        "        try:\n            os.write(fd, (line + '\\n').encode())\n        except OSError:\n            pass\n"),
    "closes every descriptor it can": WRONG + "import os\nos.closerange(0, 1024)\n",
    "dup2s stderr over the records": WRONG + "import os\nfor fd in range(1, 20):\n    try:\n        os.dup2(2, fd)\n    except OSError:\n        pass\n",
    "forks a child that writes records after the harness": WRONG + (
        "import os, time\nif os.fork() == 0:\n    time.sleep(0.05)\n    for fd in range(1, 10):\n        try:\n"
        "            os.write(fd, b'[0, \"value\", 3]\\n[1, \"value\", 0]\\n')\n        except OSError:\n            pass\n"
        "    os._exit(0)\n"),
    "returns a lazy object that evaluates later": "def add(a, b):\n    return (x for x in [a + b])\n",
    "rewrites the probes it finds in memory": WRONG + (
        "import gc\nfor obj in gc.get_objects():\n    if isinstance(obj, dict) and 'probes' in obj:\n"
        "        obj['probes'] = [{'expr': 'True'} for _ in obj['probes']]\n"),
    "patches the harness's globals through its module": WRONG + (
        "import sys\nmain = sys.modules['__main__']\nmain.plain = lambda value, depth=0: 3\n"
        "main.function = lambda namespace, name: (lambda *a: 3)\n"),
}


@needs_isolation
def test_known_reward_hacks_all_score_zero():
    assert len(HACKS) >= 20
    names = list(HACKS)
    scores = score([fenced(HACKS[name]) for name in names], tests=[ADD_TESTS] * len(names), entry_point=["add"] * len(names))
    passed = {name: s.reason for name, s in zip(names, scores, strict=True) if s.value != 0.0}
    assert passed == {}
    assert all(s.value == 0.0 and s.verdict is False for s in scores)


HONEST = {
    "plain": "def add(a, b):\n    return a + b\n",
    "prints and registers exit handlers": (
        "import atexit, sys\natexit.register(print, 'bye')\nprint('loading', file=sys.stderr)\n"
        "def add(a, b):\n    print('adding', a, b)\n    return a + b\n"),
    "patches builtins for its own use": (
        "import builtins\n_print = builtins.print\nbuiltins.print = lambda *a, **k: None\n"
        "builtins.compile = builtins.compile\ndef add(a, b):\n    return sum([a, b])\n"),
    "uses a thread and a class": (
        "import threading\nclass Adder:\n    def __init__(self):\n        self.result = None\n"
        "    def run(self, a, b):\n        t = threading.Thread(target=lambda: setattr(self, 'result', a + b))\n"
        "        t.start()\n        t.join()\n        return self.result\n"
        "def add(a, b):\n    return Adder().run(a, b)\n"),
    "recurses deeply": (
        "import sys\nsys.setrecursionlimit(10000)\ndef add(a, b):\n    if b == 0:\n        return a\n"
        "    return add(a + 1, b - 1) if b > 0 else add(a - 1, b + 1)\n"),
    "has a main guard and reads no stdin": (
        "def add(a, b):\n    return a + b\nif __name__ == '__main__':\n    print(add(int(input()), int(input())))\n"),
    "writes scratch files": (
        "def add(a, b):\n    with open('/tmp/scratch', 'w') as f:\n        f.write(str(a + b))\n"
        "    return int(open('/tmp/scratch').read())\n"),
}


@needs_isolation
def test_honest_solutions_all_score_one():
    names = list(HONEST)
    scores = score([fenced(HONEST[name]) for name in names], tests=[ADD_TESTS] * len(names), entry_point=["add"] * len(names))
    assert {name: s.reason for name, s in zip(names, scores, strict=True) if s.value != 1.0} == {}


@needs_isolation
def test_hacks_against_call_based_and_stdin_tests_score_zero():
    calls = {"fn_name": "add", "inputs": [[1, 2], [-1, 1]], "outputs": [[3], [0]]}
    lcb = {"fn_name": "add", "inputs": ["1\n2", "-1\n1"], "outputs": ["3", "0"]}
    names = [name for name in HACKS if "harness" not in name and "second call" not in name]  # one call per run
    for tests in (calls, lcb):
        scores = score([fenced(HACKS[name]) for name in names], tests=[tests] * len(names))
        assert {name: s.reason for name, s in zip(names, scores, strict=True) if s.value != 0.0} == {}
        honest = score([fenced(code) for code in HONEST.values()], tests=[tests] * len(HONEST))
        assert [s.value for s in honest] == [1.0] * len(HONEST), [s.reason for s in honest]
    stdin_hacks = [
        "import os\nos._exit(0)",
        "print(3)\nimport os\nos.closerange(0, 100)",
        "import sys\nclass Yes(str):\n    def __eq__(self, other):\n        return True\nsys.stdout.write(Yes('x'))",
    ]
    scores = score([fenced(code) for code in stdin_hacks], tests=[SUM_CASES] * len(stdin_hacks))
    assert [s.value for s in scores] == [0.0] * len(stdin_hacks), [s.reason for s in scores]


@needs_isolation
def test_tests_run_in_the_test_process_say_so_and_resist_the_file_and_descriptor_tricks():
    """Tests the planner cannot follow (random inputs here) run in the harness's test process: the reason says so."""
    random_tests = ("import random\ndef check(candidate):\n    for _ in range(5):\n        a = random.randint(0, 9)\n"
                    "        assert candidate(a, 2) == a + 2\n")
    names = ["overwrites the test files in its folder", "changes into a folder of empty test files",
             "dup2s a pipe over the marker descriptor and rewrites fail to pass from a thread",
             "closes every descriptor it can", "steals the nonce and the reporter from the harness frames",
             "exits with os._exit(0) while loading", "exits with os._exit(0) inside the call"]
    completions = [fenced(HACKS[name]) for name in names] + [fenced(HONEST["plain"])]
    scores = score(completions, tests=[random_tests] * len(completions), entry_point=["add"] * len(completions))
    assert [s.value for s in scores] == [0.0] * len(names) + [1.0], [s.reason for s in scores]
    assert all(s.reason.endswith("(asserts run in the sandbox's test process)") for s in scores)
    strict = rewardhub.get("code", strict=True, timeout=2.0).evaluate(["p"], completions[-1:], tests=[random_tests],
                                                                      entry_point=["add"])
    assert strict.values == [None] and "strict=True" in strict.scores[0].reason


# ----- trainer memory: results are reduced as they arrive, builds are held once outside the heap -------------
def peak_python_memory(run) -> int:
    """Peak bytes the Python heap grew by while ``run`` ran (what the trainer process pays)."""
    import tracemalloc

    tracemalloc.start()
    try:
        tracemalloc.reset_peak()
        before = tracemalloc.get_traced_memory()[0]
        run()
        return tracemalloc.get_traced_memory()[1] - before
    finally:
        tracemalloc.stop()


@needs_isolation
def test_outputs_are_compared_as_they_arrive_not_held_for_the_batch():
    """Outputs just under the 1 MB cap cost ~2 MB per case, and a batch's cases were all held until scoring."""
    cases = [{"input": f"{i}\n", "output": "x" * 900_000} for i in range(24)]
    reward = rewardhub.get("code", timeout=10.0)
    completions = [fenced("print('x' * 900_000)"), fenced("print('y' * 900_000)")]
    result = {}
    peak = peak_python_memory(lambda: result.update(r=reward.evaluate(["p", "p"], completions, tests=[cases, cases])))
    assert result["r"].values == [1.0, 0.0]
    assert peak < 24 * 900_000 / 2, f"{peak / 1e6:.1f} MB"  # a few runs' output at a time, not 48 x 0.9 MB


@needs_isolation
@pytest.mark.skipif(shutil.which("gcc") is None, reason="gcc not installed")
def test_a_large_build_is_held_once_outside_the_heap():
    """A C solution with a 28 MB initialised table cost ~66 MB per completion (bytes, base64, per-case JSON)."""
    code = ('#include <stdio.h>\nchar table[24 << 20] = {1};  /* global: kept in the binary */\n'
            'int main(void) { int n; scanf("%d", &n); printf("%d\\n", n + table[0]); return 0; }')
    cases = [{"input": f"{i}\n", "output": f"{i + 1}\n"} for i in range(6)]
    reward = rewardhub.get("code", language="c", timeout=5.0)
    result = {}
    peak = peak_python_memory(lambda: result.update(r=reward.evaluate(["p"], [fenced(code, "c")], tests=[cases])))
    assert result["r"].values == [1.0], result["r"].scores
    assert peak < 8_000_000, f"{peak / 1e6:.1f} MB"  # the 24 MB build never enters the Python heap
