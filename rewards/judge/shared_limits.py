"""Judge rate budgets (RPM/TPM) shared by every process that uses one endpoint.

A provider's limit is per key, not per process: eight reward workers each allowed the full RPM
send eight times too much and spend the run in 429 backoff. The budgets below hold one token
bucket per endpoint (base URL + model) and per kind (requests, tokens) outside the process:

- ``host`` (the default) or a folder path: a small state file per bucket under a folder, read and
  written under ``flock``, so every process on the machine draws from one bucket;
- ``redis://HOST:PORT/DB``: a Redis hash per bucket, updated by one Lua script (atomic, on the
  server's clock), so processes on every machine draw from one bucket;
- ``process``: each process its own bucket (:class:`~.limits.TokenBucket`).

Same semantics as :class:`~.limits.TokenBucket`: a reservation is booked at once and says how long
to wait; unused budget is given back (to Redis with the process's next booking: one round trip per
request, made off the event loop by :func:`areserve`). If Redis cannot be reached, the process goes on
with its fair share of the limit in a bucket of its own (and says so once), holding to it for a
back-off before trying Redis again: a slow or broken Redis never stops or slows the judge.
"""

from __future__ import annotations

import asyncio
import fcntl
import hashlib
import logging
import os
import socket
import struct
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

from .errors import JudgeConfigError
from .limits import TokenBucket

__all__ = [
    "FileBucket",
    "HOLDER_WINDOW",
    "REDIS_TIMEOUT",
    "REDIS_TTL",
    "RedisBucket",
    "RedisStore",
    "SHARE_MODES",
    "areserve",
    "bucket_name",
    "budget",
    "check_share",
    "default_folder",
    "logger",
    "reserve_all",
]

logger = logging.getLogger("rewardhub.judge")

SHARE_MODES = ("process", "host")
_STATE = struct.Struct("<dd")  # level, stamp (CLOCK_MONOTONIC: one clock for every process of a host)
REDIS_TTL = 3600  # seconds an unused bucket is kept (a full one is the same as none)
REDIS_TIMEOUT = 2.0  # seconds a round trip may take before Redis counts as failed
BREAKER_MIN, BREAKER_MAX = 1.0, 30.0  # seconds the fallback is held after a failure (doubling per failure)
HOLDER_WINDOW = 600  # seconds a process counts as drawing from a budget after its last booking

# KEYS: buckets; ARGV: member (host:pid), holder window, ttl, then per bucket: capacity, rate per second,
# change (negative: reserve). Returns, per bucket, its new level and the processes that drew from it lately.
_REDIS_SCRIPT = """
local member, window, ttl = ARGV[1], tonumber(ARGV[2]), ARGV[3]
local clock = redis.call('TIME')
local now = tonumber(clock[1]) + tonumber(clock[2]) / 1000000
local out = {}
for i, key in ipairs(KEYS) do
  local at = 3 + (i - 1) * 3
  local capacity, rate, change = tonumber(ARGV[at + 1]), tonumber(ARGV[at + 2]), tonumber(ARGV[at + 3])
  local level = tonumber(redis.call('HGET', key, 'level'))
  local stamp = tonumber(redis.call('HGET', key, 'stamp'))
  if level == nil or stamp == nil then level, stamp = capacity, now end
  if now > stamp then level = math.min(capacity, level + (now - stamp) * rate) end
  level = math.min(capacity, level + change)
  redis.call('HSET', key, 'level', tostring(level), 'stamp', tostring(now))
  redis.call('EXPIRE', key, ttl)
  local holders = key .. ':holders'
  redis.call('ZADD', holders, now, member)
  redis.call('ZREMRANGEBYSCORE', holders, '-inf', now - window)
  redis.call('EXPIRE', holders, ttl)
  out[#out + 1] = tostring(level)
  out[#out + 1] = redis.call('ZCARD', holders)
end
return out
"""


def default_folder() -> Path:
    """Where ``host`` budgets live: ``$XDG_RUNTIME_DIR/rewardhub-budgets`` or a per-user temp folder."""
    runtime = os.environ.get("XDG_RUNTIME_DIR")
    base = Path(runtime) if runtime else Path(tempfile.gettempdir())
    return base / f"rewardhub-budgets-{os.getuid()}"


def bucket_name(endpoint: str, kind: str) -> str:
    return f"{hashlib.sha256(endpoint.encode()).hexdigest()[:32]}-{kind}"


