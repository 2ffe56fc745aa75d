"""exact_match on the benchmark generators it is measured with (issue 34): the forms the world writes
(bench/forms.py: 0 false positives, at most 5% of the right answers of each family scored 0) and the red-team
battery (bench/math_redteam_cases.py: 0 false positives), from seeds and sizes the benchmarks do not print."""

from __future__ import annotations

from collections import defaultdict

import pytest
from bench_modules import load_bench

import rewardhub


def scored(cases) -> list[tuple[object, float | None]]:
    reward = rewardhub.get("exact_match")
    values = reward(["q"] * len(cases), [case.completion for case in cases], solution=[case.gold for case in cases])
    return list(zip(cases, values, strict=True))


@pytest.fixture(scope="module")
def forms():
    return scored(list(load_bench("forms").generate(60, 3434)))


def test_no_form_pays_a_wrong_answer(forms):
    assert [(form.family, form.gold, form.completion[-80:]) for form, value in forms if value == 1.0 and not form.truth] == []


def test_each_family_scores_at_most_five_percent_of_its_right_answers_zero(forms):
    right, missed = defaultdict(int), defaultdict(list)
    for form, value in forms:
        if form.truth:
            right[form.family] += 1
            if value != 1.0:
                missed[form.family].append(form.completion[-80:])
    assert {family: rows for family, rows in missed.items() if len(rows) > 0.05 * right[family]} == {}


def test_no_red_team_case_pays_a_wrong_answer():
    cases = [case for case in load_bench("math_redteam_cases").generate(60, 2020) if not _wrong_by_mistake(case.gold)]
    assert [(case.family, case.gold, case.completion[-80:]) for case, value in scored(cases) if value == 1.0 and not case.truth] == []


def _wrong_by_mistake(gold: str) -> bool:
    """Golds for which the generator's "wrong" answer can be the gold itself: a set that is its own negation
    (``\\{-1, 1\\}``: the wrong set of negatives is the same set), a matrix starting with 0 (the wrong one negates
    its first entry: ``-0`` is 0)."""
    if gold.startswith("\\{"):
        items = {item.strip() for item in gold[2:-2].split(",")}
        return {item.lstrip("-") if item.startswith("-") else f"-{item}" for item in items} == items
    return gold.startswith("\\begin{pmatrix} 0 &")
