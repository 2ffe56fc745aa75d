"""The `math` reward on a broad table of answer formats: each case has its expected verdict, both ways."""

from __future__ import annotations

import subprocess
import sys

import pytest

import rewardhub
from rewardhub import Batch, Reward, Score
from rewardhub.rewards.math import MathChecker, MathReward
from rewardhub.workers import WorkerPool

# (gold, completion, expected verdict). Negative cases matter as much: "equal" too easily is a wrong gradient.
CASES = [
    # numbers, fractions, decimals
    ("42", r"The result is \boxed{42}.", True),
    ("42", r"The result is \boxed{43}.", False),
    ("1/2", r"\boxed{\frac{1}{2}}", True),
    (r"\frac{1}{2}", r"so we get \boxed{0.5}", True),
    (r"\frac{1}{2}", r"\boxed{\dfrac12}", True),
    (r"\frac{1}{2}", r"\boxed{\frac{1}{3}}", False),
    (r"\frac{1}{3}", r"\boxed{0.3333}", False),
    (r"\frac{1}{3}", r"\boxed{0.333333}", True),
    ("2/4", r"\boxed{\frac{1}{2}}", True),
    ("-3", r"\boxed{-3}", True),
    ("-3", r"\boxed{3}", False),
    ("3.0", r"\boxed{3}", True),
    ("0.1", r"\boxed{0.10001}", False),
    ("1e3", r"\boxed{1000}", True),
    ("1000", r"The answer is 1.0e3.", True),
    ("1000", r"\boxed{1e4}", False),
    (2.5e-05, r"\boxed{0.000025}", True),
    (2.5e-05, r"\boxed{0.00025}", False),
    # separators, percentages, units, degrees, text wrappers, currency
    ("1000", r"\boxed{1,000}", True),
    ("1234567", r"The answer is 1,234,567.", True),
    ("1234567", r"\boxed{1,234,568}", False),
    ("3.5", r"\boxed{3,5}", True),
    ("50", r"\boxed{50\%}", True),
    ("0.5", r"\boxed{50\%}", True),
    ("0.5", r"\boxed{5\%}", False),
    ("90", r"\boxed{90^\circ}", True),
    ("90", r"\boxed{90^{\circ}}", True),
    ("45", r"\boxed{90^\circ}", False),
    ("5", r"\boxed{5\text{ cm}}", True),
    ("5", r"\boxed{\text{5}}", True),
    ("5", r"The answer is 5 apples.", True),
    ("5", "The answer is 5 or more.", False),
    ("5", r"\boxed{5 \text{ or more}}", False),
    ("2", "The answer is 2 million.", False),
    ("2", r"\boxed{2\text{ million}}", False),
    ("0.5", r"\boxed{\frac{1}{2}\%}", False),
    ("1/2", r"\boxed{1/2\%}", False),
    (r"\frac{1}{200}", r"\boxed{\frac{1}{2}\%}", True),
    ("12", r"\boxed{\$12}", True),
    # radicals, pi, symbolic expressions
    (r"\frac{\sqrt{2}}{2}", r"\boxed{\frac{1}{\sqrt{2}}}", True),
    (r"2\sqrt{3}", r"\boxed{\sqrt{12}}", True),
    (r"2\sqrt{3}", r"\boxed{\sqrt{13}}", False),
    (r"\pi", r"\boxed{3.14}", False),
    (r"2\pi", r"\boxed{2 \pi}", True),
    ("2x+2", r"\boxed{2(x+1)}", True),
    ("x^2-1", r"\boxed{(x-1)(x+1)}", True),
    ("x^2-1", r"\boxed{(x-1)^2}", False),
    # equations and inequalities
    ("3", r"\boxed{x = 3}", True),
    ("x=3", r"\boxed{3}", True),
    ("x=3", r"\boxed{x=4}", False),
    ("x > 2", r"\boxed{(2, \infty)}", True),
    ("x > 2", r"\boxed{[2, \infty)}", False),
    # sets, tuples, intervals, matrices
    (r"\{1, 2\}", r"\boxed{\{2, 1\}}", True),
    (r"\{1, 2\}", r"\boxed{\{1, 3\}}", False),
    ("(1, -2)", r"\boxed{(1,-2)}", True),
    ("(1, -2)", r"\boxed{(-2, 1)}", False),
    ("(1, 2)", r"\boxed{\left(1, 2\right)}", True),
    ("[1, 2)", r"\boxed{[1,2)}", True),
    ("[1, 2)", r"\boxed{[1,2]}", False),
    (r"\begin{pmatrix}1\\2\end{pmatrix}", r"\boxed{\begin{pmatrix}1\\2\end{pmatrix}}", True),
    (r"\begin{pmatrix}1\\2\end{pmatrix}", r"\boxed{\begin{pmatrix}2\\1\end{pmatrix}}", False),
    # where the answer is: tags, phrases, GSM8K, fbox, last number
    ("7", "<think>2+5</think><answer>7</answer>", True),
    ("7", r"<answer>It is \boxed{7}</answer>", True),
    ("7", "<answer>8</answer>", False),
    ("7", "The final answer is $7$.", True),
    ("7", "Adding them up.\n#### 7", True),
    ("7", r"\fbox{7}", True),
    ("7", "First 3, then 4, so in total 7", True),
    ("7", r"\boxed{5} was wrong, the answer is \boxed{7}", True),
    ("7", r"first \boxed{7} then \boxed{8}", False),
    ("7", r"\boxed{7} and then \boxed{8", False),  # a last box cut off inside: its answer is unknown
    # gold given as a full solution
    (r"Thus the area is $\boxed{12}$.", r"\boxed{12}", True),
    ("Natalia sold 48/2 = 24 clips in May.\n#### 72", "#### 72", True),
    ("Natalia sold 48/2 = 24 clips in May.\n#### 72", "#### 24", False),
]