class FileBucket:
    """A per-minute budget in a state file shared under ``flock`` by every process of one host."""

    def __init__(self, path: Path, per_minute: float, clock=time.monotonic):
        if per_minute <= 0:
            raise ValueError(f"a per-minute budget must be positive; got {per_minute}")
        self.path, self.capacity, self.rate, self._clock = Path(path), float(per_minute), per_minute / 60.0, clock
        self.path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)

    def reserve(self, amount: float) -> float:
        level = self._change(-min(float(amount), self.capacity))
        return max(0.0, -level / self.rate)

    def give_back(self, amount: float) -> None:
        self._change(float(amount))

    def _change(self, change: float) -> float:
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            data = os.pread(fd, _STATE.size, 0)
            now = self._clock()
            level, stamp = _STATE.unpack(data) if len(data) == _STATE.size else (self.capacity, now)
            if not stamp <= now:  # a state file from before a reboot (another clock), or garbage
                level, stamp = self.capacity, now
            level = min(self.capacity, min(self.capacity, level + (now - stamp) * self.rate) + change)
            os.pwrite(fd, _STATE.pack(level, now), 0)
            return level
        finally:
            os.close(fd)  # closing releases the lock


class RedisBucket:
    """A per-minute budget in Redis, shared by processes on every host that reaches the server.

    Its bookings go through the process's :class:`RedisStore` for the server (one round trip per request,
    off the event loop with :func:`areserve`, a circuit breaker, a fair-share fallback)."""

    def __init__(self, url: str, key: str, per_minute: float):
        if per_minute <= 0:
            raise ValueError(f"a per-minute budget must be positive; got {per_minute}")
        self.url, self.key, self.capacity, self.rate = url, f"rewardhub:budget:{key}", float(per_minute), per_minute / 60.0

    @property
    def store(self) -> RedisStore:
        return RedisStore.of(self.url)

    def reserve(self, amount: float) -> float:
        return reserve_all([(self, amount)])

    def give_back(self, amount: float) -> None:
        self.store.give_back(self, float(amount))


class RedisStore:
    """One Redis server's budgets as this process sees them.

    A request's bookings (its RPM and TPM buckets, and the budget given back since the last one) go in
    one Lua call; a store that failed is left alone for a back-off (``BREAKER_MIN`` s, doubling up to
    ``BREAKER_MAX``) during which bookings use the fallback at once, then one booking tries it again.
    The fallback is a bucket of ``limit / holders`` for each budget, ``holders`` being the processes
    Redis last said drew from it (within ``HOLDER_WINDOW`` s): together they keep to the shared limit.
    """

    _stores: dict[tuple[int, str], RedisStore] = {}
    _stores_lock = threading.Lock()

    def __init__(self, url: str):
        self.url = url
        self.member = f"{socket.gethostname()}:{os.getpid()}"
        self._lock = threading.Lock()
        self._script: Any = None
        self._credit: dict[str, tuple[RedisBucket, float]] = {}  # given back, sent with the next round trip
        self._holders: dict[str, int] = {}  # per budget key: processes drawing from it, as last seen
        self._fallbacks: dict[str, TokenBucket] = {}
        self._open_until: float | None = None  # the breaker: None closed, else when to try Redis again
        self._backoff = BREAKER_MIN
        self._probing = False

    @classmethod
    def of(cls, url: str) -> RedisStore:
        """The process's store for ``url`` (a forked child gets its own)."""
        key = (os.getpid(), url)
        with cls._stores_lock:
            store = cls._stores.get(key)
            if store is None:
                store = cls._stores[key] = cls(url)
            return store

    def available(self) -> bool:
        """Whether a booking now goes to Redis (the breaker is closed, or its back-off is over)."""
        with self._lock:
            return self._open_until is None or (time.monotonic() >= self._open_until and not self._probing)

    def book(self, bookings: list[tuple[RedisBucket, float]]) -> list[float]:
        """Each booking's wait in seconds: from Redis in one round trip, or from the fallback."""
        levels = self._round_trip(bookings)
        if levels is None:
            return [self._fallback(bucket).reserve(amount) for bucket, amount in bookings]
        return [max(0.0, -level / bucket.rate) for (bucket, _), level in zip(bookings, levels, strict=True)]

    def give_back(self, bucket: RedisBucket, amount: float) -> None:
        with self._lock:
            fallback = self._fallbacks.get(bucket.key) if self._open_until is not None else None
            if fallback is None:
                _, owed = self._credit.get(bucket.key, (bucket, 0.0))
                self._credit[bucket.key] = (bucket, owed + amount)
                return
        fallback.give_back(amount)

    def _round_trip(self, bookings: list[tuple[RedisBucket, float]]) -> list[float] | None:
        with self._lock:
            if self._open_until is not None:
                if time.monotonic() < self._open_until or self._probing:
                    return None
                self._probing = True  # this booking tries Redis again; the others keep the fallback meanwhile
            credit, self._credit = self._credit, {}
        changes = {key: [bucket.capacity, bucket.rate, owed] for key, (bucket, owed) in credit.items()}
        for bucket, amount in bookings:
            changes.setdefault(bucket.key, [bucket.capacity, bucket.rate, 0.0])[2] -= min(float(amount), bucket.capacity)
        keys = list(changes)
        try:
            answer = self._loaded()(keys=keys, args=[self.member, HOLDER_WINDOW, REDIS_TTL,
                                                     *(value for key in keys for value in changes[key])])
        except JudgeConfigError:
            with self._lock:
                self._probing = False
            raise
        except Exception as exc:  # unreachable, timed out, refused: go on with fair shares rather than stop judging
            self._opened(exc, credit)
            return None
        with self._lock:
            for i, key in enumerate(keys):
                self._holders[key] = max(int(answer[2 * i + 1]), 1)
            if self._open_until is not None:
                logger.warning("judge rate budget at %s is back: this process draws from the shared budget again",
                               self.url)
            self._open_until, self._backoff, self._probing = None, BREAKER_MIN, False
            self._fallbacks.clear()
        levels = {key: float(answer[2 * i]) for i, key in enumerate(keys)}
        return [levels[bucket.key] for bucket, _ in bookings]

    def _opened(self, exc: Exception, credit: dict[str, tuple[RedisBucket, float]]) -> None:
        """Open the breaker (or keep it open, backing off longer); the credit not sent waits for a later trip."""
        with self._lock:
            first = self._open_until is None
            self._open_until = time.monotonic() + self._backoff
            self._backoff = min(self._backoff * 2, BREAKER_MAX)
            self._probing = False
            for key, (bucket, owed) in credit.items():
                _, more = self._credit.get(key, (bucket, 0.0))
                self._credit[key] = (bucket, owed + more)
        if first:
            logger.warning("judge rate budget at %s unavailable (%s: %s): this process keeps its own budget, a fair "
                           "share of the limit, and tries Redis again after a back-off", self.url,
                           type(exc).__name__, exc)

    def _fallback(self, bucket: RedisBucket) -> TokenBucket:
        with self._lock:
            fallback = self._fallbacks.get(bucket.key)
            if fallback is None:
                share = bucket.capacity / self._holders.get(bucket.key, 1)
                fallback = self._fallbacks[bucket.key] = TokenBucket(share)
            return fallback

    def _loaded(self) -> Any:
        with self._lock:
            if self._script is None:
                try:
                    import redis
                except ImportError:
                    raise JudgeConfigError("judge share_limits with a redis:// URL needs the redis client: "
                                           "pip install 'rewardhub[redis]'") from None
                client = redis.Redis.from_url(self.url, socket_timeout=REDIS_TIMEOUT,
                                              socket_connect_timeout=REDIS_TIMEOUT)
                self._script = client.register_script(_REDIS_SCRIPT)
            return self._script


