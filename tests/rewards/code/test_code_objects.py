"""Objects of the solution in its tests (issue 20, class-based tests): honest class-based rows pass, and no
use of an object lets the solution decide a check.

A value the solution returns that is not plain data stays in the solution process; the tests hold a
handle (attribute reads and writes, method calls, calls, passed back in calls) and every other use
(``==``, ``bool``, ``hash``, ``len``, iteration, ``in``, ``str``, arithmetic) fails the test; the
trainer sees such a value as opaque.
"""

from __future__ import annotations

import pytest

import rewardhub
from rewardhub.rewards.code._plain import NotPlainData, ObjectUsed, Opaque, decode, plain
from rewardhub.rewards.code.checks import OBJECT_USED, holds
from rewardhub.rewards.code.suites import parse_tests
from rewardhub.sandbox.local import isolation_problem

needs_isolation = pytest.mark.skipif(isolation_problem() is not None, reason=f"no local isolation: {isolation_problem()}")


def fenced(code: str) -> str:
    return f"```python\n{code}\n```"


def scores(completions, tests, **columns):
    reward = rewardhub.get("code", timeout=10.0)
    return [(s.value, s.reason) for s in reward.evaluate(["p"] * len(completions), completions, tests=tests,
                                                          **columns).scores]


PAIR = ("class Pair(object):\n    def __init__(self, a, b):\n        self.a = a\n        self.b = b\n"
        "def max_chain_length(arr, n):\n    best = [1] * n\n    for i in range(1, n):\n        for j in range(i):\n"
        "            if arr[i].a > arr[j].b and best[i] < best[j] + 1:\n                best[i] = best[j] + 1\n"
        "    return max(best)\n")
PAIR_TESTS = ["assert max_chain_length([Pair(5, 24), Pair(15, 25), Pair(27, 40), Pair(50, 60)], 4) == 3",
              "assert max_chain_length([Pair(1, 2), Pair(3, 4), Pair(5, 6), Pair(7, 8)], 4) == 4",
              "assert max_chain_length([Pair(19, 10), Pair(11, 12), Pair(13, 14), Pair(15, 16), Pair(31, 54)], 5) == 5"]
LRU = ("from collections import OrderedDict\nclass LRUCache:\n    def __init__(self, capacity):\n"
       "        self.capacity, self.items = capacity, OrderedDict()\n    def get(self, key):\n"
       "        if key not in self.items:\n            return -1\n        self.items.move_to_end(key)\n"
       "        return self.items[key]\n    def put(self, key, value):\n        self.items[key] = value\n"
       "        self.items.move_to_end(key)\n        if len(self.items) > self.capacity:\n"
       "            self.items.popitem(last=False)\n")
LRU_TEST = ("obj = LRUCache(2)\nobj.put(1, 1)\nobj.put(2, 2)\nassert obj.get(1) == 1\nobj.put(3, 3)\n"
            "assert obj.get(2) == -1\nobj.put(4, 4)\nassert obj.get(1) == -1\nassert obj.get(3) == 3\nassert obj.get(4) == 4\n"
            "assert obj.capacity == 2")
TREE = ("class Node:\n    def __init__(self, data):\n        self.data = data\n        self.left = None\n"
        "        self.right = None\ndef max_height(node):\n    if node is None:\n        return 0\n"
        "    return max(max_height(node.left), max_height(node.right)) + 1\n")
TREE_SETUP = ("root = Node(1)\nroot.left = Node(2)\nroot.right = Node(3)\nroot.left.left = Node(4)\n"
              "root.left.left.left = Node(5)\n")
