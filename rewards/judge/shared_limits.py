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
to wait; unused budget is given back. If the shared store cannot be reached, the process goes on
with a bucket of its own (and says so once): a broken Redis never stops the judge.
"""

from __future__ import annotations

import fcntl
import hashlib
import logging
import os
import struct
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

from .errors import JudgeConfigError
from .limits import TokenBucket

logger = logging.getLogger("rewardhub.judge")

SHARE_MODES = ("process", "host")
_STATE = struct.Struct("<dd")  # level, stamp (CLOCK_MONOTONIC: one clock for every process of a host)
REDIS_TTL = 3600  # seconds an unused bucket is kept (a full one is the same as none)

# KEYS[1] bucket; ARGV: capacity, rate per second, change (negative: reserve). Returns the new level.
_REDIS_SCRIPT = """
local capacity, rate, change = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3])
local clock = redis.call('TIME')
local now = tonumber(clock[1]) + tonumber(clock[2]) / 1000000
local level = tonumber(redis.call('HGET', KEYS[1], 'level'))
local stamp = tonumber(redis.call('HGET', KEYS[1], 'stamp'))
if level == nil or stamp == nil then level, stamp = capacity, now end
if now > stamp then level = math.min(capacity, level + (now - stamp) * rate) end
level = math.min(capacity, level + change)
redis.call('HSET', KEYS[1], 'level', tostring(level), 'stamp', tostring(now))
redis.call('EXPIRE', KEYS[1], ARGV[4])
return tostring(level)
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
    """A per-minute budget in Redis, shared by processes on every host that reaches the server."""

    def __init__(self, url: str, key: str, per_minute: float):
        if per_minute <= 0:
            raise ValueError(f"a per-minute budget must be positive; got {per_minute}")
        self.url, self.key, self.capacity, self.rate = url, f"rewardhub:budget:{key}", float(per_minute), per_minute / 60.0
        self._fallback: TokenBucket | None = None
        self._lock = threading.Lock()
        self._client: Any = None

    def _script(self):
        with self._lock:
            if self._client is None:
                try:
                    import redis
                except ImportError:
                    raise JudgeConfigError("judge share_limits with a redis:// URL needs the redis client: "
                                           "pip install 'rewardhub[redis]'") from None
                client = redis.Redis.from_url(self.url, socket_timeout=2.0, socket_connect_timeout=2.0)
                self._client = client.register_script(_REDIS_SCRIPT)
            return self._client

    def _change(self, change: float) -> float | None:
        try:
            return float(self._script()(keys=[self.key], args=[self.capacity, self.rate, change, REDIS_TTL]))
        except JudgeConfigError:
            raise
        except Exception as exc:  # unreachable, timed out, refused: go on alone rather than stop judging
            if self._fallback is None:
                logger.warning("judge rate budget at %s unavailable (%s: %s): this process keeps its own budget",
                               self.url, type(exc).__name__, exc)
                self._fallback = TokenBucket(self.capacity)
            return None

    def reserve(self, amount: float) -> float:
        amount = min(float(amount), self.capacity)
        level = self._change(-amount)
        if level is None:
            return self._fallback.reserve(amount)
        return max(0.0, -level / self.rate)

    def give_back(self, amount: float) -> None:
        if self._change(float(amount)) is None:
            self._fallback.give_back(amount)

    def __getstate__(self) -> dict[str, Any]:
        return {k: v for k, v in self.__dict__.items() if k not in ("_lock", "_client")}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state, _lock=threading.Lock(), _client=None)


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
