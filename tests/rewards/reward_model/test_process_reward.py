"""``process_reward`` on tiny local process reward models, loaded by ``from_pretrained`` from a folder.

A tiny token classifier is trained here for a few dozen steps to tell steps that say "right" from
steps that say "wrong" (labels at each step tag, as PRMs are trained), so the tests can check that
the reward reads the model at the right places: the weak step of a chain, and each step's score
equal to a forward pass computed independently (positions from ``char_to_token``).
"""

from __future__ import annotations

import pickle

import pytest

import rewardhub
from rewardhub.rewards.reward_model.process import aggregate, split_steps
from rewardhub.testing import check_contract
from rewardhub.testing.tiny_models import load_tokenizer, make_causal_lm, make_token_classifier

TAG = "\n"
GOOD, BAD = "This step is right.", "This step is wrong."


def tagged(prompt: str, steps: list[str]) -> tuple[str, list[int]]:
    """The PRM's input text and the character index of each step tag."""
    text, tags = prompt + "\n", []
    for step in steps:
        text += step
        tags.append(len(text))
        text += TAG
    return text, tags


@pytest.fixture(scope="module")
def prm(tmp_path_factory):
    """A tiny Qwen2ForTokenClassification trained to score 'right' steps high and 'wrong' steps low."""
    import torch
    from transformers import AutoModelForTokenClassification

    torch.manual_seed(0)
    folder = make_token_classifier(tmp_path_factory.mktemp("prm") / "model", seed=1)
    tokenizer = load_tokenizer(folder)
    model = AutoModelForTokenClassification.from_pretrained(folder)
    chains = [[GOOD, GOOD, BAD], [BAD, GOOD], [GOOD, GOOD], [GOOD, BAD, GOOD], [BAD], [GOOD]]
    batch = []
    for steps in chains:
        text, tags = tagged("Solve it.", steps)
        encoding = tokenizer(text)
        labels = [-100] * len(encoding["input_ids"])
        for tag, step in zip(tags, steps, strict=True):
            labels[encoding.char_to_token(tag)] = int(step == GOOD)
        batch.append((encoding["input_ids"], labels))
    optimizer = torch.optim.Adam(model.parameters(), lr=3e-3)
    model.train()
    for _ in range(80):
        for ids, labels in batch:
            loss = model(input_ids=torch.tensor([ids]), labels=torch.tensor([labels])).loss
            loss.backward()
            optimizer.step()
            optimizer.zero_grad()
    model.save_pretrained(folder)
    return folder


def reward(folder, **params):
    return rewardhub.get("process_reward", model=str(folder), step_tag=TAG, device="cpu", **params)


def test_step_scores_are_the_models_probabilities_at_each_tag(prm):
    import torch
    from transformers import AutoModelForTokenClassification

    steps = [GOOD, BAD, GOOD]
    result = reward(prm, aggregate="mean").evaluate(["Solve it."], ["\n\n".join(steps)])
    text, tags = tagged("Solve it.", steps)
    tokenizer = load_tokenizer(prm)
    encoding = tokenizer(text)
    model = AutoModelForTokenClassification.from_pretrained(prm).eval()
    with torch.no_grad():
        logits = model(input_ids=torch.tensor([encoding["input_ids"]])).logits[0]
    expected = [logits[encoding.char_to_token(tag)].softmax(-1)[1].item() for tag in tags]
    assert result.values[0] == pytest.approx(sum(expected) / 3, abs=1e-5)
    shown = ", ".join(f"{p:.3f}" for p in expected)
    assert result.reasons[0] == f"3 step(s): {shown} -> mean {sum(expected) / 3:.3f}"
    assert expected[0] > 0.8 and expected[1] < 0.2 and expected[2] > 0.8  # the trained model tells them apart