def reserve_all(bookings: list[tuple[Any, float]]) -> float:
    """Book ``amount`` in each bucket (``None`` buckets skipped); the longest wait, in seconds. The
    Redis buckets of one server are booked in one round trip (blocking: see :func:`areserve`)."""
    waits = [0.0]
    by_store: dict[str, list[tuple[RedisBucket, float]]] = {}
    for bucket, amount in bookings:
        if isinstance(bucket, RedisBucket):
            by_store.setdefault(bucket.url, []).append((bucket, amount))
        elif bucket is not None:
            waits.append(bucket.reserve(amount))
    for url, booked in by_store.items():
        waits.extend(RedisStore.of(url).book(booked))
    return max(waits)


async def areserve(bookings: list[tuple[Any, float]]) -> float:
    """:func:`reserve_all` for an event loop: a Redis round trip runs in a thread, so a slow or frozen
    Redis never stops the loop (and, its breaker open, is not waited for at all)."""
    remote = [bucket for bucket, _ in bookings if isinstance(bucket, RedisBucket)]
    if remote and any(bucket.store.available() for bucket in remote):
        return await asyncio.to_thread(reserve_all, bookings)
    return reserve_all(bookings)


def budget(per_minute: float | None, kind: str, endpoint: str, share: str) -> Any:
    """The bucket for one budget (``None`` when there is no limit), shared as ``share`` says."""
    if not per_minute:
        return None
    if share == "process":
        return TokenBucket(per_minute)
    if share.startswith(("redis://", "rediss://", "unix://")):
        return RedisBucket(share, bucket_name(endpoint, kind), per_minute)
    folder = default_folder() if share == "host" else Path(share).expanduser()
    return FileBucket(folder / bucket_name(endpoint, kind), per_minute)


def check_share(share: str) -> str:
    """``share`` as given, or :class:`JudgeConfigError` saying what it may be."""
    if not isinstance(share, str) or not share:
        raise JudgeConfigError(f"judge share_limits must be 'process', 'host', a folder or a redis:// URL; got {share!r}")
    if share not in SHARE_MODES and "://" in share and not share.startswith(("redis://", "rediss://", "unix://")):
        raise JudgeConfigError(f"judge share_limits: unknown store {share!r}; use 'host', a folder, or redis://HOST:PORT/DB")
    return share
