"""`majority_vote`: groups by prompt, equivalent answers vote together, ties/answerless/incomplete groups."""

from __future__ import annotations

import pytest

import rewardhub
from rewardhub import ConfigError, Score
from rewardhub.rewards.majority_vote import MajorityVote


def boxed(*answers: str) -> list[str]:
    return [rf"Reasoning... \boxed{{{a}}}" if a else "I am not sure." for a in answers]


@pytest.fixture(scope="module")
def vote():
    return MajorityVote(timeout=5, workers=2)


def test_equivalent_spellings_vote_together(vote):
    texts = boxed("0.5", r"\frac{1}{2}", "1/2", "2", "2", r"\dfrac{2}{4}", "3", "2.0")
    result = vote.evaluate(["p"] * 8, texts)
    assert result.values == [1.0, 1.0, 1.0, 0.0, 0.0, 1.0, 0.0, 0.0]
    assert result.verdicts == [True, True, True, False, False, True, False, False]
    assert result.reasons[0] == "majority answer 0.5 (4/8 votes)"
    assert result.reasons[3] == "minority answer 2 (3/8 votes; majority has 4)"


def test_symbolic_equivalence_needs_the_workers(vote):
    texts = boxed("2(x+1)", "2x+2", "x+1", r"\sqrt{12}", r"2\sqrt{3}", r"2 \sqrt{3}")
    result = vote.evaluate(["p"] * 6, texts)
    assert result.values == [0.0, 0.0, 0.0, 1.0, 1.0, 1.0]


def test_string_equivalence_option():
    vote = MajorityVote(equivalence="string")
    assert vote.checker is None
    texts = boxed("0.5", r"\frac{1}{2}", r"\frac{1}{2}", "0.5", "0.5")
    assert vote.evaluate(["p"] * 5, texts).values == [1.0, 0.0, 0.0, 1.0, 1.0]


def test_groups_by_prompt_in_any_order(vote):
    prompts = ["a", "b", "a", "b", "a", "b"]
    texts = boxed("1", "7", "1", "8", "2", "8")
    assert vote.evaluate(prompts, texts).values == [1.0, 0.0, 1.0, 1.0, 0.0, 1.0]
    chat = [[{"role": "user", "content": p}] for p in prompts]
    assert vote.evaluate(chat, texts).values == [1.0, 0.0, 1.0, 1.0, 0.0, 1.0]


@pytest.mark.parametrize(
    ("ties", "expected"),
    [("none", [0.0, 0.0, 0.0, 0.0]), ("all", [1.0, 1.0, 1.0, 1.0]), ("first", [1.0, 0.0, 1.0, 0.0])],
)
def test_ties(ties, expected):
    vote = MajorityVote(ties=ties)
    result = vote.evaluate(["p"] * 4, boxed("3", "4", "3", "4"))
    assert result.values == expected
    if ties == "none":
        assert result.reasons[0] == "tie: 2 answers with 2 votes each; this answer 3 has 2/4 votes"


def test_answerless_completions(vote):
    texts = boxed("5", "", "5", "6")
    zero = vote.evaluate(["p"] * 4, texts).scores
    assert zero[1] == Score(0.0, "no answer found", False)
    assert [s.value for s in zero] == [1.0, 0.0, 1.0, 0.0]
    assert zero[0].reason == "majority answer 5 (2/3 votes)"  # answerless completions do not vote
    abstain = MajorityVote(answerless="abstain", last_number=False).evaluate(["p"] * 4, texts).values
    assert abstain == [1.0, None, 1.0, 0.0]


def test_no_answers_at_all(vote):
    result = vote.evaluate(["p"] * 3, boxed("", "", ""))
    assert result.values == [0.0, 0.0, 0.0]
    assert set(result.reasons) == {"no answer found"}


def test_min_votes(vote):
    spread = MajorityVote(min_votes=3)
    result = spread.evaluate(["p"] * 4, boxed("1", "1", "2", "3"))
    assert result.values == [0.0, 0.0, 0.0, 0.0]
    assert result.reasons[0].startswith("no majority: top answer has 2 vote(s) < min_votes 3")
    assert spread.evaluate(["p"] * 4, boxed("1", "1", "1", "3")).values == [1.0, 1.0, 1.0, 0.0]


def test_incomplete_group_abstains_with_a_reason():
    vote = MajorityVote(group_size=4)
    prompts = ["a"] * 4 + ["b"] * 3 + ["c"] * 8
    texts = boxed("1", "1", "2", "1") + boxed("5", "5", "6") + boxed(*"11112222")
    result = vote.evaluate(prompts, texts)
    assert result.values[:4] == [1.0, 1.0, 0.0, 1.0]
    assert result.values[4:7] == [None, None, None]
    assert result.reasons[4] == "incomplete group: 3 completions of this prompt in the batch, group_size is 4"
    assert result.values[7:] == [0.0] * 8  # two full groups of the same prompt: a tie, no winner


def test_registry_and_params():
    vote = rewardhub.get("majority_vote", ties="all")
    assert vote(None, boxed("1", "1", "2")) == [1.0, 1.0, 0.0]  # no prompts: one group, no gold needed
    for bad in ({"ties": "random"}, {"answerless": "skip"}, {"equivalence": "fuzzy"}, {"group_size": 0},
                {"min_votes": 0}):
        with pytest.raises(ConfigError):
            MajorityVote(**bad)


