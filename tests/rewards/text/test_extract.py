"""Answer extraction and normalisation (rewards/text/extract/): values, edge cases, and linear time on huge input.

Both policies are tested here: exact_match's (``extract_answer`` with its defaults) and the math
family's (``math.find_answer``: answer tag first, the later of box and "the answer is", then the last
math span, a bare answer and the last number that stands alone).
"""

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rewardhub import ConfigError
from rewardhub.rewards.math import find_answer
from rewardhub.rewards.text.extract import (
    DEFAULT_EXTRACTORS,
    EXTRACTORS,
    Extraction,
    Normalizer,
    Unreadable,
    alternatives,
    answer_is,
    answer_tag,
    bare,
    boxed,
    canonical_number,
    check_extractors,
    extract_answer,
    final_statement,
    gsm8k,
    last_boxed,
    last_math,
    last_number,
    looks_truncated,
    math_spans,
    number_before_unit,
    open_answer_tag,
    read_answer,
    strip_latex,
    unicode_to_latex,
)
from rewardhub.rewards.text.extract.numbers import _words_in
from rewardhub.rewards.text.number_words import NUMBER_WORDS

MB = 1_000_000


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (r"so \boxed{42}", "42"),
        (r"\boxed{\frac{1}{2}}", r"\frac{1}{2}"),
        (r"\boxed{1} then \boxed{2}", "2"),  # the last box wins
        (r"\boxed{a} and a truncated \boxed{b", "a"),  # an unclosed last box falls back
        (r"\boxed{ 7 }", "7"),
        (r"\boxed{ {x} }", "{x}"),
        (r"so \boxed{\frac{a}{b^{2}}} done", r"\frac{a}{b^{2}}"),
        (r"\boxed{1} then \fbox{4}", "4"),
        (r"{\boxed 5}", "5"),
        (r"\boxed{5} then \boxed{}", "5"),  # an empty box is no answer
        (r"\boxed {7}", "7"),
        (r"$\boxed 5$", "5"),
        (r"\fbox{x}", "x"),
        (r"\fbox{x} \boxed{y}", "y"),
        (r"\boxed{\{1, 2\}}", r"\{1, 2\}"),
        (r"\boxed{}", None),
        (r"\boxed{", None),
        (r"\boxed", None),
        ("no box at all", None),
        ("", None),
    ],
)
def test_last_boxed(text, expected):
    assert last_boxed(text) == expected


def test_last_boxed_rejects_overlong_answer_without_falling_back():
    hedge = r"\boxed{7} " + "\\boxed{" + "1, " * 600 + "}"
    assert last_boxed(hedge) is None
    assert last_boxed(hedge, max_chars=10_000) is not None