@pytest.fixture(scope="module")
def reward():
    return MathReward(timeout=10)


def test_equivalence_table(reward):
    golds = [g for g, _, _ in CASES]
    texts = [c for _, c, _ in CASES]
    result = reward.evaluate(["q"] * len(CASES), texts, solution=golds)
    wrong = [
        (gold, text, expected, score)
        for (gold, text, expected), score in zip(CASES, result.scores, strict=True)
        if score.verdict is not expected or score.value != float(expected)
    ]
    assert wrong == []


def test_reasons_and_outcomes(reward):
    texts = [
        r"\boxed{1/2}",
        r"\boxed{1/3}",
        "no digits here",
        r"\boxed{5}",
        r"\boxed{5}",
        r"\boxed{" + "1+" * 600 + "1}",
    ]
    golds = ["0.5", "1/2", "3", None, r"\frac{\qquad}{", "1"]
    scores = reward.evaluate(["q"] * 6, texts, solution=golds).scores
    assert scores[0] == Score(1.0, "correct: 1/2", True)
    assert scores[1] == Score(0.0, "not equal: 1/3 vs 1/2", False)
    assert scores[2] == Score(0.0, "no answer found", False, final=True)
    assert scores[3] == Score(None, "no gold answer in column 'solution'")
    assert scores[4].value is None and scores[4].reason.startswith("gold unparseable")
    assert scores[5] == Score(0.0, "answer too long (1201 chars > 1000)", False, final=True)


def test_missing_gold_column_abstains_with_the_column_named(reward):
    result = reward.evaluate(["q"], [r"\boxed{1}"], answer=["1"])
    assert result.values == [None]
    assert "'solution'" in result.reasons[0]


def test_column_param_and_trl_call_with_chat_completions():
    reward = rewardhub.get("math", column="answer", last_number=False)
    completions = [
        [{"role": "assistant", "content": r"\boxed{4}"}],
        [{"role": "assistant", "content": "it is 4"}],
    ]
    assert reward(prompts=["p", "p"], completions=completions, answer=[4, 4]) == [1.0, 0.0]


class ConciseWhenRight(Reward):
    """A test reward reusing `math`'s verdict through the core's dependency mechanism."""

    name = "concise_when_right"

    def dependencies(self):
        return {"correctness": "math"}

    def score_batch(self, batch: Batch):
        verdicts = self.dependency_scores("correctness", batch)
        return [1.0 - len(t) / 100 if s.verdict else 0.0 for t, s in zip(batch.texts, verdicts, strict=True)]


