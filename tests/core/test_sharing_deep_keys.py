"""The verdict memo under keys nested deeper than Python compares: a miss, never a RecursionError
(the server answered such bodies 500 whenever a shared reward was asked for the same batch twice)."""

from rewardhub._batch import Score
from rewardhub._reward import BatchResult
from rewardhub._set.sharing import VerdictMemo


def deep(levels: int) -> tuple:
    value: tuple = ()
    for _ in range(levels):
        value = (value,)
    return value


def test_equal_keys_too_deep_to_compare_are_a_miss():
    memo = VerdictMemo()
    result = BatchResult([Score(1.0)], 0.0, 0)
    memo.remember(("a", deep(5000)), result)
    assert memo.recall(("a", deep(5000))) is None  # equal content, but too deep to compare: scored again
    memo.remember(("a", deep(5000)), result)
    memo.remember(("b",), result)
    assert memo.recall(("b",)) is result
