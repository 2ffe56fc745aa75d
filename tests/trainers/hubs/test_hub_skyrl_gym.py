"""A rewardhub set as a skyrl-gym 0.4.0 environment's reward, made and stepped as SkyRL's generator does
(``skyrl_gym.make(env_class, env_config=<the env's DictConfig>, extras=<the row's env extras>)``, ``init``,
``step`` until done), beside skyrl-gym's own GSM8K environment on the same rows."""

from __future__ import annotations

import hubs
import pytest
from serving import ensure_registered

CONFIG = {"rewards": [
    {"name": "exact_match", "alias": "answer"},
    {"name": "format_regex", "alias": "format", "weight": 0.5, "params": {"pattern": "#### \\d+", "mode": "search"}},
]}


@pytest.fixture(scope="module")
def gym():
    hubs.skyrl_gym()
    import skyrl_gym
    from omegaconf import OmegaConf

    from rewardhub.trainers.hubs.skyrl_gym import register_env

    register_env()
    register_env()  # a second call is free
    return skyrl_gym, OmegaConf


def episode(gym, env_class, env_config, extras, prompt, actions):
    skyrl_gym, _ = gym
    env = skyrl_gym.make(env_class, env_config=env_config, extras=extras)
    env.init(prompt)
    outputs = [env.step(action) for action in actions]
    env.close()
    return outputs


def test_one_turn_episodes_get_the_sets_total_and_the_components_in_metadata(gym):
    ensure_registered()
    _, OmegaConf = gym
    env_config = OmegaConf.create({"rewardhub_config": CONFIG})
    prompt = [{"role": "user", "content": "Natalia sold 48 clips in April and half as many in May. How many?"}]
    extras = {"reward_spec": {"method": "rule", "ground_truth": "72"}, "extra_info": {"split": "train", "index": 0}}
    for answer, total in (("48 + 24 = 72\n#### 72", 1.5), ("#### 70", 0.5), ("seventy", 0.0)):
        (out,) = episode(gym, "rewardhub", env_config, extras, prompt, [answer])
        (own,) = episode(gym, "gsm8k", {}, extras, prompt, [answer])  # skyrl-gym's own GSM8K scorer agrees on correctness
        assert out["done"] and out["reward"] == total and out["observations"] == []
        assert out["metadata"]["rewards"]["answer"] == own["reward"]
        assert set(out["metadata"]["reasons"]) == {"answer", "format"}


def test_a_multi_turn_episode_is_scored_once_at_its_end(gym):
    _, OmegaConf = gym
    env_config = OmegaConf.create({"rewardhub_config": CONFIG, "max_turns": 2})
    extras = {"reward_spec": {"ground_truth": "72"}}
    first, last = episode(gym, "rewardhub", env_config, extras, [{"role": "user", "content": "q"}],
                          ["let me think", "#### 72"])
    assert (first["reward"], first["done"]) == (0.0, False)
    assert (last["reward"], last["done"]) == (1.5, True)


def test_abstentions_give_abstain_value(gym):
    _, OmegaConf = gym
    env_config = OmegaConf.create({"rewardhub_config": {"rewards": [{"name": "exact_match"}]}, "abstain_value": -1.0})
    (out,) = episode(gym, "rewardhub", env_config, {}, [{"role": "user", "content": "q"}], ["#### 72"])
    assert out["reward"] == -1.0 and out["metadata"]["rewards"]["exact_match"] is None
