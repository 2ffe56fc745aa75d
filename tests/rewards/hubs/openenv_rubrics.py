"""OpenEnv rubrics the openenv_rubric reward is tested with (imported by path inside OpenEnv's environment)."""

from openenv.core.env_server.types import Action, Observation
from openenv.core.rubrics import Rubric, WeightedSum


class ChatAction(Action):
    message: str


class GradedObservation(Observation):
    solution: str = ""


class Correct(Rubric):
    """1.0 when the row's solution (observation metadata) is in the answer."""

    def forward(self, action, observation):
        return 1.0 if observation.metadata["solution"] in action.message else 0.0


class Short(Rubric):
    def forward(self, action, observation):
        return 1.0 if len(action.message) <= 12 else 0.0


class TypedCorrect(Rubric):
    """The same, on an environment's own action and observation types."""

    def forward(self, action: ChatAction, observation: GradedObservation):
        return 1.0 if observation.solution in action.message else 0.0


class AsyncCorrect(Rubric):
    async def forward(self, action, observation):
        return 1.0 if observation.metadata["solution"] in action.message else 0.0


def combined():
    return WeightedSum([Correct(), Short()], weights=[0.7, 0.3])
