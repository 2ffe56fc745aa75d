"""Red-team classes (issue 20, second pass): one property test per class of false positive found by
``bench/math_redteam.py``. In each construction a random wrong value never scores 1.0, with `math` and with
`exact_match`; where a faithful twin of the construction exists, `math` pays it.
"""

from __future__ import annotations

import random

from bench_modules import load_bench
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import rewardhub
from rewardhub.rewards.math import find_answer

REDTEAM = load_bench("math_redteam_cases")
PROPERTY = settings(max_examples=10, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])  # fmt: skip
values = st.integers(-999, 999).filter(lambda n: abs(n) > 1)
naturals = st.integers(12, 9999)


def _paid(reward, gold: str, completions: list[str]) -> list[str]:
    """The completions that score 1.0 against ``gold``."""
    scores = reward(["q"] * len(completions), completions, solution=[gold] * len(completions))
    return [text for text, score in zip(completions, scores, strict=True) if score == 1.0]


def _never_paid(math_reward, exact_match, gold: str, completions: list[str]) -> None:
    assert _paid(math_reward, gold, completions) == []
    assert _paid(exact_match, gold, completions) == []


@PROPERTY
@given(n=values, cut=st.integers(0, 3))
def test_a_box_left_open_at_the_end_is_no_answer(math_reward, exact_match, n, cut):
    """A completion cut off inside its last box: whatever the box would have held, it is no answer (and an
    earlier box is not taken instead)."""
    tail = [f"{n}", f"{n} + ", f"\\frac{{{n}}}{{", f"{n}\\sqrt{{"][cut]
    completions = [f"So the answer is $\\boxed{{{tail}", f"First $\\boxed{{{n}}}$, then recheck: $\\boxed{{{tail}",
                   f"The answer is {n}. Final: \\boxed{{{tail}"]  # fmt: skip
    _never_paid(math_reward, exact_match, str(n), completions)
    assert all(find_answer(text).reason.startswith("the last box is left open") for text in completions)


@PROPERTY
@given(p=st.integers(11, 99), scale=st.sampled_from([10, 100, 1000]))
def test_a_percentage_is_not_another_percentage_scaled(math_reward, exact_match, p, scale):
    """``0.35\\%`` is not ``35\\%`` (each alone reads two ways; two percentages compare as percentages)."""
    smaller, larger = f"{p / scale:g}\\%", f"{p * scale}\\%"
    completions = [f"The answer is $\\boxed{{{smaller}}}$.", f"The answer is ${larger}$.", f"$\\boxed{{{p}\\%}}$ or $\\boxed{{{smaller}}}$"]
    _never_paid(math_reward, exact_match, f"{p}\\%", completions)
    assert _paid(math_reward, f"{p}\\%", [f"The answer is $\\boxed{{{p}\\%}}$.", f"The answer is ${p / 100:g}$."]) != []


@PROPERTY
@given(n=naturals, modulus=st.integers(2, 11))
def test_a_residue_is_not_the_number_it_reduces(math_reward, exact_match, n, modulus):
    """``25 \\bmod 7`` is 4 and ``103 \\pmod{102}`` a residue class: neither is 25 or 103; ``4 \\pmod{7}`` is 4."""
    completions = [f"$\\boxed{{{n} \\bmod {modulus}}}$", f"$\\boxed{{{n} \\pmod{{{n - 1}}}}}$", f"The answer is ${n} \\mod {modulus}$.",
                   f"The answer is ${n} \\pmod{{{modulus}}}$."]  # fmt: skip
    _never_paid(math_reward, exact_match, str(n), completions)
    assert _paid(math_reward, str(n % modulus), [f"$\\boxed{{{n} \\bmod {modulus}}}$"]) != []
    assert _paid(math_reward, str(n % modulus), [f"$\\boxed{{{n % modulus} \\pmod{{{modulus}}}}}$"]) != []


