"""length_penalty: DAPO overlong, target length, Kimi 1.5 group lengths, cosine scaling; shared verdicts."""

import math

import pytest

import rewardhub
from rewardhub import ConfigError
from rewardhub.rewards.length import LengthPenalty, completion_length
from rewardhub.testing import check_contract

MB = 1_000_000


def chat(text):
    return [{"role": "assistant", "content": text}]


def ids(n):
    return list(range(n))


@rewardhub.sample_reward(name="t_graded")
def graded(text, solution):
    """A correctness reward with no verdict: 1.0 / 0.5 / 0.0 (>= 1.0 counts as correct)."""
    return 1.0 if text == solution else (0.5 if solution in text else 0.0)


def test_completion_length():
    assert completion_length("a b  c\n") == (3, "estimate")
    assert completion_length("a b", [5, 6, 7, 8]) == (4, "completion_ids")
    assert completion_length("a b", None) == (2, "estimate")
    assert completion_length("a b", None, lambda text: 9) == (9, "tokenizer")
    assert str(completion_length("a b")) == "2 tokens (estimated: no completion_ids)"
    assert str(completion_length("a", [1])) == "1 token"


@pytest.mark.parametrize(
    ("length", "value", "reason"),
    [
        (0, 0.0, "0 tokens <= 80: no penalty"),
        (80, 0.0, "80 tokens <= 80: no penalty"),
        (81, -0.05, "81 tokens: 1 into the last 20 before 100"),
        (90, -0.5, "90 tokens: 10 into the last 20 before 100"),
        (100, -1.0, "100 tokens: 20 into the last 20 before 100"),
        (101, -1.0, "101 tokens > max_completion_len 100"),
    ],
)
def test_overlong_dapo(length, value, reason):
    reward = rewardhub.get("length_penalty", max_completion_len=100, cache_len=20)
    score = reward.evaluate(None, ["text"], completion_ids=[ids(length)]).scores[0]
    assert score.value == pytest.approx(value) and score.reason == reason


def test_overlong_estimates_tokens_without_completion_ids_and_says_so():
    reward = rewardhub.get("length_penalty", max_completion_len=10, cache_len=4)
    result = reward.evaluate(None, ["w " * 5, chat("w " * 8), "w " * 11, ""])
    assert result.values == pytest.approx([0.0, -0.5, -1.0, 0.0])
    assert result.reasons[1] == "8 tokens (estimated: no completion_ids): 2 into the last 4 before 10"


def test_trl_style_call_with_completion_ids_none():
    reward = rewardhub.get("length_penalty", max_completion_len=10, cache_len=4)
    assert reward(prompts=["p"], completions=["w " * 8], completion_ids=None) == [-0.5]


@pytest.mark.parametrize(("length", "value"), [(10, 0.0), (15, -0.5), (5, -0.5), (30, -1.0), (0, -1.0)])
def test_target(length, value):
    reward = rewardhub.get("length_penalty", mode="target", target_len=10)
    score = reward.evaluate(None, ["x"], completion_ids=[ids(length)]).scores[0]
    assert score.value == pytest.approx(value) and score.reason == f"{length} tokens, target 10"


def test_group_kimi():
    reward = rewardhub.get("length_penalty", mode="group", correctness="exact_match")
    completions = [r"\boxed{1}", r"\boxed{1}", r"\boxed{2}", r"\boxed{2}", r"\boxed{9}", r"\boxed{9}"]
    result = reward.evaluate(
        ["p1", "p1", "p1", "p1", "p2", "p2"],
        completions,
        solution=["1", "1", "1", "1", "9", "9"],
        completion_ids=[ids(10), ids(30), ids(10), ids(30), ids(5), ids(5)],
    )
    # p1: lengths 10..30 -> lambda 0.5 (short) and -0.5 (long); wrong answers get min(0, lambda).
    assert result.values == pytest.approx([0.5, -0.5, 0.0, -0.5, 0.0, 0.0])
    assert result.reasons[0] == "correct, 10 tokens in group range 10..30"
    assert result.reasons[2] == "wrong, 10 tokens in group range 10..30"
    assert result.reasons[4] == "all 2 completions of this prompt have 5 tokens"