@pytest.mark.parametrize(
    ("func", "text", "expected"),
    [
        (answer_tag, "<answer> 7 </answer>", "7"),
        (answer_tag, "<answer>1</answer> <answer>2</answer>", "2"),
        (answer_tag, "<answer></answer>", None),
        (answer_tag, "</answer> <answer>", None),
        (answer_tag, "<answer>open", None),
        (answer_tag, "<answer>1</answer> <answer>2", "1"),  # a truncated last tag: the last closed one
        (answer_tag, r"<answer>so \boxed{3}</answer>", "3"),  # a box inside the tag is the answer
        (answer_tag, "<answer>The answer is 18.</answer>", "18"),  # ... and so is a sentence that says it
        (answer_tag, "<answer>#### 8,000</answer>", "8,000"),
        (answer_tag, "<answer>COVID-19</answer>", "COVID-19"),  # otherwise the content as written
        (open_answer_tag, "<answer>12", "12"),  # truncated: to the end of the text
        (open_answer_tag, "<answer>1</answer> <answer>2", "2"),
        (open_answer_tag, "<answer> 7 </answer> tail", "7"),
        (open_answer_tag, "<answer></answer>", None),
        (gsm8k, "reasoning\n#### 1,000\nmore text", "1,000"),
        (gsm8k, "#### 3\n#### 4", "4"),
        (gsm8k, "####", None),
        (gsm8k, "## 5", None),
        (answer_is, "So the answer is 3.5. Done", "3.5"),
        (answer_is, "The final answer is: **B**", "B"),
        (answer_is, "Answer: 12", "12"),
        (answer_is, "the answer is 1.\nThe answer is 2.", "2"),
        (answer_is, "the answer is", None),
        (answer_is, "my answers are long", None),
        (answer_is, r"Hence the final answer is $\frac{3}{4}$. I hope it is correct.", r"\frac{3}{4}"),
        (answer_is, "The answer is: **42**.", "42"),
        (answer_is, "Final Answer: 3.5 m", "3.5 m"),
        (answer_is, r"answer is \(x=2\)", "x=2"),
        (answer_is, r"answer is $$ y $$", "y"),
        (answer_is, r"answer is \[ z \] indeed", "z"),
        (answer_is, "the answer is $5. That costs $3.", "$5"),  # a span never crosses the sentence end
        (answer_is, "The answer is : 5", "5"),
        (answer_is, "the answer is\nnext line", None),
        (answer_is, "answer is $" + "\\$" * 100, None),  # unclosed and no number: no answer
        (answer_is, "answer is $" + "\\$" * 100 + "$ done", "\\$" * 100),
        (answer_is, "Final Answer: The volume of $ABCD$ is 120. I hope it is correct.", "120"),  # after the last "is"
        (answer_is, "Final Answer: The integers are $-2$ and $1$.", "-2, 1"),
        (answer_is, "Answer: -\\frac{\\pi}{6} (without quotes)", "-\\frac{\\pi}{6}"),  # a remark is dropped
        (answer_is, "$$\\text{Answer: } 6-5i$$", "6-5i"),
        (answer_is, 'The final answer is "$12$ and $13$".', "12, 13"),
        (answer_is, "the answer is clear from the figure.", None),  # no answer in that sentence
        (last_number, "x = 3, then 4,500.25 units.", "4,500.25"),
        (last_number, "is -7", "-7"),
        (last_number, "minus -7", None),  # "10 minus 3" is not 3
        (last_number, "none", None),
        (last_number, "Prices: 1,250.50 dollars", "1,250.50"),
        (last_number, "ratio 3/4", "3/4"),
    ],
)
def test_extractors(func, text, expected):
    assert func(text) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (r"\boxed{(2, 2)} \quad \text{and} \quad \boxed{(6, 2)}", "(2, 2), (6, 2)"),  # one answer in two boxes
        (r"\boxed{-2} and \boxed{1}", "-2, 1"),
        (r"\boxed{1},\boxed{2},\boxed{3}", "1, 2, 3"),
        (r"\boxed{1} papers and \boxed{2} bins", "1, 2"),
        (r"\boxed{1} then \boxed{2}", "2"),  # a word that is no separator
        (r"\boxed{5} was wrong, the answer is \boxed{7}", "7"),  # too many words
        (r"\boxed{1} no no no no no \boxed{2}", "2"),
        (r"\boxed{1} and and and or thus but \boxed{2}", "2"),
        (r"\boxed{3} and \boxed{3}", "3"),  # a repeated box is one answer
        (r"\boxed{1}" + " and" * 30 + r" \boxed{2}", "2"),  # a long gap
    ],
)
def test_boxes_separated_only_by_separators_are_one_answer(text, expected):
    assert boxed(text) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("So $x = 3$ and then $y$.", ["x = 3", "y"]),
        (r"\(a\) and \[b\] and $$c$$", ["a", "b", "c"]),
        ("It costs $5 and $10 more, so $x = 3$.", ["x = 3"]),  # currency: the pairing moves on
        ("$5 + $3 = $8", []),  # spans ending on an operator are currency too
        ("she earns $2 \\times (16 - 7) = $2 \\times 9 = \\$18 $.", ["2 \\times 9 = \\$18 "]),
        ("an escaped \\$ is no delimiter: $1$", ["1"]),
        ("Answer $ \n 9 \n $", [" \n 9 \n "]),
        ("two paragraphs $5 \n\n more text$", []),
        (r"\\[2pt] is a line break, \[z\]", ["z"]),
        ("$\\text{the} x$", ["\\text{the} x"]),  # wrapped words are not prose
    ],
)
def test_math_spans(text, expected):
    assert [content for _, _, content in math_spans(text)] == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("x^2 + 1", "x^2 + 1"),
        (r"$\frac{1}{3}$", r"$\frac{1}{3}$"),
        ("odd", "odd"),
        ("Evelyn.", "Evelyn."),
        (r"\text{The midpoints form a regular hexagon}", r"\text{The midpoints form a regular hexagon}"),
        ("15 miles", "15 miles"),
        ("28 percent", "28 percent"),
        ("19, 46, and 82", "19, 46, and 82"),
        ("sqrt(2)/2", "sqrt(2)/2"),
        (r"\begin{pmatrix}1&2\\3&4\end{pmatrix}", r"\begin{pmatrix}1&2\\3&4\end{pmatrix}"),
        ("D. it can't be A or B", None),  # prose
        ("Soucis : 2,74 $ a..", None),
        ("40 hours x $10 / hour = $400", None),  # a number then more than units
        ("计划的比例为13/28", None),  # prose in a script without spaces
        ("two\nlines", None),
        ("x" * 300, None),
    ],
)
def test_bare(text, expected):
    assert bare(text) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("the answer is 42.", "42"),
        ("It costs $18.", "18"),
        ("50% of them", "50"),
        ("so the number is 10 which is 1,000.99m²", "1,000.99"),  # a unit right after the number
        ("Soucis : 2,74 $ a..", "2,74"),  # a decimal comma
        ("1,5,7", "7"),
        ("12,\\!000,\\!023 in all", "12,\\!000,\\!023"),
        ("计划的比例为13/28", "13/28"),  # no spaces in Chinese: the number still stands alone
        ("So 16 - 3 - 4 = 9 eggs. She makes 9 * 2 = 18 dollars.", "18"),  # a result after "="
        ("AZYUK2A", None),
        ("It is the 10th", None),
        (r"\frac{1}{2}", None),
        ("x^2", None),
        (r"so 5\sqrt{2}", None),
        (r"so 2\pi", None),
        ("There are 3 sides and the area is 5\\sqrt{2}", None),  # never an earlier number instead
        ("5 or more", None),
        ("2 million", None),
        ("the answer is 10 minus 3", None),
        ("She has 16 - 3 - 4", None),
        ("So the total is 9 * 2", None),
        ("COVID-19", None),
        (r"\begin{pmatrix}1&2\\3&5\end{pmatrix}", None),
    ],
)
def test_last_number_stands_alone(text, expected):
    assert last_number(text) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("18 dollars", "18"),
        (r"18\text{ dollars}", "18"),
        ("$125$ miles", "125"),
        ("28 percent", "28"),
        ("5 or more", None),
        ("2 million", None),
        ("18 dollars and 50 cents", None),
        ("apples", None),
    ],
)
def test_number_before_unit(text, expected):
    assert number_before_unit(text) == expected