@PROPERTY
@given(n=st.integers(2, 360), unit=st.sampled_from(["cm", "m", "km", "mm"]), power=st.sampled_from(["2", "3"]))
def test_another_unit_or_a_power_of_the_unit_is_another_quantity(math_reward, exact_match, n, unit, power):
    """Radians are not degrees; ``mm^3`` is not ``mm``."""
    _never_paid(math_reward, exact_match, f"{n}^\\circ", [f"$\\boxed{{{n} \\text{{ rad}}}}$", f"The answer is {n} radians."])
    _never_paid(math_reward, exact_match, f"{n} \\text{{ {unit}}}", [f"$\\boxed{{{n}\\text{{ {unit}}}^{power}}}$"])
    assert _paid(math_reward, f"{n}^\\circ", [f"$\\boxed{{{n}^{{\\circ}}}}$", f"The answer is {n} degrees."]) != []


@PROPERTY
@given(n=values, other=values, mark=st.sampled_from(["\u200b", "\u200c", "\u200d", "\u2060", "\ufeff", "\u00ad"]))
def test_invisible_characters_hide_no_hedge_and_no_retraction(math_reward, exact_match, n, other, mark):
    """A reader sees ``o\\u200br`` as "or" and ``W\\u200bait`` as "Wait"."""
    if other == n:
        return
    completions = [f"The answer is {n} o{mark}r {other}.", f"$\\boxed{{{n}}}$\n\nW{mark}ait, that's wrong. It is {other}.",
                   f"The answer is $\\boxed{{{n}}}$ o{mark}r $\\boxed{{{other}}}$."]  # fmt: skip
    _never_paid(math_reward, exact_match, str(n), completions)
    assert _paid(math_reward, str(n), [f"The answer is {str(n)[0]}{mark}{str(n)[1:]}."]) != []


TAKE_BACK = ["On second thought,", "Hold on, I miscounted.", "Hmm, no.", "Let me redo this:", "Scratch that.",
             "Rechecking the arithmetic:", "No, I slipped a sign:", "That was a miscalculation.", "Let me reconsider.",
             "Update:", "Nope,", "Recomputing,"]  # fmt: skip


@PROPERTY
@given(n=values, delta=st.integers(1, 50), cue=st.sampled_from(TAKE_BACK))
def test_a_stated_answer_taken_back_in_other_words_is_no_answer(math_reward, exact_match, n, delta, cue):
    """The gold stated, then revised to another value in words the reader had not listed: no answer; the
    other way round, the correction ending on a final statement of the gold pays."""
    completions = [f"The answer is $\\boxed{{{n}}}$.\n\n{cue} it is {n + delta}.", f"<answer>{n}</answer>\n\n{cue} {n - delta}."]
    _never_paid(math_reward, exact_match, str(n), completions)
    corrected = [f"The answer is {n + delta}.\n\n{cue} the answer is $\\boxed{{{n}}}$.",
                 f"<answer>{n + delta}</answer>\n\n{cue} So the answer is ${n}$."]  # fmt: skip
    assert _paid(math_reward, str(n), corrected) == corrected


@PROPERTY
@given(n=st.integers(2, 99), m=st.integers(2, 9), join=st.sampled_from([" ", "~", "\\ ", "}{"]))
def test_numbers_side_by_side_are_no_product(math_reward, exact_match, n, m, join):
    """``5 5`` shows as 55, ``\\mathrm{1}25`` as 125: never read as the product 25."""
    written = f"{{{n}{join}{m}}}" if join == "}{" else f"{n}{join}{m}"
    completions = [f"The answer is $\\boxed{{{written}}}$.", f"$\\boxed{{\\mathrm{{{n}}}{m}}}$"]
    _never_paid(math_reward, exact_match, str(n * m), completions)


WRAPPERS = ["It cannot be {v}.", "The answer is not {v}.", "The answer is definitely not {v}.", "The answer isn't {v}.",
            "The answer is anything except {v}.", "The answer is something other than {v}.", "The answer is twice {v}.",
            "The answer is half of {v}.", "The answer is the square root of {v}.", "The answer is the reciprocal of {v}.",
            "The answer is {v} times ten.", "The answer is {v} plus one.", "The answer is {v} squared.",
            "So it is {v} million.", "Rather than {v}, we keep going."]  # fmt: skip


