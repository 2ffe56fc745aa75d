"""A client for ``rewardhub serve``'s native ``/score`` endpoint, for shims that meet at the server.

verl spreads one batch over several reward-worker processes, so group rewards assemble at a reward
server every worker reaches. aiohttp, which verl depends on, sends the request without holding a
thread while the server waits for the rest of the group.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from typing import Any

from rewardhub import Batch, BatchResult, Score, SetResult

from .errors import RewardServerError
from .groups import DEFAULT_GROUP_TIMEOUT, keyed_rows

__all__ = ["CLIENT_TIMEOUT", "score_remote", "scored_from_reply"]

# The server answers a group by its deadline; this leaves time for the scoring itself.
CLIENT_TIMEOUT = DEFAULT_GROUP_TIMEOUT + 60.0


async def score_remote(url: str, batch: Batch, keys: Sequence[Hashable] | None, *, token: str | None = None,
                       timeout: float = CLIENT_TIMEOUT) -> SetResult:
    """Score ``batch`` at the server ``url``; rows with the same key are completions of one prompt
    (without keys the server groups rows by prompt, if it assembles groups at all)."""
    import aiohttp

    batch = batch.portable()  # live objects never leave the process: their state goes instead
    if keys is None:
        rows = [row for _, row in keyed_rows(batch)]
    else:
        rows = [{**row, "group": str(key)} for key, row in keyed_rows(batch, keys)]
    headers = {"Authorization": f"Bearer {token}"} if token else None
    try:
        async with aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=timeout)) as session:
            async with session.post(f"{url.rstrip('/')}/score", json={"rows": rows}, headers=headers) as reply:
                body: dict[str, Any] = await reply.json(content_type=None)
    except (aiohttp.ClientError, TimeoutError, ValueError) as exc:
        raise RewardServerError(f"rewardhub server {url}: {type(exc).__name__}: {exc}") from exc
    if reply.status != 200:
        raise RewardServerError(f"rewardhub server {url} answered {reply.status}: {body.get('error', body)}")
    return scored_from_reply(body)


def scored_from_reply(body: dict[str, Any]) -> SetResult:
    """The :class:`SetResult` a ``/score`` reply describes (values, reasons and outcomes per alias, and the
    group floors when the server assembled groups)."""
    components = {
        alias: BatchResult([Score(v, r, outcome=o) for v, r, o in
                            zip(values, body["reasons"][alias], body["outcomes"][alias], strict=True)], 0.0, 0)
        for alias, values in body["components"].items()
    }
    return SetResult(list(body["values"]), components, group_floors=body.get("group_floors"),
                     group_ranges=body.get("group_ranges"))