def test_final_statement_takes_the_later_of_box_and_phrase():
    assert final_statement(r"\boxed{255} ... Final Answer: The final answer is $10,455$.") == "10,455"
    assert final_statement(r"The answer is 5. No: \boxed{6}") == "6"
    assert final_statement(r"The answer is $\boxed{3}$.") == "3"
    assert final_statement("nothing marked") is None


def test_read_answer_reads_a_short_text_known_to_hold_an_answer():
    assert read_answer("Let's assume ... Final Answer: The final answer is $28 \\%$. I hope it is correct.") == "28 \\%"
    assert read_answer("$1$ and $2$ and $3$") == "1, 2, 3"
    assert read_answer("x = 3") == "x = 3"
    assert read_answer("no answer here") is None


def test_last_math_yields_to_a_later_sentence_number_and_to_truncation():
    assert last_math(r"so $x = \frac{3}{7}$.") == r"x = \frac{3}{7}"
    assert last_math(r"$$\frac{a}{b} = 2.$$ Therefore it increases by 100%.") is None
    assert last_math(r"so $x = 3$ and \[ \frac{1}{2} \cdot") is None


@pytest.mark.parametrize(
    ("text", "extractors", "expected"),
    [
        (r"<answer>5</answer> \boxed{6}", DEFAULT_EXTRACTORS, Extraction("6", "final_statement")),  # the last statement
        (r"\boxed{4} <answer>5</answer>", DEFAULT_EXTRACTORS, Extraction("5", "final_statement")),
        (r"<answer>5</answer> \boxed{6}", ["answer_tag", "boxed"], Extraction("5", "answer_tag")),
        ("#### 8", DEFAULT_EXTRACTORS, Extraction("8", "gsm8k")),
        ("The answer is 9.", DEFAULT_EXTRACTORS, Extraction("9", "final_statement")),
        ("it is 10 or 11", DEFAULT_EXTRACTORS, None),
        ("it is 10 or 11", ["boxed", "last_number"], None),  # a hedge
        ("  Paris ", ["whole"], Extraction("Paris", "whole")),
        (None, DEFAULT_EXTRACTORS, None),
        (123, DEFAULT_EXTRACTORS, None),
    ],
)
def test_extract_answer_order_and_fallbacks(text, extractors, expected):
    assert extract_answer(text, extractors) == expected


