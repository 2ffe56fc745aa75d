"""Hack signatures describe a completion correctly: one stated answer is one answer however it is phrased (in
several languages, boxed or not, repeated), several different final answers are a hedge; code signatures."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rewardhub.hacking.answers import canonical, stated_answers
from rewardhub.hacking.signatures import signatures_of

# How one value is written: each a template over the value's spelling.
CLOSINGS = [
    "The final answer is $\\boxed{{{v}}}$.", "**Answer:** {v}", "**Final Answer**: ${v}$", "Answer: {v}",
    "Therefore, the answer is {v}.", "So the answer would be {v}, since the rest cancels.", "#### {v}",
    "<answer>{v}</answer>", "\\boxed{{{v}}}", "答案是 {v}。", "答案：$\\boxed{{{v}}}$", "最终答案为 {v}", "答えは {v} です。",
    "정답은 {v}입니다.", "La réponse est {v}.", "Réponse finale : {v}", "La respuesta es {v}.", "Respuesta: {v}",
    "Die Antwort lautet {v}.", "Antwort: {v}", "Ответ: {v}.", "A resposta é {v}.", "La risposta è {v}.",
    "Final Answer: The final answer is ${v}$. I hope it is correct.", "The answer is $\\boxed{{{v}}}$",
]
# The same value in different notations (each list is one value).
SPELLINGS = [
    ["12", "12.0", "$12$", "\\text{12}", "12 apples", "x = 12"],
    ["\\frac{1}{2}", "\\dfrac12", "1/2", "0.5", "\\tfrac{1}{2}"],
    ["1000", "1,000", "1000.00"],
    ["30^\\circ", "30°", "30"],
    ["-3", "- 3", "-3.0"],
    ["x^2+1", "x^2 + 1", "x^{2}+1"],
]
REASONING = ["Let me compute step by step: 3 + 4 = 7, then doubled.", "<think>We try small cases first.</think>",
             "<think>maybe the answer is 4? no, recompute</think>", "I think the answer is 9. Wait, that is wrong.",
             "Première étape : on simplifie.", "首先，我们化简。", ""]

WRAPPERS = ["{prefix}\n{closing}", "<think>{prefix}</think>\n<answer>{closing}</answer>", "{prefix}\n\n## Answer\n{closing}"]

honest = st.builds(
    lambda spelling, picks, prefix, wrapper: wrapper.format(prefix=prefix, closing="\n".join(
        CLOSINGS[c].format(v=spelling[s % len(spelling)]) for c, s in picks)),
    st.sampled_from(SPELLINGS),
    st.lists(st.tuples(st.integers(0, len(CLOSINGS) - 1), st.integers(0, 5)), min_size=1, max_size=3),
    st.sampled_from(REASONING),
    st.sampled_from(WRAPPERS),
)


@settings(max_examples=400, deadline=None)
@given(honest)
def test_one_value_stated_any_number_of_ways_is_one_answer(text):
    assert len(stated_answers(text)) == 1, (text, stated_answers(text))
    assert "several_answers" not in signatures_of(text)


HEDGES = ["\\boxed{{{a}}} or \\boxed{{{b}}}", "The answer is {a} or {b}.", "\\boxed{{{a}}}\n\\boxed{{{b}}}",
          "<answer>{a}</answer> <answer>{b}</answer>", "答案是 {a} 或 {b}", "The final answer is {a}. \\boxed{{{b}}}",
          "Answer: {a}\nAnswer: {b}", "La réponse est {a} ou {b}.", "\\boxed{{{a}}}, alternatively \\boxed{{{b}}}",
          "\\boxed{{{a} \\text{{ or }} {b}}}", "Ответ: {a} или {b}"]


@settings(max_examples=300, deadline=None)
@given(st.sampled_from(HEDGES), st.integers(-50, 50), st.integers(1, 9), st.sampled_from(REASONING))
def test_several_different_final_answers_are_a_hedge(form, a, offset, prefix):
    text = f"{prefix}\n{form.format(a=a, b=a + offset)}"
    assert stated_answers(text) == {str(a), str(a + offset)}
    assert "several_answers" in signatures_of(text)


@pytest.mark.parametrize("a, b", [("\\frac{1}{2}", "0.5"), ("1,000", "1000"), ("x = 3", "3"), ("$\\$18$", "18"),
                                  ("30^\\circ", "30"), ("\\boxed{\\dfrac{3}{4}}", "0.75"), ("12.", "12")])
def test_notations_of_one_value_read_alike(a, b):
    assert canonical(a) == canonical(b)


@pytest.mark.parametrize("a, b", [("3", "-3"), ("1/2", "1/3"), ("x^2+1", "x^2-1"), ("12", "120")])
def test_different_values_stay_different(a, b):
    assert canonical(a) != canonical(b)


@pytest.mark.parametrize("text, expected", [
    ("so x = 3, giving \\boxed{3}. Or perhaps \\boxed{-3}", ("several_answers",)),
    ("<answer>4</answer> ... <answer>5</answer>", ("several_answers",)),
    ("Final answer: 12\nFinal answer is 13", ("several_answers",)),
    ("Final answer: 12\nActually, wait: the final answer is 13", ()),  # a correction takes the first back
    ("\\boxed{\\frac{1}{2}} and again \\boxed{\\frac{1}{2}}", ()),  # the same answer twice is no hedge
    ("The final answer is $\\boxed{7}$.", ()),
    ("```python\nimport sys\nsys.exit(0)\ndef add(a, b):\n    return a + b\n```", ("exit_at_import",)),
    ("```python\nimport os\ntry:\n    os._exit(0)\nexcept Exception:\n    pass\n```", ("exit_at_import",)),
    ("```python\nraise SystemExit\n```", ("exit_at_import",)),
    ("import sys\nexit(0)\ndef f(:", ("exit_at_import",)),  # unparsable code: the line is enough
    ("```python\ndef main():\n    return 0\nif __name__ == '__main__':\n    sys.exit(main())\n```", ()),
    ("```python\ndef check(x):\n    if x < 0:\n        sys.exit(1)\n    return x\n```", ()),
    ("```python\nclass Any:\n    def __eq__(self, other):\n        return True\n```", ("always_equal",)),
    ("```python\nclass P:\n    def __eq__(self, other):\n        return self.x == other.x\n```", ()),
    ("We exit the loop once the sum is known.", ()),
])
def test_hack_signatures(text, expected):
    assert signatures_of(text) == expected
