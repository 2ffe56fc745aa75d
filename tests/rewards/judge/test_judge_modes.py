"""The judge's label, rubric, pairwise and groupwise modes against the real OpenAI-compatible server on
127.0.0.1 (tests/judge_server.py), whose answers are scripted per request from what the judge sent."""

from __future__ import annotations

import random
import re
import threading

import pytest
from judge_server import KEY_ENV, SECRET, Reply, judge_fixture, running_server_fixture, server_fixture  # noqa: F401

import rewardhub
from rewardhub.rewards.judge.errors import JudgeConfigError
from rewardhub.rewards.judge.modes import parse_rubric, read_label, rubric_score
from rewardhub.rewards.judge.ranking import rank_values, read_ranking, read_winner
from rewardhub.trainers.groups import GroupAssembler, group_size_for, needs_groups

RESPONSE = re.compile(r"\[Response (\d+)\]\n(.*?)\n\[End of response \1\]", re.S)


def responses(body) -> dict[int, str]:
    """The numbered responses a group request showed the judge."""
    return {int(n): text for n, text in RESPONSE.findall(body["messages"][-1]["content"])}


def quality(text: str) -> int:
    """The scripted judges' taste: a completion's quality is the number after 'q='."""
    return int(re.search(r"q=(\d+)", text).group(1))


# ----- label -----------------------------------------------------------------------------------------------
def test_label_mode_maps_labels_to_scores(server, judge):
    reward = judge(mode="label")
    answers = ["Label: correct", "The response is mostly fine.\nLabel: partially correct", '{"label": "incorrect"}',
               "Incorrect.", "Label: maybe", "It is not correct... or is it partially correct? Label: correct or not"]
    completions = [f"answer [[{a}]]" for a in answers]
    result = reward.evaluate(["Q"] * len(answers), completions)
    assert result.values == [1.0, 0.5, 0.0, 0.0, None, None]
    assert result.verdicts[:4] == [True, None, False, False]
    assert "unparsable judge answer (not exactly one of the labels)" in result.reasons[4]
    assert "- partially correct" in server.bodies[0]["messages"][-1]["content"]  # the template lists the labels


def test_custom_labels_and_reading_rules():
    labels = ["a", "b", "good", "very good"]
    assert read_label("Label: very good", labels) == "very good"
    assert read_label("It is very good.", labels) == "very good"  # the longest mention wins
    assert read_label("Not good at all, I'd say", labels) is None  # negated: no label
    assert read_label("good or very bad", labels) == "good"
    assert read_label("good... no, very good? a", labels) is None  # several labels, none in a label position
    with pytest.raises(rewardhub.ConfigError, match="two or more labels"):
        rewardhub.get("judge", mode="label", labels={"only": 1.0}, base_url="http://127.0.0.1:9")
    with pytest.raises(rewardhub.ConfigError, match="finite score"):
        rewardhub.get("judge", mode="label", labels={"x": 1.0, "y": "high"}, base_url="http://127.0.0.1:9")


# ----- rubric ----------------------------------------------------------------------------------------------
CRITERIA = [{"criterion": "Mentions Paris", "weight": 2}, {"criterion": "Is under 20 words", "weight": 1},
            {"criterion": "Contains a factual error", "weight": -1}]


def criterion_judge(body) -> str:
    """Answers each criterion request from the completion it shows."""
    content = body["messages"][-1]["content"]
    response = content.split("[Response]\n", 1)[1].split("\n\n[Criterion]", 1)[0]
    criterion = content.split("[Criterion]\n", 1)[1].split("\n", 1)[0]
    if criterion == "Mentions Paris":
        return "Yes" if "Paris" in response else "No"
    if criterion == "Is under 20 words":
        return "yes" if len(response.split()) < 20 else "no"
    if criterion == "Contains a factual error":
        return "Yes." if "Lyon is the capital" in response else "No."
    return "I cannot tell."


def test_rubric_mode_weights_criteria_and_names_the_failed_ones(server, judge):
    server.answer = criterion_judge
    reward = judge(mode="rubric", rubric=CRITERIA)
    completions = ["Paris.", "Paris is the capital, although many say Lyon is the capital.",
                   "The capital of France is a city on the Seine " + "word " * 20, "Lyon is the capital."]
    result = reward.evaluate(["Capital of France?"] * 4, completions)
    assert result.values == [1.0, pytest.approx(2 / 3), 0.0, 0.0]
    assert result.reasons[0] == "rubric 1.00: 2/3 criteria met"
    assert "failed: 'Contains a factual error' (weight -1)" in result.reasons[1]
    assert "'Mentions Paris' (weight 2), 'Is under 20 words' (weight 1)" in result.reasons[2]
    assert server.requests == 12  # one request per criterion per completion
    assert result.verdicts == [True, False, False, False]