HONEST = [  # (solution, tests) pairs whose canonical solution must score 1.0
    (PAIR, PAIR_TESTS),
    (LRU, LRU_TEST),
    (LRU, [LRU_TEST]),
    (TREE, [TREE_SETUP + "assert max_height(root) == 4", TREE_SETUP + "assert max_height(root.right) == 1",
            TREE_SETUP + "assert root.left.data == 2 and root.left.left.left.left is None"]),
    ("class Stack:\n    def __init__(self):\n        self.items = []\n    def push(self, x):\n        self.items.append(x)\n"
     "    def pop(self):\n        return self.items.pop()\n    @property\n    def size(self):\n        return len(self.items)\n"
     "def make_stack():\n    return Stack()\n",
     "s = make_stack()\ns.push(3)\ns.push(4)\nassert s.size == 2\nassert s.pop() == 4\nassert s.items == [3]"),
    ("def make_adder(n):\n    return lambda x: x + n\n", ["add5 = make_adder(5)\nassert add5(3) == 8", "assert make_adder(2)(2) == 4"]),
    ("class Solution:\n    def twoSum(self, nums, target):\n        seen = {}\n        for i, x in enumerate(nums):\n"
     "            if target - x in seen:\n                return [seen[target - x], i]\n            seen[x] = i\n",
     ["assert Solution().twoSum([2, 7, 11, 15], 9) == [0, 1]", "s = Solution()\nassert s.twoSum([3, 3], 6) == [0, 1]"]),
    ("class Point:\n    def __init__(self, x):\n        self.x = x\ndef origin():\n    return Point(0)\n",
     ["assert origin() is not None", "p = origin()\nassert p.x == 0\np.x = 5\nassert p.x == 5"]),
    ("from collections import Counter, defaultdict, deque\ndef counts(xs):\n    return Counter(xs)\n"
     "def groups(pairs):\n    d = defaultdict(list)\n    for k, v in pairs:\n        d[k].append(v)\n    return d\n"
     "def window(xs):\n    return deque(xs, maxlen=2)\n",
     ["assert counts('abca') == {'a': 2, 'b': 1, 'c': 1}", "assert groups([('x', 1), ('x', 2)]) == {'x': [1, 2]}",
      "assert list(window([1, 2, 3])) == [2, 3]"]),
    ("def drop(xs, kind):\n    return [x for x in xs if not isinstance(x, kind)]\n", ["assert drop((4, 7.7, 1), int) == [7.7]"]),
    ("import sys\ndef size(t):\n    return sys.getsizeof(t)\n", ["assert size((1, 2)) == sys.getsizeof((1, 2))"]),
]


@needs_isolation
def test_class_based_tests_pass_for_honest_solutions():
    got = scores([fenced(code) for code, _ in HONEST], [tests for _, tests in HONEST])
    assert [value for value, _ in got] == [1.0] * len(HONEST), [(i, why) for i, (v, why) in enumerate(got) if v != 1.0]


@needs_isolation
def test_an_entry_point_named_like_a_builtin_is_the_solutions():
    code = ("def sum(a, b):\n    total = 0\n    for i in range(1, min(a, b)):\n        if a % i == 0 and b % i == 0:\n"
            "            total += i\n    return total\n")  # MBPP task 126's own solution
    got = scores([fenced(code)] * 2, [["assert sum(10, 15) == 6"], ["import random\nassert sum(10, random.choice([15])) == 6"]],
                 entry_point=["sum"] * 2)
    assert [v for v, _ in got] == [1.0, 1.0], got


YES = ("class Yes:\n    __eq__ = __ne__ = __lt__ = __le__ = __gt__ = __ge__ = lambda self, other: True\n"
       "    __bool__ = __contains__ = lambda self, *a: True\n    __hash__ = lambda self: 5\n"
       "    __len__ = lambda self: 3\n    __iter__ = lambda self: iter([1, 2])\n    __str__ = __repr__ = lambda self: 'x'\n"
       "    __add__ = __radd__ = __sub__ = __rsub__ = __abs__ = lambda self, *a: 0\n    __index__ = __int__ = lambda self: 5\n"
       "    __getitem__ = lambda self, key: 5\n    __float__ = lambda self: 5.0\n"
       "    def get(self, key):\n        return Yes()\n    @property\n    def value(self):\n        return Yes()\n"
       "def f(x):\n    return Yes()\nclass LRUCache:\n    def __init__(self, n):\n        pass\n"
       "    def put(self, k, v):\n        pass\n    def get(self, k):\n        return Yes()\n")
