"""``rewardhub serve`` as a NeMo-Gym resource server: ``POST /verify`` and ``POST /seed_session``.

NeMo-Gym's agents send ``/verify`` a ``responses_create_params`` (the Responses-API request) and the
``response`` (the rollout: messages, function calls and their outputs) plus the row's own fields
(``expected_answer``, ``solution``, ...). rewardhub reads the request's ``input`` as the prompt, the
response's ``output`` as the completion's chat messages (so tool calls reach the episode view), the
other fields as columns and ``responses_create_params.tools`` as the ``tools`` column when the row has
none, scores the row with the served set and answers the request plus ``reward`` (the weighted total; the
server's ``--abstain-value`` where every reward abstained), ``reward_components`` (each reward's value, the
same stand-in where it abstained), ``reward_reasons`` and ``reward_outcomes``. ``/seed_session`` answers
``{}`` as NeMo-Gym's base server does: rewardhub keeps no per-rollout state.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from rewardhub import Batch, SetResult
from rewardhub.completions import prompt_key
from rewardhub.episode import LIVE_COLUMNS
from rewardhub.rewards.hubs.nemo_gym_schema import VerifyRequest, input_messages, output_messages

from ..errors import BadRequest

__all__ = ["RESERVED_FIELDS", "nemo_gym_routes", "verify_row"]

# A verify request's own fields may not take these names: they are what rewardhub builds from it.
RESERVED_FIELDS = ("prompt", "completion", "messages", *LIVE_COLUMNS)

ReadBody = Callable[[Any], Awaitable[dict[str, Any]]]
# (request, batch, group keys, request body) -> the set's result; the server reads the trainer step from the body.
ScoreBatch = Callable[[Any, Batch, list[str], dict[str, Any]], Awaitable[SetResult]]


def verify_row(request: VerifyRequest) -> dict[str, Any]:
    """The rewardhub row a verify request stands for: prompt and completion messages, its fields as columns."""
    taken = [name for name in RESERVED_FIELDS if name in request.fields]
    if taken:
        raise BadRequest(f"field {taken[0]!r} of the verify request is a name rewardhub builds from "
                         f"responses_create_params and response; rename it", 422)
    row = {"prompt": input_messages(request.responses_create_params),
           "completion": output_messages(request.response), **request.fields}
    if "tools" not in row and request.tools() is not None:
        row["tools"] = request.tools()
    return row


def nemo_gym_routes(read_body: ReadBody, score: ScoreBatch, respond: Callable[[Any], Any],
                    guard: Callable[[Any], Any], abstain_value: float) -> list[Any]:
    """The two routes, built from the server's own body reader, scorer, JSON answer and error guard."""
    from starlette.routing import Route

    async def verify(request: Any) -> Any:
        body = await read_body(request)
        parsed = VerifyRequest.from_body(body)
        row = verify_row(parsed)
        batch = Batch.from_rows([row])
        scored = await score(request, batch, [prompt_key(row["prompt"])], body)
        total = scored.totals[0]
        components = {alias: result.scores[0] for alias, result in scored.components.items()}
        return respond({
            **body,
            "reward": abstain_value if total is None else total,
            "reward_components": {alias: abstain_value if s.value is None else s.value for alias, s in components.items()},
            "reward_reasons": {alias: s.reason for alias, s in components.items()},
            "reward_outcomes": {alias: s.outcome for alias, s in components.items()},
        })

    async def seed_session(request: Any) -> Any:
        await read_body(request)
        return respond({})

    return [Route("/verify", guard(verify), methods=["POST"]),
            Route("/seed_session", guard(seed_session), methods=["POST"])]

