"""Run in OpenEnv 0.10.0's own environment (tests/hubs.py): OpenEnv rubrics as rewardhub rewards, and the same
rubrics called directly on the same (action, observation), as an environment calls them. Prints JSON."""

import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from openenv.core.env_server.types import Observation  # noqa: E402
from openenv_rubrics import ChatAction, GradedObservation, TypedCorrect, combined  # noqa: E402

import rewardhub  # noqa: E402

texts = ["42", "the answer is 42 for sure", "41"]
solutions = ["42", "42", "42"]
out = {}
result = rewardhub.get("openenv_rubric", rubric="openenv_rubrics:combined").evaluate(["q"] * 3, texts,
                                                                                    solution=solutions)
out["combined"], out["reasons"] = result.values, result.reasons
out["combined_direct"] = [combined()(ChatAction(message=t), Observation(done=True, metadata={"solution": s}))
                          for t, s in zip(texts, solutions, strict=True)]
out["async"] = rewardhub.get("openenv_rubric", rubric="openenv_rubrics:AsyncCorrect").evaluate(
    ["q"] * 3, texts, solution=solutions).values
typed = rewardhub.get("openenv_rubric", rubric="openenv_rubrics:TypedCorrect", action_class="openenv_rubrics:ChatAction",
                      observation_class="openenv_rubrics:GradedObservation", columns=["solution"])
out["typed"] = typed.evaluate(["q"] * 3, texts, solution=solutions).values
out["typed_direct"] = [TypedCorrect()(ChatAction(message=t), GradedObservation(solution=s)) for t, s in zip(texts, solutions, strict=True)]
out["in_a_set"] = [row["reward"] for row in rewardhub.load({"rewards": [
    {"name": "openenv_rubric", "alias": "env", "params": {"rubric": "openenv_rubrics:Correct"}},
    {"name": "exact_match", "weight": 0.5}]}).score(
    [{"prompt": "q", "completion": t, "solution": s} for t, s in zip(texts, solutions, strict=True)])]
missing = rewardhub.get("openenv_rubric", rubric="openenv_rubrics:Correct").evaluate(["q"], ["42"])
out["missing_column"] = [missing.values, missing.outcomes, missing.reasons]
errors = []
for params in ({"rubric": "openenv_rubrics:Nope"}, {"rubric": "no_such_module:X"}, {"rubric": "openenv_rubrics"},
               {"rubric": "openenv_rubrics:ChatAction"}):
    try:
        rewardhub.get("openenv_rubric", **params)
    except rewardhub.ConfigError as exc:
        errors.append(str(exc))
out["errors"] = errors
print(json.dumps(out))