def test_contract_kit():
    from rewardhub.testing import check_contract

    report = check_contract(rewardhub.get("majority_vote", timeout=2))
    assert set(report.probe_values.values()) == {0.0}


def test_a_lone_completion_never_wins_its_own_vote(vote):
    """One-sample calls (verl, OpenRLHF without group assembly) used to give 'majority answer 6 (1/1 votes)'."""
    result = vote.evaluate(["What is 2 + 3?"], boxed("6"))
    assert result.values == [None]
    assert result.reasons == ["a lone completion of its prompt: nothing to vote with"]
    assert result.scores[0].outcome == "abstain"
    mixed = vote.evaluate(["p", "q", "q"], boxed("6", "5", "5"))
    assert mixed.values == [None, 1.0, 1.0]
    assert MajorityVote.needs_groups


TOWER = "9^{9^{9^{9}}}"  # parses in a millisecond; any comparison with a number evaluates it, for ever


@pytest.fixture
def deadlines(monkeypatch):
    """A fast-deadline vote whose worker calls are counted: how many items ran into the deadline."""
    vote = MajorityVote(timeout=1.0, workers=2)
    vote.evaluate(["warm"] * 2, boxed("x^2", "x x"))  # workers started, parser warmed up
    hit: list[int] = []
    pool = vote.checker.pool
    real_map = pool.map

    def counting_map(func, items, **kwargs):
        outcomes = real_map(func, items, **kwargs)
        hit.append(sum(o.status == "timeout" for o in outcomes))
        return outcomes

    monkeypatch.setattr(pool, "map", counting_map)
    return vote, hit


def test_one_runaway_answer_costs_its_group_one_deadline_and_is_a_timeout(deadlines):
    vote, hit = deadlines
    texts = boxed(TOWER, r"\frac{1}{2}", "0.5", "x+1", "1+x", "x + 1", r"\sqrt{4}", "3")
    result = vote.evaluate(["p"] * 8, texts)
    assert sum(hit) == 1  # read once, alone; never sent again to be compared with its 7 siblings
    assert result.outcomes == ["timeout"] + ["ok"] * 7
    assert result.values[0] is None and result.reasons[0] == (
        "timeout after 1 s: the answer could not be read in time, so it does not vote")
    assert result.values[1:] == [0.0, 0.0, 1.0, 1.0, 1.0, 0.0, 0.0]  # x+1 wins 3 of the 7 votes left
    assert result.reasons[3] == "majority answer x+1 (3/7 votes)"
    assert vote.totals["timeouts"] == 1


def test_a_runaway_answer_in_several_groups_is_read_once_and_scores_an_explicit_timeout_score(deadlines, monkeypatch):
    vote, hit = deadlines
    monkeypatch.setattr(vote, "timeout_score", 0.0)  # by default a timeout abstains; a user may ask for 0.0
    texts = boxed(TOWER, "2", "2", TOWER, "x", "x")
    result = vote.evaluate(["p", "p", "p", "q", "q", "q"], texts)
    assert sum(hit) == 1
    assert result.outcomes == ["timeout", "ok", "ok", "timeout", "ok", "ok"]
    assert result.values == [0.0, 1.0, 1.0, 0.0, 1.0, 1.0]


def test_timeout_score_is_a_param():
    assert rewardhub.get("majority_vote").timeout_score is None  # a timeout is no evidence against an answer
    assert rewardhub.get("majority_vote", timeout_score=0.0).timeout_score == 0.0
    assert "timeout_score" in {p for r in rewardhub.list_rewards() if r["name"] == "majority_vote"
                               for p in r["params"]}


# ----- only an answer naming one value votes (issue 33, item 4) ----------------------------------------------------
@pytest.mark.parametrize("forged", ["5 = 7", "7 = 7", "x = 5 = 7", "3 < 7", r"5 \le 7", r"x \neq 5", r"5 \approx 7",
                                    "5 ≠ 7", r"2 \cdot 3 = 7", r"7 \to 7", "7 \\text{ oder } 8", "7 o 8", "7 или 8",
                                    "maybe 7", "vielleicht 7", "7 或 8"])
def test_relations_and_hedges_do_not_vote_with_the_majority(vote, forged):
    """``\\boxed{5 = 7}`` was read as 7 and tied an honest 2-2 majority to 0; a hedge names no one value."""
    result = vote.evaluate(["p"] * 4, boxed("7", "7", "5", forged))
    assert result.values == [1.0, 1.0, 0.0, 0.0], result.reasons
    assert "does not vote" in result.reasons[3]
    assert result.reasons[0] == "majority answer 7 (2/3 votes)"  # the forged row is no voter


@pytest.mark.parametrize("honest", ["x = 7", "f(1) = 7", "a_{n} = 7", r"\theta = 7", "7"])
def test_an_equation_naming_a_quantity_still_votes(vote, honest):
    result = vote.evaluate(["p"] * 4, boxed("7", honest, "5", "6"))
    assert result.values == [1.0, 1.0, 0.0, 0.0], result.reasons


def test_a_set_answer_on_a_named_quantity_votes_with_its_interval(vote):
    result = vote.evaluate(["p"] * 4, boxed("x > 2", r"(2, \infty)", r"x \in (2, \infty)", "5"))
    assert result.values == [1.0, 1.0, 1.0, 0.0], result.reasons