def test_check_extractors():
    assert check_extractors(None) == DEFAULT_EXTRACTORS
    assert check_extractors(["gsm8k", "boxed"]) == ("gsm8k", "boxed")
    with pytest.raises(ConfigError, match="unknown extractor 'boxd'.*boxed"):
        check_extractors(["boxd"])
    for bad in ("boxed", [], 3):
        with pytest.raises(ConfigError, match="extractors must be"):
            check_extractors(bad)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("1,000", "1000"),
        ("1000.0", "1000"),
        ("1e3", "1000"),
        ("1E+3", "1000"),
        ("$1,000", "1000"),
        ("50%", "50"),
        ("0.50", "0.5"),
        (".5", "0.5"),
        ("-0", "0"),
        ("-3.10", "-3.1"),
        ("12345678901234567890123456789012", "12345678901234567890123456789012"),
        ("12345678901234567890123456789013", "12345678901234567890123456789013"),
        ("1,00", None),
        ("1e999999", None),  # would expand to a million digits
        ("e3", None),
        ("12 apples", None),
        ("", None),
    ],
)
def test_canonical_number(text, expected):
    assert canonical_number(text) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (r"$\frac{1}{2}$", r"\frac{1}{2}"),
        (r"\(x+1\)", "x+1"),
        (r"\text{(A)}", "(A)"),
        (r"10\,\text{cm}", "10cm"),
        (r"90^\circ", "90"),
        (r"\left( 1, 2 \right)", "( 1, 2 )"),
        (r"50\%", "50%"),
        (r"\dfrac{3}{4}", r"\frac{3}{4}"),
    ],
)
def test_strip_latex(text, expected):
    assert strip_latex(text) == expected


@pytest.mark.parametrize(
    ("options", "a", "b", "equal"),
    [
        ({}, "New  York!", "new york", True),
        ({}, r"\text{(B)}", "B", True),
        ({}, "$1,000", "1000.0", True),
        ({}, "1e3", "1000", True),
        ({}, "41", "42", False),
        ({}, "3.5", "35", False),  # the decimal point is not dropped as punctuation
        ({"case_sensitive": True}, "Paris", "paris", False),
        ({"punctuation": False}, "U.S.", "US", False),
        ({"numbers": False}, "1,000", "1000", False),
        ({"whitespace": False}, "a  b", "a b", False),
        ({"latex": False}, r"\text{B}", "B", False),
        ({}, "ｆｕｌｌ", "full", True),  # NFKC folds full-width letters
    ],
)
def test_normalizer(options, a, b, equal):
    normalize = Normalizer(**options)
    assert (normalize(a) == normalize(b)) is equal


