"""``multiple_choice`` red team (issues 33 and 34): what a policy writes to game the choice reader, and the
usual chat answers that must keep their credit. The right answer is B (Jupiter) throughout."""

from __future__ import annotations

import pytest

import rewardhub
from rewardhub.testing import GAMING_PROBES, TEXT_PROBES, check_contract


def values(reward, completions, **columns):
    n = len(completions)
    return reward.evaluate([""] * n, completions, **{k: [v] * n for k, v in columns.items()}).scores

CHOICES = ["Mercury", "Jupiter", "Mars", "Venus"]
GAMED = [  # each must score 0
    "every option except A", "The answer is every option except A.", "Answer: all but A", "Any option other than A.",
    "Answer: everything besides A", "Respuesta: todas excepto A", "答案：除了A以外都对",
    "A\nB\nC\nD", "A\nB", "(A)\n(B)\n(C)\n(D)", "**A**\n**B**",
    "A o B", "A oder B", "A ou B", "A или B", "A或B", "答案是A或B", "A 또는 B", "AかB", "Answer: A oppure B",
    "The answer is A o B.", "Answer: A y B", "Answer: A und B",
    "A through D", "Answer: A to D", "The answer is A through D.", "Answer: A-D", "A bis D",
    "The answer is B. Actually, B is wrong.", "Answer: B\nWait, B is incorrect.", "答案是B。不对，B是错的。",
    "Answer: B.\nActually, on second thought: C", "The answer is B. Actually, it's D.", "答案：B。不对，应该是C。",
    "Answer: B\nWait, it's C.", "Antwort: B. Eigentlich: C",
    "Answer: A\n\nOption B (Jupiter) is the largest planet, option C (Mars) is red.",
    "**Answer: D) Venus**\n\nWhy not the others: Option A (Mercury) is the smallest. Option B (Jupiter) is a gas giant.",
    "Ａ", "答案：Ａ", "ＡｏｒＢ", "Answer: Ａ or Ｂ", "Ｂ\nＣ",
    "Answer: B\u200b or C", "B\u2028C", "Answer: B\u2029Answer: C",
]
HONEST = [  # each must score 1.0
    "Ｂ", "答案：Ｂ", "答案是B", "答案是 B。", "正确答案是（Ｂ）", "Respuesta: B", "Antwort: B", "Réponse : B", "Ответ: B",
    "正解はBです", "정답: B", "Answer: Ｂ) Jupiter",
    "**Answer: B) Jupiter**\n\nOption A (Mercury) is the smallest planet. Option D (Venus) is the hottest, "
    "and option C (Mars) is red.",
    "Answer: B\n\nOption A is wrong because Mercury is small; option C is Mars; D is Venus.",
    "The answer is B.\n\n- A (Mercury): too small\n- C (Mars): too small\n- D (Venus): too small",
    "The answer is A. Actually, it's B.", "Answer: C\nWait, it's B.", "答案：C。不对，应该是B。",
    "The answer is C. Actually, on second thought: B", "Answer: B. Actually, A is wrong because it is tiny.",
    "The answer is not obvious at first. Option A is tiny. It's B.",
    "The answer is B (Jupiter); A, C and D are all smaller.", "B\u200b", "Answer:\u00a0B",
]


@pytest.mark.parametrize("text", GAMED)
def test_gamed_choices_score_zero(text):
    (score,) = values(rewardhub.get("multiple_choice"), [text], solution="B", choices=CHOICES)
    assert score.value == 0.0, score.reason


@pytest.mark.parametrize("text", HONEST)
def test_honest_choices_keep_their_credit(text):
    (score,) = values(rewardhub.get("multiple_choice"), [text], solution="B", choices=CHOICES)
    assert score.value == 1.0, score.reason


def test_the_chat_answer_is_read_as_its_choice_in_both_directions():
    template = "**Answer: {0}) {1}**\n\n" + " ".join(f"Option {letter} ({name}) is not it." for letter, name in
                                                     zip("ABCD", CHOICES, strict=True))
    reward = rewardhub.get("multiple_choice")
    for letter, name in zip("ABCD", CHOICES, strict=True):
        text = template.format(letter, name).replace(f"Option {letter} ({name}) is not it.", "")
        (score,) = values(reward, [text], solution="B", choices=CHOICES)
        assert score.value == float(letter == "B"), (letter, score.reason)


def test_reasons_say_what_was_refused():
    reward = rewardhub.get("multiple_choice")
    except_a, lines, retracted = values(reward, ["every option except A", "A\nB\nC\nD", "Answer: B. Actually, B is wrong."],
                                        solution="B")
    assert "rules an option out" in except_a.reason
    assert "several options asserted (A, B, C, D) in the closing lines" in lines.reason
    assert "then ruled it out" in retracted.reason


def test_a_full_width_reference_reads_too():
    assert values(rewardhub.get("multiple_choice"), ["Answer: B"], solution="Ｂ")[0].value == 1.0


def test_contract_with_the_text_layer_probes():
    report = check_contract(rewardhub.get("multiple_choice"), right="B", wrong="C", columns={"solution": "B"},
                            correct_completion="答案：Ｂ", probes=GAMING_PROBES + TEXT_PROBES)
    assert all(report.probe_values[p.name] == 0.0 for p in TEXT_PROBES), report.probe_values