def test_verdict_is_shared_not_recomputed():
    rewards = rewardhub.load([{"name": "math", "weight": 1.0}])
    math_reward = rewards.members[0].reward
    user = ConciseWhenRight()
    user.bind("correctness", math_reward)
    batch = dict(prompts=["q", "q"], completions=[r"\boxed{2}", r"\boxed{3}"], solution=["2", "2"])
    assert math_reward(**batch) == [1.0, 0.0]
    samples = math_reward.totals["samples"]
    assert user(**batch) == [pytest.approx(1.0 - 9 / 100), 0.0]
    assert math_reward.totals["samples"] == samples  # verdicts came from the memo


def test_a_used_reward_can_be_pickled_and_copied(reward):
    import copy
    import pickle

    for clone in (pickle.loads(pickle.dumps(reward)), copy.deepcopy(reward)):
        assert clone.evaluate(["q"], [r"\boxed{x+1}"], solution=["1+x"]).values == [1.0]


def test_params_are_validated():
    with pytest.raises(rewardhub.ConfigError):
        rewardhub.get("math", timeout="soon")
    with pytest.raises(rewardhub.ConfigError, match="timeout"):
        rewardhub.get("math", timeout=0)
    with pytest.raises(rewardhub.ConfigError, match="workers"):
        rewardhub.get("majority_vote", workers=0)


class RecordingPool(WorkerPool):
    """A real pool that remembers what it was sent."""

    def __init__(self) -> None:
        super().__init__(1)
        self.sent: list[list] = []

    def map(self, func, items, **kwargs):
        self.sent.append(list(items))
        return super().map(func, self.sent[-1], **kwargs)


def test_repeated_pairs_are_checked_once_and_literals_never_reach_the_workers():
    with RecordingPool() as pool:
        checker = MathChecker(timeout=10, pool=pool)
        pairs = [("2x+2", "2(x+1)")] * 8 + [("42", "42")] * 8 + [("2x+2", "2x+1")] * 4 + [("42", "x = 41")]
        checks = checker.compare(pairs)
        assert [c.status for c in checks] == ["equal"] * 16 + ["not equal"] * 5
        assert pool.sent == [[("2x+2", "2(x+1)"), ("2x+2", "2x+1")]]


@pytest.mark.parametrize("name", ["math", "majority_vote"])
def test_worker_startup_failure_raises_instead_of_scoring(name):
    reward = rewardhub.get(name)
    with WorkerPool(1, preload=["no_such_module_for_rewardhub"], start_retries=0) as broken:
        reward.checker = MathChecker(pool=broken)
        with pytest.raises(rewardhub.WorkerStartupError, match="no_such_module_for_rewardhub"):
            reward.evaluate(["q", "q"], [r"\boxed{x}", r"\boxed{y}"], solution=["x", "x"])


def test_contract_kit():
    from rewardhub.testing import check_contract

    report = check_contract(rewardhub.get("math", timeout=2), correct_completion=r"The answer is \boxed{10}.")
    assert set(report.probe_values.values()) == {0.0}


def test_length_reward_reuses_the_math_verdict():
    rewards = rewardhub.load(
        [
            {"name": "math"},
            {"name": "length_penalty", "params": {"mode": "cosine", "correctness": "math", "max_completion_len": 100}},
        ]
    )
    texts = [r"\boxed{0.5}", r"\boxed{1/3}", "x " * 40 + r"\boxed{\frac12}"]
    results = rewards.evaluate_batch(Batch(["q"] * 3, texts, {"solution": ["1/2"] * 3}))
    assert results["math"].verdicts == [True, False, True]
    length = results["length_penalty"].values
    assert length[0] > length[2] > 0 > length[1]  # right and short > right and long > wrong
    assert rewards.members[0].reward.totals["samples"] == 3  # math ran once for both



def test_a_batch_the_fast_path_settles_starts_no_worker_process():
    # A fresh interpreter, so that no earlier test's pool exists; its children are read from /proc.
    code = (
        "import glob, rewardhub\n"
        "reward = rewardhub.get('math')\n"
        "values = reward(['q'] * 3, [r'\\boxed{0.5}', 'The answer is 7', '#### 3'], solution=['1/2', '7', '4'])\n"
        "assert values == [1.0, 1.0, 0.0], values\n"
        "children = ''.join(open(f).read() for f in glob.glob('/proc/self/task/*/children')).split()\n"
        "assert children == [], children\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)
