"""The ``code`` reward: program extraction, test formats, exact output matching, scoring in the real sandbox."""

from __future__ import annotations

import json
import shutil

import pytest

import rewardhub
from rewardhub import sandbox
from rewardhub._manager import pm
from rewardhub.hookspecs import hookimpl
from rewardhub.rewards.code import Cases, UnusableTestsError, extract_program, outputs_match, parse_tests
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
    assert humaneval.scripts == [ADD_TESTS + "\n\ncheck(add)\n"]
    assert parse_tests(ADD_TESTS + "check(add)\n", "add").scripts == [ADD_TESTS + "check(add)\n"]
    assert parse_tests(["assert f(1) == 2", "assert f(2) == 4"]).scripts == ["assert f(1) == 2", "assert f(2) == 4"]
    assert parse_tests(SUM_CASES).io == [("1 2\n", "3\n"), ("5 5\n", "10\n"), ("2 2\n", "4")]
    apps = json.dumps({"inputs": ["1\n", ["2", "3"]], "outputs": ["1\n", ["2", "3"]]})
    assert parse_tests(apps) == Cases(io=[("1\n", "1\n"), ("2\n3\n", "2\n3\n")])
    with pytest.raises(UnusableTestsError, match="call-based tests"):
        parse_tests({"inputs": [[1]], "outputs": [2], "fn_name": "f"})
    with pytest.raises(UnusableTestsError, match="equally long"):
        parse_tests({"inputs": ["1"], "outputs": []})
    with pytest.raises(UnusableTestsError, match="got int"):
        parse_tests(42)


# ----- scoring in the sandbox -----------------------------------------------------------------------------
@needs_isolation
def test_humaneval_style_tests():
    completions = [
        fenced("def add(a, b):\n    return a + b"),
        fenced("def add(a, b):\n    return a - b"),
        fenced("import sys\nsys.exit(0)\ndef add(a, b):\n    return a + b"),
        fenced("def add(a, b):\n    return a + b\nimport atexit, os\natexit.register(lambda: os._exit(1))"),
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
    assert scores[2].reason == "the solution exited before the tests ran"
    assert scores[3].reason.startswith("the program exited before the tests finished (exit code 1)")
    assert scores[4].reason == "the solution failed before the tests ran (RuntimeError: too early)"
    assert scores[5].reason == "syntax error"
    assert scores[6].reason.startswith("the program exited before the tests finished")
    assert scores[7].reason == "syntax error"
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
    assert scores[0].reason == "the solution exited before the tests ran"


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
    assert [round(s.value, 3) for s in scores] == [1.0, 1.0, 0.0, 1.0, 0.0, 0.667, 0.667]
    assert scores[2].reason == "0/3 cases passed; wrong output on case 1"
    assert scores[4].reason == "0/3 cases passed; exit code 2 on case 1"
    assert scores[5].reason == "2/3 cases passed; timeout after 2 s on case 2"
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
    assert result.scores[1].reason == "compile error"  # built once per completion, before its cases run


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
        result = rewardhub.get("code", backend="down").evaluate(["p"], [fenced("print(3)")], tests=[SUM_CASES])
    finally:
        pm.unregister(plugin)
        sandbox.close_backends()
    assert result.values == [None]
    assert result.scores[0].reason == "sandbox failed: service unreachable"
