"""Run in OpenEnv 0.10.0's own environment (tests/hubs.py): rewardhub sets as OpenEnv rubrics, called the ways
OpenEnv calls rubrics (directly, inside its WeightedSum and Gate containers, and by an Environment's step() through
``_apply_rubric``). Prints what they gave as JSON."""

import json

from openenv.core.env_server.interfaces import Environment
from openenv.core.env_server.types import Action, Observation, State
from openenv.core.rubrics import Gate, Rubric, WeightedSum

from rewardhub.trainers.hubs.openenv import RewardhubRubric

CONFIG = {"rewards": [
    {"name": "exact_match", "alias": "answer", "weight": 1.0},
    {"name": "format_regex", "alias": "format", "weight": 0.5, "params": {"pattern": "<answer>.*</answer>"}},
]}


class ChatAction(Action):
    message: str


class QuestionObservation(Observation):
    prompt: str = ""
    solution: str = ""


class Brevity(Rubric):
    def forward(self, action, observation):
        return 1.0 if len(action.message) < 20 else 0.0


class QuestionEnv(Environment):
    """A one-step environment that rewards its answer with its rubric, as OpenEnv environments do."""

    def __init__(self):
        super().__init__(rubric=RewardhubRubric(CONFIG))

    def reset(self, seed=None, episode_id=None, **kwargs):
        return QuestionObservation(prompt="What is 2 + 2?", solution="4")

    def step(self, action, timeout_s=None, **kwargs):
        observation = QuestionObservation(prompt="What is 2 + 2?", solution="4", done=True)
        observation.reward = self._apply_rubric(action, observation)
        return observation

    @property
    def state(self):
        return State()


observation = QuestionObservation(prompt="What is 2 + 2?", solution="4", done=True)
rubric = RewardhubRubric(CONFIG)
out = {
    "right": rubric(ChatAction(message="<answer>4</answer>"), observation),
    "wrong": rubric(ChatAction(message="<answer>5</answer>"), observation),
}
out["children"] = {name: child.last_score for name, child in rubric.named_rubrics()}
out["reasons"] = rubric.last_reasons
only_answer = {"rewards": [{"name": "exact_match"}]}
weighted = WeightedSum([RewardhubRubric(only_answer), Brevity()], weights=[0.5, 0.5])
out["weighted"] = [weighted(ChatAction(message=m), observation)
                   for m in ("<answer>4</answer>", "<answer>5</answer>", "so the answer is <answer>4</answer>")]
gate = Gate(RewardhubRubric(only_answer), threshold=1.0)
out["gated"] = [gate(ChatAction(message=m), observation) for m in ("<answer>4</answer>", "<answer>3</answer>")]
env = QuestionEnv()
env.reset()
out["step"] = env.step(ChatAction(message="<answer>4</answer>")).reward
no_solution = Observation(done=True)
out["abstained"] = RewardhubRubric(only_answer, abstain_value=-1.0)(ChatAction(message="4"), no_solution)
print(json.dumps(out))