def test_rubric_per_row_from_a_column_with_bad_rows_abstaining(server, judge):
    server.answer = criterion_judge
    reward = judge(mode="rubric")
    rubrics = [["Mentions Paris"], {"Mentions Paris": 1, "Is under 20 words": 3}, [], '[{"criterion": "x", "weight": "w"}]']
    result = reward.evaluate(["Q"] * 4, ["Paris " + "x " * 30, "Paris " + "x " * 30, "Paris", "Paris"], rubric=rubrics)
    assert result.values[:2] == [1.0, 0.25]
    assert result.values[2:] == [None, None]
    assert "non-empty list of criteria" in result.reasons[2] and "a finite number is needed" in result.reasons[3]
    (missing,) = reward.evaluate(["Q"], ["Paris"]).scores
    assert missing.value is None and "rubric" in missing.reason


def test_rubric_abstains_when_a_criterion_is_unanswered(server, judge):
    server.answer = lambda body: "I cannot tell." if "under 20" in body["messages"][-1]["content"] else "Yes"
    result = judge(mode="rubric", rubric=CRITERIA).evaluate(["Q"], ["Paris"])
    assert result.values == [None] and "criterion 'Is under 20 words'" in result.reasons[0]
    server.answer = lambda body: "Yes"
    server.script.append(Reply(status=400, error="bad request"))
    result = judge(mode="rubric", rubric=CRITERIA, max_retries=0).evaluate(["Q"], ["Paris?"])
    assert result.values == [None] and result.outcomes == ["error"]


def test_rubric_arithmetic_and_formats():
    criteria = parse_rubric([{"description": "a", "points": 3}, "b", {"title": "c", "weight": -2}], "test")
    assert [c.weight for c in criteria] == [3.0, 1.0, -2.0]
    assert rubric_score(criteria, [True, True, False]) == 1.0
    assert rubric_score(criteria, [True, False, True]) == pytest.approx(0.25)
    assert rubric_score(criteria, [False, False, True]) == 0.0  # clipped at 0
    with pytest.raises(rewardhub.RewardhubError, match="positive weight"):
        parse_rubric([{"criterion": "bad", "weight": -1}], "test")
    with pytest.raises(JudgeConfigError, match="judge rubric param"):
        rewardhub.get("judge", mode="rubric", rubric=[], base_url="http://127.0.0.1:9")


# ----- pairwise / groupwise --------------------------------------------------------------------------------
def pairwise_judge(body) -> str:
    shown = responses(body)
    q1, q2 = quality(shown[1]), quality(shown[2])
    return "Winner: tie" if q1 == q2 else f"Response {1 if q1 > q2 else 2} is better.\nWinner: {1 if q1 > q2 else 2}"


def groupwise_judge(body) -> str:
    shown = responses(body)
    ordered = sorted(shown, key=lambda n: -quality(shown[n]))
    out = str(ordered[0])
    for previous, n in zip(ordered, ordered[1:], strict=False):
        out += (" = " if quality(shown[previous]) == quality(shown[n]) else " > ") + str(n)
    return f"Thinking about it...\nRanking: {out}"


def group_call(reward, groups: dict[str, list[str]]):
    prompts = [p for p, texts in groups.items() for _ in texts]
    completions = [t for texts in groups.values() for t in texts]
    return reward.evaluate(prompts, completions)


def test_pairwise_mode_scores_the_share_of_comparisons_won(server, judge):
    server.answer = pairwise_judge
    reward = judge(mode="pairwise")
    result = group_call(reward, {"P1": ["q=3 best", "q=1 worst", "q=2 middle"], "P2": ["q=5", "q=5"], "P3": ["q=1"]})
    assert result.values[:3] == [1.0, 0.0, 0.5]
    assert result.values[3:5] == [0.5, 0.5]
    assert result.values[5] is None and "lone completion" in result.reasons[5]
    assert "won 4 of 4 comparisons" in result.reasons[0]  # 2 pairs, each asked in both orders
    assert server.requests == 2 * 3 + 1  # every pair in both orders; P2's two orders are the same request


