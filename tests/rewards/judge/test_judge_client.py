"""The judge's HTTP client: one per endpoint per process on rewardhub's background loop, built before
the first batch, its connections reused across batches, callers, rewards and event loops."""

from __future__ import annotations

import asyncio
import multiprocessing
import os

from judge_server import KEY_ENV, judge_fixture, rows, running_server_fixture, server_fixture  # noqa: F401

import rewardhub
from rewardhub.rewards.judge import pool


def numbered(tag: str, n: int) -> tuple[list[str], list[str], list[float]]:
    return ["q"] * n, [f"{tag} {i} [[{i % 11}]]" for i in range(n)], [(i % 11) / 10 for i in range(n)]


def test_the_client_is_built_before_the_first_batch(server, judge):
    reward = judge()
    built = pool.client(reward.client._endpoint_id)
    assert built.result(timeout=30) is not None  # made in a thread, with no batch asking for it
    assert server.requests == 0


def test_one_connection_pool_per_endpoint_across_batches_callers_and_rewards(server, judge):
    first, second = judge(concurrency=4), judge(concurrency=4, template="binary", reference_column="q")
    assert pool.client(first.client._endpoint_id) is pool.client(second.client._endpoint_id)
    for tag in "abc":  # batches from synchronous code
        prompts, completions, expected = numbered(tag, 12)
        assert first.evaluate(prompts, completions).values == expected
    for tag in "de":  # from a fresh event loop each time, as scripts using asyncio.run do
        prompts, completions, expected = numbered(tag, 12)
        assert asyncio.run(first.aevaluate(prompts, completions)).values == expected
    assert second.evaluate(["q"], ["[[yes]]"], q=["1"]).values == [1.0]
    assert server.requests == 61 and server.max_in_flight <= 8
    assert len(server.connections) <= 8  # the same few connections served every batch


def test_concurrency_holds_across_callers_on_other_loops(server, judge):
    server.latency, server.gather = 0.1, 3
    reward = judge(concurrency=3, deadline=None)

    async def two_callers() -> list[list[float | None]]:
        calls = [reward.aevaluate(*numbered(tag, 9)[:2]) for tag in "xy"]
        return [result.values for result in await asyncio.gather(*calls)]

    assert asyncio.run(two_callers()) == [numbered("x", 9)[2]] * 2
    assert server.max_in_flight == 3  # one semaphore per reward, on the one loop that sends


def _score_in_child(base_url: str, queue) -> None:
    reward = rewardhub.get("judge", base_url=base_url, api_key_env=KEY_ENV, model="judge-test")
    queue.put(reward.evaluate(*rows("4", "9")).values)


def test_a_forked_child_builds_its_own_client(server, judge):
    reward = judge()
    assert reward.evaluate(*rows("2")).values == [0.2]  # the parent's client and loop are running
    context = multiprocessing.get_context("fork")
    queue = context.Queue()

    def child() -> None:
        queue.put((reward.evaluate(*rows("3", "7")).values, os.getpid()))

    process = context.Process(target=child)
    process.start()
    values, pid = queue.get(timeout=60)
    process.join(30)
    assert values == [0.3, 0.7] and pid != os.getpid() and process.exitcode == 0
    assert reward.evaluate(*rows("5")).values == [0.5]  # the parent is unaffected


def test_close_releases_the_client_and_the_reward_stays_usable(server, judge):
    reward = judge()
    endpoint = reward.client._endpoint_id
    assert reward.evaluate(*rows("1")).values == [0.1]
    reward.close()
    assert pool.client(endpoint) is None  # its last user closed it
    assert reward.evaluate(*rows("8")).values == [0.8]  # and the next batch opens it again


def test_a_client_that_cannot_start_abstains_under_every_error_policy(server, judge, monkeypatch):
    reward = judge(base_url=None)  # OpenAI itself: a key is required (never contacted here)
    reward.close()
    monkeypatch.delenv(KEY_ENV)  # the variable is gone when the client is made again
    for on_error in ("none", "zero", "raise"):
        reward.on_error = on_error
        result = reward.evaluate(*rows("1"))
        assert result.values == [None]
        assert result.reasons[0].startswith(f"judge unavailable: the judge needs an API key in environment variable '{KEY_ENV}'")


def test_a_batch_cancelled_while_the_client_is_built_leaves_it_to_later_batches(server, judge, monkeypatch):
    """Cancelling the first batch while the endpoint's shared client is still being built (its deadline,
    an entry timeout, a caller's wait_for) stops that batch only: the build is never cancelled."""
    caught_building = 0
    for attempt in range(5):  # each a fresh endpoint (its own key), so each starts a build of its own
        monkeypatch.setenv(KEY_ENV, f"sk-fresh-endpoint-{attempt}-{os.getpid()}")
        reward = judge()

        async def cancel_first_batch(reward=reward) -> bool:
            waiting = asyncio.ensure_future(reward.client._started())
            await asyncio.sleep(0)  # it now awaits the build
            building = not pool.client(reward.client._endpoint_id).done()
            waiting.cancel()
            await asyncio.gather(waiting, return_exceptions=True)
            return building

        caught_building += asyncio.run(cancel_first_batch())
        assert not pool.client(reward.client._endpoint_id).cancelled()
        assert reward.evaluate(*rows("3", "6")).values == [0.3, 0.6]
        assert asyncio.run(reward.aevaluate(*rows("9"))).values == [0.9]
    assert caught_building  # the cancellation did land while a client was being built


def test_a_client_that_failed_to_build_is_built_again_by_a_later_batch(server, judge, monkeypatch):
    """A build that fails (here: a CA bundle that does not exist) makes that batch abstain; once the cause
    is gone, the next batch builds the client and scores."""
    monkeypatch.setenv(KEY_ENV, f"sk-fresh-endpoint-rebuilt-{os.getpid()}")
    monkeypatch.setenv("SSL_CERT_FILE", "/nonexistent/rewardhub-test-ca.pem")
    reward = judge()
    failed = reward.evaluate(*rows("4"))
    assert failed.values == [None]
    assert failed.reasons[0].startswith("judge unavailable: cannot start the OpenAI client: FileNotFoundError")
    monkeypatch.delenv("SSL_CERT_FILE")
    assert reward.evaluate(*rows("4", "7")).values == [0.4, 0.7]
    assert server.requests == 2