def test_group_chat_prompts_and_middle_length():
    reward = rewardhub.get("length_penalty", mode="group", correctness="exact_match")
    prompt = [{"role": "user", "content": "What is 1?"}]
    values = reward(
        [prompt] * 3, [chat(r"\boxed{1}"), chat(r"\boxed{1} " + "w " * 11), chat(r"\boxed{1} " + "w " * 20)],
        solution=["1"] * 3,
    )
    assert values == pytest.approx([0.5, 0.0, -0.5])


def test_correctness_abstaining_abstains():
    reward = rewardhub.get("length_penalty", mode="group", correctness="exact_match")
    result = reward.evaluate(["p", "p"], [r"\boxed{1}", r"\boxed{1} more"], solution=["1", None])
    assert result.values == [0.5, None]
    assert result.reasons[1] == "correctness abstained: no reference answer in column 'solution'"
    missing = reward.evaluate(["p", "p"], [r"\boxed{1}", "x"])
    assert missing.values == [None, None] and "needs column 'solution'" in missing.reasons[0]


def test_group_mode_never_ranks_a_fragment():
    """A lone completion, or a group short of group_size, has no length range: it abstains."""
    reward = rewardhub.get("length_penalty", mode="group", correctness="exact_match", group_size=3)
    assert reward.needs_groups and reward.group_size == 3
    texts = [r"\boxed{1}", r"\boxed{1} b", r"\boxed{1}", r"\boxed{1} b c d", r"\boxed{1} b c d e"]  # 3, 4, 5 tokens
    result = reward.evaluate(["p", "p", "q", "q", "q"], texts, solution=["1"] * 5)
    assert result.values[:2] == [None, None]
    assert result.reasons[0] == "incomplete group: 2 completions of this prompt in the batch, group_size is 3"
    assert result.values[2:] == pytest.approx([0.5, 0.0, -0.5])  # the whole group is ranked as before
    lone = rewardhub.get("length_penalty", mode="group", correctness="exact_match")
    only = lone.evaluate(["p"], [r"\boxed{1}"], solution=["1"])
    assert only.values == [None] and "lone completion" in only.reasons[0]
    assert not rewardhub.get("length_penalty").needs_groups


def test_group_size_belongs_to_group_mode():
    with pytest.raises(rewardhub.ConfigError, match="used by mode 'group' only"):
        rewardhub.get("length_penalty", group_size=4)


@pytest.mark.parametrize(
    ("correct", "length", "value"),
    [
        (True, 0, 1.0),
        (True, 50, 0.75),
        (True, 100, 0.5),
        (True, 500, 0.5),  # past the horizon: held at the end value
        (False, 0, -1.0),
        (False, 50, -0.75),
        (False, 100, -0.5),
        (True, 25, 0.5 + 0.25 * (1 + math.cos(math.pi / 4))),
    ],
)
def test_cosine(correct, length, value):
    reward = rewardhub.get("length_penalty", mode="cosine", correctness="exact_match", max_completion_len=100)
    completion = r"\boxed{1}" if correct else r"\boxed{2}"
    score = reward.evaluate(None, [completion], solution=["1"], completion_ids=[ids(length)]).scores[0]
    assert score.value == pytest.approx(value)
    assert score.reason == f"{'correct' if correct else 'wrong'}, {length} tokens of 100"


def test_cosine_custom_ranges():
    reward = rewardhub.get("length_penalty", mode="cosine", correctness="exact_match", max_completion_len=10,
                           min_value_correct=0.0, max_value_correct=2.0, min_value_wrong=-3.0, max_value_wrong=0.0)
    values = reward(None, [r"\boxed{1}", r"\boxed{2}"], solution=["1", "1"], completion_ids=[ids(0), ids(0)])
    assert values == [2.0, -3.0]


def test_verdictless_correctness_uses_value_at_least_one(clean_registry):
    clean_registry.add(graded, source="tests")
    reward = rewardhub.get("length_penalty", mode="group", correctness="t_graded")
    values = reward(["p"] * 3, ["42", "42 and more words here", "x"], solution=["42", "42", "42"])
    # "42" correct (1.0); the long one scores 0.5 -> wrong; "x" wrong. Lengths 1, 5, 1.
    assert values == pytest.approx([0.5, -0.5, 0.0])