def test_pairwise_swap_cancels_position_bias(server, judge):
    server.answer = lambda body: "Winner: 1"  # always prefers whatever comes first
    result = group_call(judge(mode="pairwise"), {"P": ["q=3", "q=1"]})
    assert result.values == [0.5, 0.5]
    result = group_call(judge(mode="pairwise", swap=False), {"P": ["q=3", "q=1"]})
    assert sorted(result.values) == [0.0, 1.0]


def test_groupwise_mode_ranks_in_one_call_and_hides_batch_order(server, judge):
    server.answer = groupwise_judge
    reward = judge(mode="groupwise")
    texts = ["q=1", "q=4", "q=3", "q=3"]
    result = group_call(reward, {"P": texts})
    assert result.values == [0.0, 1.0, pytest.approx(0.5), pytest.approx(0.5)]
    assert server.requests == 1
    shown = list(responses(server.bodies[0]).values())
    reversed_batch = group_call(reward, {"P": texts[::-1]})
    assert reversed_batch.values == result.values[::-1]
    assert list(responses(server.bodies[-1]).values()) == shown  # the judge sees the same order either way


def test_group_modes_abstain_on_unreadable_answers_and_incomplete_groups(server, judge):
    server.answer = lambda body: "Ranking: 1 > 2"  # a response left out of a ranking of 3
    result = group_call(judge(mode="groupwise"), {"P": ["q=1", "q=2", "q=3"]})
    assert result.values == [None] * 3 and "no ranking of all 3 responses" in result.reasons[0]
    server.answer = groupwise_judge
    result = group_call(judge(mode="groupwise", group_size=4), {"P": ["q=1", "q=2", "q=3"]})
    assert result.values == [None] * 3 and "incomplete group" in result.reasons[0]
    server.answer = lambda body: "They are both fine."
    result = group_call(judge(mode="pairwise"), {"P": ["q=1", "q=2"]})
    assert result.values == [None, None] and "no winner" in result.reasons[0]


def test_answer_readers():
    assert read_winner("Winner: 2") == 2 and read_winner("**Winner:** tie") == 0 and read_winner('{"winner": 1}') == 1
    assert read_winner("Response 1") == 1 and read_winner("I like both") is None
    assert read_ranking("Ranking: [2] > [3] > [1]", 3) == [[2], [3], [1]]
    assert read_ranking('{"ranking": [3, 1, 2]}', 3) == [[3], [1], [2]]
    assert read_ranking("Ranking: 1, 2, 2", 3) is None
    assert [v for v, _, _ in rank_values([[2], [1, 3], [4]])] == [1.0, 0.5, 0.5, 0.0]


def test_group_modes_are_group_rewards_assembled_for_one_sample_callers(server, monkeypatch):
    monkeypatch.setenv(KEY_ENV, SECRET)
    server.answer = groupwise_judge
    params = {"mode": "groupwise", "group_size": 3, "base_url": server.base_url, "model": "judge-test",
              "api_key_env": KEY_ENV}
    rewards = rewardhub.load([{"name": "judge", "alias": "rank", "params": params}])
    assert needs_groups(rewards.members[0].reward) and group_size_for(rewards) == 3
    assembler = GroupAssembler(rewards, group_size=3, timeout=60)
    rows = [{"prompt": f"P{p}", "completion": f"q={q} for {p}"} for p in range(3) for q in (1, 2, 3)]
    order = list(range(len(rows)))
    random.Random(3).shuffle(order)
    results = {}

    def call(index):
        results[index] = assembler.score([(rows[index]["prompt"], rows[index])]).totals[0]

    threads = [threading.Thread(target=call, args=(i,)) for i in order]
    try:
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(timeout=60)
    finally:
        assembler.close()
    assert [results[i] for i in range(len(rows))] == [0.0, 0.5, 1.0] * 3
    with pytest.raises(rewardhub.ConfigError, match="send one completion per call"):
        group_size_for(rewardhub.load([{"name": "judge", "params": {**params, "group_size": None}}]))


def test_mode_params_are_checked(server, judge):
    with pytest.raises(rewardhub.ConfigError, match="judge mode must be one of pointwise, label, rubric"):
        judge(mode="ranking")
    with pytest.raises(rewardhub.ConfigError, match="judge mode 'label' takes no param"):
        judge(mode="label", swap=True)
    with pytest.raises(rewardhub.ConfigError, match="never shows the judge the completions"):
        judge(mode="groupwise", template="Rank: {completion}")
    params = rewardhub.registry.spec("judge").params
    assert {"mode", "labels", "rubric", "rubric_column", "swap", "group_size", "model"} <= set(params)