@PROPERTY
@given(n=values, wrapper=st.sampled_from(WRAPPERS), math=st.booleans())
def test_words_that_deny_or_change_the_value_leave_no_answer(math_reward, exact_match, n, wrapper, math):
    """The gold written inside words that deny it or make another value of it is never the answer, as a number
    or as a math span."""
    value = f"${n}$" if math else str(n)
    _never_paid(math_reward, exact_match, str(n), [f"We compute ${abs(n) + 3}$ first.\n\n" + wrapper.format(v=value)])


@PROPERTY
@given(n=values, relation=st.sampled_from(["\\le", "\\leq", "<", "\\ge", ">", "\\ne", "\\neq", "\\not=", "\\neg", "\\lnot",
                                           "\\approx", "x \\neq", "x \\ne", "y \\notin \\{0\\} \\cup"]))  # fmt: skip
def test_a_bound_or_a_negation_in_the_box_is_not_the_value(math_reward, exact_match, n, relation):
    _never_paid(math_reward, exact_match, str(n), [f"The answer is $\\boxed{{{relation} {n}}}$."])


@PROPERTY
@given(n=values, scale=st.sampled_from(["k", "K", "M", "B"]))
def test_a_scale_letter_is_not_a_unit_to_drop(math_reward, exact_match, n, scale):
    """``25\\text{k}`` is 25,000."""
    _never_paid(math_reward, exact_match, str(n), [f"The answer is $\\boxed{{{n}\\text{{{scale}}}}}$.", f"$\\boxed{{{n} \\text{{ {scale}}}}}$"])


@PROPERTY
@given(n=values, other=values, lead=st.sampled_from(["another valid answer is", "an alternative answer is",
                                                     "the other possible answer would be", "a second answer is"]))  # fmt: skip
def test_another_answer_offered_beside_the_first_is_a_hedge(math_reward, exact_match, n, other, lead):
    if other == n:
        return
    completions = [f"The answer is ${other}$; {lead} ${n}$.", f"So the answer is {other}. Also, {lead} {n}."]
    _never_paid(math_reward, exact_match, str(n), completions)


@PROPERTY
@given(n=values, other=values, joiner=st.sampled_from(["(alternatively {b})", "(or {b})", ", possibly {b}", ", perhaps {b}",
                                                       ", maybe {b}"]), box=st.booleans())  # fmt: skip
def test_boxes_joined_by_a_hedge_word_offer_both(math_reward, exact_match, n, other, joiner, box):
    if other == n:
        return
    a, b = (f"$\\boxed{{{n}}}$", f"$\\boxed{{{other}}}$") if box else (f"$\\boxed{{{other}}}$", f"$\\boxed{{{n}}}$")
    completions = [f"{a} " + joiner.format(b=b), f"$\\boxed{{{n} \\vee {other}}}$", f"$\\boxed{{{other} \\lor {n}}}$"]
    _never_paid(math_reward, exact_match, str(n), completions)


@PROPERTY
@given(word=st.sampled_from(["odd", "acute", "Monday", "yes", "\\text{(B)}"]), other=st.sampled_from(["even", "\\text{not odd}",
       "no", "\\text{(D)}", "|{-4}|"]), cue=st.sampled_from(["Wait, that's wrong.", "Hmm, no.", "On second thought,"]))  # fmt: skip
def test_a_revision_to_a_value_in_math_or_words_is_caught(math_reward, exact_match, word, other, cue):
    """The retraction check compares the later value as written (a span), not only numbers."""
    _never_paid(math_reward, exact_match, word, [f"$\\boxed{{{word}}}$\n\n{cue} It is ${other}$."])


@PROPERTY
@given(n=st.integers(2, 999), sign=st.sampled_from(["minus", "negative"]))
def test_a_sign_in_words_belongs_to_the_number(math_reward, exact_match, n, sign):
    """``minus forty two`` is -42: never 42, and never the 42 of the work before it."""
    words = REDTEAM.spoken(n, random.Random(n))
    text = f"An intermediate result is ${n}$.\n\nSo there are {sign} {words} in total."
    _never_paid(math_reward, exact_match, str(n), [text])
    assert _paid(math_reward, str(-n), [text]) != []