@pytest.mark.parametrize("order", ["exact_match_first", "length_first"])
def test_shared_verdict_is_computed_once_per_batch(order):
    entries = [
        {"name": "exact_match", "alias": "acc"},
        {"name": "length_penalty", "weight": 0.5, "params": {"mode": "group", "correctness": "acc"}},
    ]
    rewards = rewardhub.load({"rewards": entries if order == "exact_match_first" else entries[::-1]})
    rows = [{"prompt": "p", "completion": r"\boxed{1}", "solution": "1"},
            {"prompt": "p", "completion": r"\boxed{2} " + "w " * 10, "solution": "1"},
            {"prompt": "q", "completion": chat(r"\boxed{3}"), "solution": "3"}]
    scored = rewards.score(rows)
    acc = rewards["acc"]
    assert rewards["length_penalty"].dependency("correctness") is acc
    assert acc.totals["samples"] == 3  # once, not once per reward that needs it
    assert [r["rewards"] for r in scored] == [
        {"acc": 1.0, "length_penalty": 0.5},
        {"acc": 0.0, "length_penalty": -0.5},
        {"acc": 1.0, "length_penalty": None},  # a lone completion of "q": no length range
    ]
    assert [r["reward"] for r in scored] == pytest.approx([1.25, -0.25, 1.0])


    # As TRL calls them: each reward function separately, with the same columns, in a fresh set.
    rewards = rewardhub.load({"rewards": entries})
    kwargs = {"solution": [r["solution"] for r in rows], "completion_ids": None}
    prompts, completions = [r["prompt"] for r in rows], [r["completion"] for r in rows]
    values = [func(prompts=prompts, completions=completions, **kwargs) for func in rewards.reward_funcs]
    assert values == [[1.0, 0.0, 1.0], [0.5, -0.5, None]]
    assert rewards["acc"].totals["samples"] == 3


def test_shared_verdict_by_registry_name_with_counting_subclass(clean_registry):
    class CountingExactMatch(rewardhub.rewards.exact_match.ExactMatch):
        name = "t_counting_exact_match"
        calls = 0

        def score_sample(self, text, row):
            type(self).calls += 1
            return super().score_sample(text, row)

    clean_registry.add(CountingExactMatch, source="tests")
    rewards = rewardhub.load([
        {"name": "length_penalty", "params": {"mode": "cosine", "correctness": "t_counting_exact_match"}},
        {"name": "t_counting_exact_match"},
    ])
    rewards.score([{"prompt": "p", "completion": r"\boxed{4}", "solution": "4"}] * 4)
    assert CountingExactMatch.calls == 4


@pytest.mark.parametrize(
    ("params", "message"),
    [
        ({"mode": "linear"}, "mode must be one of overlong, target, group, cosine"),
        ({"max_completion_len": 10, "cache_len": 20}, "cache_len <= max_completion_len"),
        ({"cache_len": 0}, "1 <= cache_len"),
        ({"mode": "target"}, "target_len is required by mode 'target'"),
        ({"target_len": 10}, "target_len is required by mode 'target' and used by no other"),
        ({"mode": "target", "target_len": 0}, "target_len must be >= 1"),
        ({"mode": "group"}, "correctness .* is required by modes group and cosine"),
        ({"mode": "cosine"}, "correctness"),
        ({"correctness": "math"}, "used by no other"),
        ({"mode": "cosine", "correctness": "x", "min_value_correct": 2.0}, "min_value_correct <= max_value_correct"),
        ({"max_completion_len": "long"}, "param 'max_completion_len'"),
    ],
)
def test_config_errors(params, message):
    with pytest.raises(ConfigError, match=message):
        rewardhub.get("length_penalty", **params)


def test_dependencies_declared():
    assert rewardhub.get("length_penalty").dependencies() == {}
    assert LengthPenalty(mode="group", correctness="math").dependencies() == {"correctness": "math"}


