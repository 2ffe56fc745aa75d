"""``nemo_gym``: a row scored by an existing NeMo-Gym resource server's ``POST /verify``.

The row becomes NeMo-Gym's verify request (see :mod:`.nemo_gym_schema`): the prompt as
``responses_create_params.input`` (the ``tools`` column as its tools), the completion (text, or the chat
messages of a tool-using rollout) as the Responses-API ``response``, and the row's columns as the request's
own fields (``expected_answer``, ...); the server's numeric ``reward`` is the value. With
``seed_session: true`` each sample first calls ``/seed_session`` in its own cookie session, as NeMo-Gym's
agents do. A server that cannot be reached, fails (5xx) or answers no number abstains (outcome ``error``,
``timeout`` past ``request_timeout``), never pays; a 4xx names what the server refused.
"""

from __future__ import annotations

import asyncio
import math
import os
import weakref
from typing import Any

from rewardhub import AsyncReward, ConfigError, Row, Score, hookimpl

from ..deps import require
from .nemo_gym_schema import create_params, response_body

__all__ = ["NeMoGymVerify"]

_RETRYABLE_STATUS = {408, 409, 429, 500, 502, 503, 504}
_NOT_FIELDS = ("prompt", "completion", "completion_ids")  # what the request carries in its own shape


class NeMoGymVerify(AsyncReward):
    """The ``reward`` a NeMo-Gym resource server's ``/verify`` gives the row (verdict: it paid 1.0 or more)."""

    name = "nemo_gym"
    description = "the reward of a NeMo-Gym resource server's POST /verify for the row (Responses-API request)"

    def __init__(
        self,
        *,
        url: str,
        columns: list[str] | None = None,
        tools_column: str = "tools",
        seed_session: bool = False,
        model: str = "policy",
        request_timeout: float = 60.0,
        max_retries: int = 2,
        concurrency: int = 32,
        token_env: str | None = None,
        on_error: str = "none",
    ):
        super().__init__(on_error=on_error)
        require("nemo_gym", "server", "httpx")
        if not isinstance(url, str) or not url.startswith(("http://", "https://")):
            raise ConfigError(f"nemo_gym: url must be the resource server's http(s) address; got {url!r}")
        for name, value, low in (("request_timeout", request_timeout, 0), ("concurrency", concurrency, 1)):
            if not isinstance(value, int | float) or isinstance(value, bool) or not value >= low or (low == 0 and value == 0):
                raise ConfigError(f"nemo_gym: {name} must be a number {'> 0' if low == 0 else '>= 1'}; got {value!r}")
        if not isinstance(max_retries, int) or max_retries < 0:
            raise ConfigError(f"nemo_gym: max_retries must be an integer >= 0; got {max_retries!r}")
        if token_env is not None and not os.environ.get(token_env):
            raise ConfigError(f"nemo_gym: token_env names ${token_env}, which is not set")
        self.url = url.rstrip("/")
        self.columns = None if columns is None else list(columns)
        self.tools_column = tools_column
        self.seed_session = seed_session
        self.model = model
        self.request_timeout = float(request_timeout)
        self.max_retries = max_retries
        self.concurrency = int(concurrency)
        self.token_env = token_env
        self._clients: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()  # event loop -> (client, semaphore)

    def required_columns(self) -> tuple[str, ...]:
        return tuple(self.columns or ())

    def request(self, row: Row) -> dict[str, Any]:
        """The verify request for ``row``: NeMo-Gym's ``BaseVerifyRequest`` plus the row's fields."""
        tools = row.get(self.tools_column)
        names = self.columns if self.columns is not None else [c for c in row if c not in _NOT_FIELDS]
        fields = {name: row[name] for name in names if name != self.tools_column}
        return {"responses_create_params": create_params(row.prompt, tools),
                "response": response_body(row.completion, model=self.model, tools=tools), **fields}

    async def score_sample_async(self, text: str, row: Row) -> Score:
        body = self.request(row)
        client, semaphore = self._client()
        async with semaphore:
            if self.seed_session:
                import httpx

                async with httpx.AsyncClient(timeout=self.request_timeout, headers=self._headers()) as session:
                    seeded = await self._post(session, "/seed_session", {k: v for k, v in body.items()
                                                                        if k not in ("response",)})
                    if isinstance(seeded, Score):
                        return seeded
                    return self._read(await self._post(session, "/verify", body))
            return self._read(await self._post(client, "/verify", body))

    async def _post(self, client: Any, path: str, body: dict[str, Any]) -> Any:
        """The server's JSON answer, or the abstention saying why there is none."""
        import httpx

        for attempt in range(self.max_retries + 1):
            last = attempt == self.max_retries
            try:
                answer = await client.post(self.url + path, json=body)
            except httpx.TimeoutException:
                if last:
                    return Score(None, f"{path} took longer than {self.request_timeout:g} s", outcome="timeout")
            except httpx.HTTPError as exc:
                if last:
                    return Score(None, f"cannot reach {self.url}{path}: {type(exc).__name__}: {exc}", outcome="error")
            else:
                if answer.status_code < 400:
                    try:
                        return answer.json()
                    except ValueError:
                        return Score(None, f"{path} answered {answer.status_code} with no JSON: "
                                     f"{answer.text[:200]!r}", outcome="error")
                if answer.status_code not in _RETRYABLE_STATUS or last:
                    return Score(None, f"{path} answered {answer.status_code}: {answer.text[:300]}", outcome="error")
            await asyncio.sleep(min(0.5 * 2 ** attempt, 8.0))
        raise AssertionError("unreachable: the last attempt returns")

    def _read(self, answer: Any) -> Score:
        if isinstance(answer, Score):
            return answer
        reward = answer.get("reward") if isinstance(answer, dict) else None
        if isinstance(reward, bool) or not isinstance(reward, int | float) or not math.isfinite(reward):
            return Score(None, f"/verify answered no numeric 'reward' (got {reward!r})", outcome="error")
        components = answer.get("reward_components")
        detail = f" ({', '.join(f'{k}={v:g}' for k, v in components.items() if isinstance(v, int | float))})" \
            if isinstance(components, dict) and components else ""
        return Score(float(reward), f"/verify: reward {reward:g}{detail}", reward >= 1.0)

    def _client(self) -> tuple[Any, asyncio.Semaphore]:
        import httpx

        loop = asyncio.get_running_loop()
        if loop not in self._clients:
            client = httpx.AsyncClient(timeout=self.request_timeout, headers=self._headers(),
                                       limits=httpx.Limits(max_connections=self.concurrency))
            self._clients[loop] = (client, asyncio.Semaphore(self.concurrency))
        return self._clients[loop]

    def _headers(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {os.environ[self.token_env]}"} if self.token_env else {}

    def __getstate__(self) -> dict[str, Any]:
        return {**self.__dict__, "_clients": None}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state, _clients=weakref.WeakKeyDictionary())


@hookimpl
def register_rewards(register):
    register(NeMoGymVerify)