def test_min_finds_the_weak_step_and_the_aggregates_differ(prm):
    chains = ["\n\n".join([GOOD, GOOD, GOOD]), "\n\n".join([GOOD, BAD, GOOD]), "\n\n".join([GOOD, GOOD, BAD])]
    by = {how: reward(prm, aggregate=how).evaluate(["Solve it."] * 3, chains).values for how in ("min", "mean", "last", "product")}
    assert by["min"][0] > 0.8 and by["min"][1] < 0.2 and by["min"][2] < 0.2
    assert by["last"][1] > 0.8 and by["last"][2] < 0.2  # only the last step counts
    assert by["min"][1] < by["mean"][1] < by["last"][1]
    assert all(p <= m + 1e-9 for p, m in zip(by["product"], by["min"], strict=True))


def test_batch_mates_and_order_do_not_change_a_score(prm):
    r = reward(prm, batch_size=2)
    texts = [GOOD, "\n\n".join([GOOD] * 6 + [BAD]), "\n\n".join([BAD, GOOD]), GOOD + "\n\n" + GOOD]
    together = r.evaluate(["Solve it."] * 4, texts).values
    alone = [r.evaluate(["Solve it."], [t]).values[0] for t in texts]
    assert together == pytest.approx(alone, abs=1e-5)


def test_separator_and_truncation(prm):
    r = reward(prm, separator="\n")
    (one_line,) = r.evaluate(["Solve it."], [f"{GOOD}\n{BAD}"]).scores
    assert one_line.reason.startswith("2 step(s)")
    short = reward(prm, max_length=40)
    long_prompt, steps = "Solve it. " * 30, f"{GOOD}\n\n{BAD}"
    (kept,) = short.evaluate([long_prompt], [steps]).scores
    assert kept.value is not None and "prompt's first" in kept.reason
    (cut,) = short.evaluate(["Solve it."], ["\n\n".join([GOOD] * 20)]).scores
    assert cut.value is None and "too long for the model" in cut.reason
    (empty,) = r.evaluate(["Solve it."], ["\n\n  \n"]).scores
    assert empty.value is None and "no steps" in empty.reason


def test_step_tag_head_on_a_causal_lm(tmp_path):
    import torch
    from transformers import AutoModelForCausalLM

    folder = make_causal_lm(tmp_path / "lm", seed=2)
    r = rewardhub.get("process_reward", model=str(folder), head="step_tag", step_tag=TAG, good_token="+",
                      bad_token="-", device="cpu", aggregate="last")
    (score,) = r.evaluate(["Q"], [f"{GOOD}\n\n{BAD}"]).scores
    tokenizer = load_tokenizer(folder)
    text, tags = tagged("Q", [GOOD, BAD])
    encoding = tokenizer(text)
    with torch.no_grad():
        logits = AutoModelForCausalLM.from_pretrained(folder)(input_ids=torch.tensor([encoding["input_ids"]])).logits[0]
    good, bad = tokenizer.encode("+", add_special_tokens=False)[0], tokenizer.encode("-", add_special_tokens=False)[0]
    expected = logits[encoding.char_to_token(tags[-1]), [good, bad]].softmax(-1)[0].item()
    assert score.value == pytest.approx(expected, abs=1e-5)


def test_config_errors_name_the_problem(prm, tmp_path):
    with pytest.raises(rewardhub.ConfigError, match="set head: token_classification"):
        rewardhub.get("process_reward", model=str(prm), head="step_tag")
    with pytest.raises(rewardhub.ConfigError, match="does not exist"):
        rewardhub.get("process_reward", model=str(tmp_path / "missing"))
    with pytest.raises(rewardhub.ConfigError, match="aggregate must be one of min, mean, last, product"):
        rewardhub.get("process_reward", model=str(prm), aggregate="max")
    bad_tokens = rewardhub.get("process_reward", model=str(prm), positive_label=5, device="cpu")
    (score,) = bad_tokens.evaluate(["Q"], ["step"]).scores
    assert score.value is None and "positive_label 5" in score.reason


def test_contract_pickling_and_helpers(prm):
    r = reward(prm)
    check_contract(r, columns={})
    clone = pickle.loads(pickle.dumps(r))
    assert clone.evaluate(["Q"], [GOOD]).values == r.evaluate(["Q"], [GOOD]).values
    assert split_steps("a\n\n\n\nb\n\n ", "\n\n") == ["a", "b"]
    assert aggregate([0.5, 0.2], "product") == pytest.approx(0.1)