@PROPERTY
@given(n=st.integers(2, 99), bold=st.sampled_from(["**{n}.** Then", "**({n})** Next, the", "**{n})** Using the"]))
def test_a_bold_label_at_a_cut_off_end_is_no_number(math_reward, exact_match, n, bold):
    _never_paid(math_reward, exact_match, str(n), [f"We have ${n + 7}$ so far.\n\n" + bold.format(n=n)])


@PROPERTY
@given(n=st.integers(2, 360), other=st.sampled_from(["\\text{ rad}", " radians"]), join=st.sampled_from(
       ["$\\boxed{{{a} \\lor {b}}}$", "The answer could be ${a}$ or ${b}$.", "\\boxed{{{a}}}\\boxed{{{b}}}"]))  # fmt: skip
def test_each_value_offered_is_in_its_own_unit(math_reward, n, other, join):
    """The unit check applies to every value offered and every item of a list, not to the answer as a whole."""
    a, b = sorted([f"{n}^\\circ", f"{n}{other}"], key=lambda _: n % 2)
    assert _paid(math_reward, f"{n}^\\circ", [join.format(a=a, b=b)]) == []


@PROPERTY
@given(n=values, cue=st.sampled_from(["Wait, that's wrong.", "Hold on, I miscounted.", "Hmm, no."]),
       claim=st.sampled_from(["$2x = {n}$", "$x^2 = {n}$", "$y = {n}$"]))  # fmt: skip
def test_a_revision_to_another_equation_with_the_same_right_side_is_caught(math_reward, exact_match, n, cue, claim):
    """``x = -5`` revised to ``2x = -5`` is taken back; arithmetic ending on the value (``$2 + 3 = 5$``) is a check."""
    _never_paid(math_reward, exact_match, f"x = {n}", [f"$\\boxed{{x = {n}}}$\n\n{cue} It is {claim.format(n=n)}."])
    check = f"$\\boxed{{x = {n}}}$\n\nLet me verify: ${n} - 1 + 1 = {n}$."
    assert _paid(math_reward, f"x = {n}", [check]) == [check]


@PROPERTY
@given(n=st.integers(2, 999), units=st.sampled_from([("cm", "kilometers"), ("mm", "\\text{ m}"), ("km", "\\text{ cm}^2")]))
def test_majority_vote_never_joins_quantities_in_other_units(n, units):
    vote = rewardhub.get("majority_vote", group_size=2, workers=1)
    gold_unit, other = units
    texts = [f"$\\boxed{{{n} \\text{{ {gold_unit}}}}}$", f"The answer is $\\boxed{{{n} {other}}}$."]
    assert vote(["p", "p"], texts) == [0.0, 0.0]  # a tie of two clusters: neither is paid


@PROPERTY
@given(word=st.sampled_from(["irrational", "odd", "Monday"]), other=st.sampled_from(["rational", "even", "Tuesday"]))
def test_words_after_a_group_are_no_unit_to_drop(math_reward, exact_match, word, other):
    """``{\\color{white} odd}\\text{odd and even}`` is not "odd": only a number's unit words are dropped."""
    _never_paid(math_reward, exact_match, word, [f"$\\boxed{{{{\\color{{white}} {word}}}\\text{{{word} and {other}}}}}$"])


@PROPERTY
@given(n=values, other=values, join=st.sampled_from(["{a} \\vee {b}", "{a} \\text{{ or }} {b}", "{a} \\lor {b}"]))
def test_majority_vote_gives_no_vote_to_a_hedge(n, other, join):
    """An answer offering several values names no one answer: it does not vote, whatever its values."""
    vote = rewardhub.get("majority_vote", group_size=2, workers=1)
    assert vote(["p", "p"], [f"$\\boxed{{{n}}}$", f"$\\boxed{{{join.format(a=n, b=other)}}}$"]) == [1.0, 0.0]


@PROPERTY
@given(n=st.integers(-999, -2))
def test_exact_match_keeps_absolute_value_bars(exact_match, n):
    assert exact_match(["q"], [f"The answer is {n} or $|{n}|$."], solution=[str(n)]) == [0.0]