def test_bad_rows_and_one_megabyte():
    reward = rewardhub.get("length_penalty", max_completion_len=1000, cache_len=100)
    result = reward.evaluate(None, ["w " * (MB // 2), 7, chat(""), None])
    assert result.values == [-1.0, None, 0.0, None]
    group = rewardhub.get("length_penalty", mode="group", correctness="exact_match")
    values = group(["p"] * 3, ["w " * (MB // 2) + r"\boxed{1}", r"\boxed{1}", [1, 2]], solution=["1"] * 3)
    assert values == [-0.5, 0.5, None]


def test_unknown_correctness_reward_abstains_with_reason():
    reward = rewardhub.get("length_penalty", mode="group", correctness="no_such_reward")
    result = reward.evaluate(None, ["a", "b"])
    assert result.values == [None, None] and "unknown reward 'no_such_reward'" in result.reasons[0]


def test_contract_kit():
    check_contract(rewardhub.get("length_penalty"))
    check_contract(rewardhub.get("length_penalty", mode="cosine", correctness="exact_match"), full_credit=1.01)


def test_standalone_reward_builds_its_correctness_reward_once():
    reward = rewardhub.get("length_penalty", mode="cosine", correctness="exact_match")
    reward.evaluate(None, [r"\boxed{1}", r"\boxed{2}"], solution=["1", "1"])
    reward.evaluate(None, [r"\boxed{1}", r"\boxed{2}"], solution=["1", "1"])
    dependency = reward.dependency("correctness")
    assert dependency.name == "exact_match" and dependency.totals["samples"] == 2  # second batch: memo


# ----- tokens on every path (issue 33, item 4) ---------------------------------------------------------------------
def test_words_joined_by_invisible_characters_are_not_one_word():
    reward = rewardhub.get("length_penalty", max_completion_len=400, cache_len=100)
    for joiner in ("\u200b", "\u2060", "\u200d", "\u00ad"):
        glued = joiner.join(["word"] * 300)
        score = reward.evaluate(None, [glued]).scores[0]
        assert score.value < 0.0, (joiner, score.reason)  # it was "1 word (no completion_ids): no penalty"
        assert "estimated: no completion_ids" in score.reason


def test_the_same_completion_scores_alike_with_and_without_completion_ids(tiny_tokenizer):
    """TRL passes completion_ids; the server, the shims and the CLI do not: the tokenizer the user names counts
    exactly what TRL counts, and the estimate counts tokens, not words (a whitespace word count said 0.0 where
    TRL said -1.0). The tiny test tokenizer makes far more tokens per byte than a real one: the estimate
    (about four bytes per token) sits between its count and the word count."""
    text = "Let x=3; then 2x+1=7, so f(x)=x^2-2x+1=(x-1)^2=4." * 20  # dense maths: few spaces, many tokens
    ids = tiny_tokenizer(text, add_special_tokens=False)["input_ids"]
    budget = {"max_completion_len": len(ids) // 2, "cache_len": len(ids) // 4}
    under_trl = rewardhub.get("length_penalty", **budget).evaluate(None, [text], completion_ids=[ids]).values
    assert under_trl == [-1.0]
    estimated = rewardhub.get("length_penalty", **budget).evaluate(None, [text]).scores[0]
    assert len(text.split()) == 101 < int(estimated.reason.split()[0]) == -(-len(text.encode()) // 4)
    counted = rewardhub.get("length_penalty", tokenizer=str(tiny_tokenizer.name_or_path), **budget)
    score = counted.evaluate(None, [text]).scores[0]
    assert score.value == -1.0 and score.reason.startswith(f"{len(ids)} tokens (counted by the tokenizer)")


def test_a_tokenizer_that_cannot_load_is_a_clear_error(tmp_path):
    reward = rewardhub.get("length_penalty", tokenizer=str(tmp_path / "nowhere"))
    with pytest.raises(ConfigError, match="cannot load tokenizer"):
        reward.score_batch(rewardhub.Batch([None], ["some text"], {}))
    with pytest.raises(ConfigError, match="tokenizer must be a Hugging Face tokenizer name or folder"):
        rewardhub.get("length_penalty", tokenizer="")


@pytest.fixture(scope="module")
def tiny_tokenizer(tmp_path_factory):
    from rewardhub.testing.tiny_models import load_tokenizer, make_tokenizer

    return load_tokenizer(make_tokenizer(tmp_path_factory.mktemp("tok") / "tokenizer"))