OBJECT_CHECKS = [  # every use of an object that would let its own code decide the check
    "assert f(1) == 5", "assert 5 == f(1)", "assert f(1) != 4", "assert not f(1) != 5", "assert f(1)", "assert f(1) < 6",
    "assert 3 in f(1)", "assert len(f(1)) == 3", "assert list(f(1)) == [1, 2]", "assert str(f(1)) == 'x'",
    "assert f(1) + 5 == 0", "assert abs(f(1)) == 0", "assert [f(1)] == [5]", "assert f(1) in [5]",
    "assert {f(1): 1} == {5: 1}", "assert f(1)[0] == 5", "assert int(f(1)) == 5", "assert '%s' % f(1) == 'x'",
    "assert f'{f(1)}' == 'x'", "assert round(f(1)) == 5", "assert sorted([f(1), f(2)]) == [5, 5]",
    "assert max(f(1), 4) == 5", "assert f(1).value == 5", "assert f(1).get(1) == 1",
    "obj = LRUCache(2)\nobj.put(1, 1)\nassert obj.get(1) == 1",
]


@needs_isolation
@pytest.mark.parametrize("form", ["one assert each", "in the test process"])
def test_no_use_of_an_object_lets_the_solution_decide_a_check(form):
    # "in the test process": the same checks where the planner cannot follow them (a random input)
    tests = [[check] if form == "one assert each" else [f"import random\nrandom.seed(0)\n{check}"]
             for check in OBJECT_CHECKS]
    got = scores([fenced(YES)] * len(OBJECT_CHECKS), tests)
    assert {check: why for check, (value, why) in zip(OBJECT_CHECKS, got, strict=True) if value != 0.0} == {}


@needs_isolation
def test_a_caught_unsupported_use_still_fails_and_call_cases_never_match_an_object():
    caught = "try:\n    assert f(1) == 5\nexcept BaseException:\n    pass\nassert f(2) == 5 or True"
    got = scores([fenced(YES)] * 2, [[caught], {"fn_name": "f", "inputs": [[1]], "outputs": [5]}])
    assert [v for v, _ in got] == [0.0, 0.0], got
    assert "an object of the solution used with eq" in got[0][1]


@needs_isolation
def test_the_handle_table_is_bounded_and_its_overflow_is_a_failure():
    code = "class P:\n    pass\ndef many(n):\n    return [P() for _ in range(n)]\n"
    got = scores([fenced(code)] * 2, [["import random\nassert many(random.choice([70000])) is not None"],
                                      ["import random\nassert many(random.choice([10])) is not None"]])
    assert [v for v, _ in got] == [0.0, 1.0], got


def test_the_trainer_sees_objects_as_opaque_and_no_check_passes_on_one():
    value = decode(plain(object(), handle=lambda obj: [0, "Yes"]), 0, Opaque)
    assert isinstance(value, Opaque) and value is not None and repr(value) == "<an object of the solution: Yes>"
    for use in (lambda v: v == 5, lambda v: v != 5, bool, hash, len, iter, str, lambda v: v < 1, lambda v: v + 1,
                lambda v: 5 in v, lambda v: v[0], int, lambda v: v.x, lambda v: v()):
        with pytest.raises((ObjectUsed, TypeError)):
            use(value)
    suite = parse_tests(["assert f(1) == 5", "assert not f(1) != 5", "assert f(1)", "assert f(1) is not None"])
    values = {0: ("value", value), 1: ("value", value), 2: ("value", value), 3: ("value", value)}
    assert [holds(case[0], values) for case in suite.cases] == [OBJECT_USED, OBJECT_USED, OBJECT_USED, None]
    with pytest.raises(NotPlainData):
        decode(plain(object(), handle=lambda obj: [0, "Yes"]))  # without a handle function: refused