@pytest.mark.parametrize(
    "text",
    [
        "{" * MB,
        "}" * MB,
        "\\boxed{" * (MB // 7),
        "\\boxed" * (MB // 6),
        "\\boxed{" + "{" * MB,
        "a" * MB + r"\boxed{1}",
        "answer is " * (MB // 10),
        "1 " * (MB // 2),
        "#" * MB,
        "<answer>" * (MB // 8),
        "</answer>" * (MB // 9),
        "answer is " + "\\(" * (MB // 2),
        "answer is " + "$" + "\\$" * (MB // 2),
        "$" * MB,
        "$5 and " * (MB // 7),
        "$x$ and " * (MB // 8),
        "answer is " + "$x$ is " * (MB // 7),
        "\\(" * (MB // 2),
        "\\boxed{1} and " * (MB // 14),
        "a. " * (MB // 3),
        "1 + " * (MB // 4),
        "{$" * (MB // 2),
        " " * MB + "1",
        "<answer>" + "$" * MB,
    ],
    ids=["open", "close", "open_boxes", "bare_boxes", "deep_unclosed", "long_prefix", "answer_is", "numbers",
         "hashes", "answer_tags", "closing_tags", "unclosed_parens", "escaped_dollars", "dollars", "currency",
         "spans", "copulas", "parens", "joined_boxes", "sentences", "operands", "brace_dollars", "spaces",
         "open_tag_dollars"],
)
def test_one_megabyte_inputs_finish(text):
    for name in EXTRACTORS:
        extract_answer(text, [name])  # must return (quickly): no quadratic scans


def test_unbounded_extraction_returns_long_answers_for_the_caller_to_judge():
    deep = r"\boxed{" + "{" * 100_000 + "}" * 100_000 + "}"
    assert last_boxed(deep) is None
    assert last_boxed(deep, max_chars=None) == "{" * 100_000 + "}" * 100_000
    assert last_number("1" * MB, max_chars=None) == "1" * MB
    assert last_boxed(r"\boxed{" * 50_000, max_chars=None) is None


def test_deeply_nested_box_is_matched_exactly():
    depth = 200_000
    inner = "{" * depth + "x" + "}" * depth
    assert last_boxed("\\boxed{" + inner + "} tail", max_chars=len(inner)) == inner


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=st.sampled_from(list("\\boxed{}fb <>/answer#1,.$ \n")), max_size=300))
def test_extraction_never_raises(text):
    for name in EXTRACTORS:
        found = extract_answer(text, [name])
        if isinstance(found, Unreadable):
            assert found.reason and found.how == name
        elif found is not None:  # pieces of the text, joined (boxes, alternatives), or a number read from words
            parts = re.split(r", | \\text\{ or \} ", found.answer)
            assert found.how == name and all(part in text or part.lstrip("-").replace("/", "").isdigit() for part in parts)
    Normalizer()(text)


@settings(max_examples=30, deadline=None)
@given(st.integers(min_value=1, max_value=50_000), st.integers(min_value=0, max_value=3))
def test_nested_braces_balance(depth, unclosed):
    """Nested boxes of any depth: balanced ones are found whole, unbalanced ones are never matched."""
    inner = "{" * depth + "7" + "}" * depth
    assert last_boxed(r"\boxed{" + inner + "}", max_chars=len(inner)) == inner
    assert last_boxed(r"\boxed{" + "{" * (depth + unclosed) + "7" + "}" * depth, max_chars=10 * depth) is None


# ----- the math family's policy: math.find_answer ------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (r"<think>\boxed{1}</think><answer>The value is \boxed{2}</answer>", ("2", "open_answer_tag")),
        ("<answer> 12 </answer>", ("12", "open_answer_tag")),
        ("<answer>12", ("12", "open_answer_tag")),
        (r"<answer>5</answer> \boxed{6}", ("5", "open_answer_tag")),  # the tag first, unlike exact_match
        (r"Hence the final answer is $\frac{3}{4}$. I hope it is correct.", (r"\frac{3}{4}", "final_statement")),
        ("The answer is 3\n#### 4", ("3", "final_statement")),  # phrases before ####, unlike exact_match
        (r"So \boxed{255} earned. Final Answer: The final answer is $10,455$.", ("10,455", "final_statement")),
        (r"The answer is 5. Checking again, \boxed{6}", ("6", "final_statement")),  # the later statement
        ("<answer>She makes $18 every day.</answer>", ("18", "open_answer_tag")),  # prose in the tag is read
        ("She has 3 + 4 = 7 apples.\n#### 7", ("7", "gsm8k")),
        (r"Therefore $x = \frac{3}{7}$.", (r"x = \frac{3}{7}", "last_math")),
        (r"So the area is $5\sqrt{2}$.", (r"5\sqrt{2}", "last_math")),
        ("the roots are $-2$ and $1$.", ("-2, 1", "last_math")),
        (r"Let $d = \frac{90}{n}$. Therefore, there are 12 sequences.", ("12", "last_number")),  # a later sentence
        ("she earns $2 \\times (16 - 7) = $2 \\times 9 = \\$18 $.", (r"2 \times 9 = \$18", "last_math")),
        ("x^2 + 1", ("x^2 + 1", "bare")),
        (r"\frac13", (r"\frac13", "bare")),
        ("15 miles", ("15 miles", "bare")),
        ("I get 12 eggs, minus 3 is 9 eggs", ("9", "last_number")),
        ("Prices: 1,250.50 dollars", ("1,250.50", "last_number")),
        ("ratio 3/4", ("3/4", "last_number")),
        ("AZYUK2A", None),  # a digit inside a word
        ("The legs are 2 inches: \\[ \\frac{1}{2} \\cdot", None),  # truncated inside a display
        ("nothing to see", None),
        ("{" * MB, None),
    ],
)
def test_find_answer(text, expected):
    assert find_answer(text) == (None if expected is None else Extraction(*expected))


def test_find_answer_last_number_fallback_can_be_disabled():
    assert find_answer("so it is 9", last_number=False) is None


def test_find_answer_is_unbounded_and_linear():
    """Over-long answers come back whole (the math reward reports their length); huge inputs stay fast."""
    deep = r"\boxed{" + "{" * 100_000 + "}" * 100_000 + "}"
    assert find_answer(deep) == ("{" * 100_000 + "}" * 100_000, "final_statement")
    assert find_answer("x " * 500_000 + "answer is 4") == ("4", "final_statement")
    assert find_answer("1" * MB) == ("1" * MB, "last_number")


@given(st.text(max_size=200))
def test_find_answer_never_raises(text):
    found = find_answer(text)
    assert found is None or (isinstance(found, Unreadable) and found.reason) or (isinstance(found.answer, str) and found.answer)


# ----- issue 20: statements read faithfully ------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (r"5 \text{ or } 6", ["5", "6"]),
        ("either x = 1 or x = 2", ["x = 1", "x = 2"]),
        (r"\{1 \text{ or } 2\}", [r"\{1 \text{ or } 2\}"]),  # inside brackets: one value
        ("1 and/or 2", ["1", "2"]),
        ("5 or", ["5", ""]),
        ("Oregon", ["Oregon"]),
        ("x for y", ["x for y"]),
    ],
)
def test_alternatives(text, expected):
    assert alternatives(text) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (r"The answer is $\frac{1}{12}$ or 1.", r"\frac{1}{12} \text{ or } 1"),
        ("The answer is either x = 6 or x = 5.", r"x = 6 \text{ or } x = 5"),
        (r"Final answer: 8\sqrt{6} (or possibly 48).", r"8\sqrt{6} \text{ or } 48"),
        ("The answer is 12, but let me check.", "12"),  # a remark, no second value
        ("The answer is 12, or maybe 13.", r"12 \text{ or } 13"),
        ("The answer is fifty-two.", "52"),
        ("So, the answer is twelve apples.", "12"),
        ("the answer is one of the following", None),
        ("The answer is 12 because there are 3 boxes with 4 each.", "12"),
        ("The answer (arabic numerals) is 80. Then 5", "80"),
        ("**Answer**: forty one", "41"),
        ("The answer would be 52.", "52"),
        ("The answer is 16 - 9 = 7.", "16 - 9 = 7"),
    ],
)
def test_answer_is_reads_each_value_offered(text, expected):
    assert answer_is(text) == expected


@pytest.mark.parametrize(
    "text",
    ["The answer is 5 or more.", "The answer is 5 apples and 3 oranges.", "The answer is $x=2$, giving $y=3$.",
     "The answer is at least 5.", "The answer is 5?", "The answer is 5; alternatively 6."],
)  # fmt: skip
def test_answer_is_refuses_what_it_cannot_read_faithfully(text):
    found = extract_answer(text, ["answer_is"])
    assert isinstance(found, Unreadable) and found.how == "answer_is" and found.reason


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (r"\boxed{18} Wait, I made an arithmetic error above. Fixing it, the correct answer is 20.", "20"),
        (r"<answer>5</answer> The answer is 6.", "6"),
        (r"\boxed{4} <answer>5</answer>", "5"),
        (r"\boxed{18}. Wait, let me check: 18 is right.", "18"),
        (r"$\boxed{-2, 5}$ or $\boxed{5}$", r"-2, 5 \text{ or } 5"),
    ],
)
def test_final_statement_is_the_last_statement(text, expected):
    assert final_statement(text) == expected


@pytest.mark.parametrize(
    "text",
    [r"\boxed{18} Wait, I made an error. It should be 20.", r"\boxed{18}" + "\n\nWait, recheck: 20 is correct.",
     "So the answer is 18. Scratch that, I miscounted: it's 20.", "答案是 \\boxed{18}。不对，重新算一下，应该是 20。",
     "Die Antwort ist 18. Moment, das ist falsch. Richtig ist 20.", "Ответ: 18. Подожди, это неверно. На самом деле 20.",
     "答えは18です。いや、間違えました。正しくは 20 です。"],
)  # fmt: skip
def test_a_statement_taken_back_and_corrected_to_one_value_is_read_again(text):
    assert final_statement(text) == "20"
    assert find_answer(text) == Extraction("20", "final_statement")


@pytest.mark.parametrize(
    "text",
    [r"\boxed{18} Wait, I made an error: 4 + 16 = 20, then 20 - 1 = 19.", "The answer is 18. Actually, it is 20 or 21.",
     "答案是 18。不对，应该是 20 或 21。", "The answer is 18. Wait, maybe 20.", "The answer is 18. Wait, let me check 20 more cases."],
)  # fmt: skip
def test_a_statement_taken_back_without_one_clear_value_is_no_answer(text):
    assert isinstance(final_statement(text), Unreadable)
    assert isinstance(find_answer(text), Unreadable)


def test_an_answer_tag_taken_back_is_read_again():
    text = "<answer>18</answer> Actually, the total is 20."
    assert answer_tag(text) == "20" and find_answer(text) == Extraction("20", "open_answer_tag")
    assert isinstance(answer_tag("<answer>18</answer> Actually, 4 + 16 = 20, so 20 it is."), Unreadable)
    assert final_statement("<answer>18</answer> Actually the answer is 20") == "20"  # a later statement


@pytest.mark.parametrize(
    ("text", "truncated"),
    [
        ("... (2) Now, for the next part, we need to", True), ("so we get x =", True), ("we have 3 cases to", True),
        (r"so \[ \frac{1}{2} \cdot", True), ("The answer is 12.", False), ("So she has 12 apples left", False),
        ("It costs 1,000.99€", False), ("... is 2/3. <|im_start|>user", False), ("x = 5", False),
        ("इसलिए 67 कमीजें हैं। ", False),
    ],
)  # fmt: skip
def test_looks_truncated(text, truncated):
    assert looks_truncated(text) is truncated


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("(2) Now, for the next part, we need to", None), ("2. Next, we compute the", None), ("Step 3: Now we", None),
        ("Case 2: Suppose", None), ("the total is 25.\nTherefore, she has fifty-two.", "52"),
        ("Four containers were imported.", "4"), ("the first 3 and the three given conditions", "3"),
        ("she has twenty or more", None),
        ("so 12 remain for each one.", "12"), ("the three given conditions hold for 12", "12"),
        ("the answer is (2)", "2"), ("n \\ge 3", None), ("at least 5", None), ("So x = 2 1/2", "2 1/2"),
    ],
)  # fmt: skip
def test_last_number_skips_labels_and_bounds_and_reads_numbers_in_words(text, expected):
    assert last_number(text) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [("2√3", r"2\sqrt{3}"), ("√(x+1)", r"\sqrt{x+1}"), ("(−∞, 3)", r"(-\infty , 3)"), ("x²", "x^{2}"),
     ("½", r"\frac{1}{2}"), ("∛8", r"\sqrt[3]{8}"), ("plain", "plain")],
)  # fmt: skip
def test_unicode_to_latex(text, expected):
    assert unicode_to_latex(text) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [("So the number is $odd$.", "odd"), ("The value is $0xff$.", "0xff"), ("we get $not odd$.", "not odd"),
     ("It costs $5 and $10 more, so $x = 3$.", "x = 3")],
)  # fmt: skip
def test_a_word_alone_between_dollars_is_math(text, expected):
    assert last_math(text) == expected


def whole_words(text: str, words, start: int, reverse: bool) -> list[tuple[int, int]]:
    """Every occurrence of ``words`` as a whole word from ``start``, by brute force, in text order or from the end."""
    lower = text.lower()
    found = sorted((i, word) for word in words for i in range(start, len(lower)) if lower.startswith(word, i)
                   and not (i and lower[i - 1].isalpha()) and not (i + len(word) < len(lower) and lower[i + len(word)].isalpha()))
    return [(i, i + len(word)) for i, word in (reversed(found) if reverse else found)]


@given(st.lists(st.sampled_from(["one", "on", "e", "ten", "tent", "seventeen", "seven", "x", " ", "-", "hundred"]),
                max_size=12).map("".join), st.integers(0, 20), st.booleans())
def test_number_words_are_found_in_order_from_either_end(text, start, reverse):
    assert list(_words_in(text, NUMBER_WORDS, start, reverse=reverse)) == whole_words(text, NUMBER_WORDS, start, reverse)


@pytest.mark.parametrize(
    ("phrase", "expected"),
    [
        ("71, not 47", "71"),
        ("71, nicht 47.", "71"),
        ("71，不是47。", "71"),
        ("71 and not 47", "71"),
        ("71, не 47", "71"),
        ("$x = 4$, not 2.", "$x = 4$"),
        ("71, not $\\frac{1}{2}$", "71"),
        ("not 47", "not 47"),  # no value before the denial: nothing to keep
        ("71, not 47 as I thought", "71, not 47 as I thought"),  # the denial does not end the phrase
        ("71, not 47 or 48", "71, not 47 or 48"),
        ("71 or 47", "71 or 47"),
    ],
)
def test_a_value_denied_after_the_answer_is_a_contrast_not_a_second_value(phrase, expected):
    from rewardhub.rewards.text.extract.statements import without_denied_value

    assert without_denied_value(phrase) == expected


@pytest.mark.parametrize(("text", "expected"), [
    ("abc", False), ("a5", True), ("x²", True), ("٣ apples", True), ("", False), ("$\\frac{a}{b}$", False),
])
def test_a_digit_is_what_str_isdigit_says_in_any_script(text, expected):
    from rewardhub.rewards.text.extract.answers import has_digit

    assert has_digit(text) is expected is any(char.isdigit() for char in text)


@pytest.mark.parametrize(("text", "expected"), [
    ("12 instead of 13", False), ("12 Moment, das ist falsch", True), ("595 いや", True), ("straße", False), ("", False),
])
def test_a_clause_opens_on_a_capital_or_a_letter_without_case(text, expected):
    from rewardhub.rewards.text.extract.statements import _capital_or_caseless

    assert _capital_or_caseless(text) is expected is any(char.isalpha() and not char.islower() for char in text)
