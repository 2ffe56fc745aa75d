"""Prometheus metrics of the reward server and the router (``GET /metrics``), with prometheus-client.

Each app gets its own registry (several apps in one process, as in tests, do not clash). What is
counted: requests by endpoint and status, their latency, per-reward outcomes (ok / abstain / error /
timeout), how long samples waited for their group, the requests in flight, (router) forwards per
replica, replica health and reroutes, and (server) the reward-hacking monitor's latest figures as
``rewardhub_hacking_*`` gauges, read from the monitor when scraped.
"""

from __future__ import annotations

import time
from typing import Any

__all__ = [
    "BUCKETS",
    "CONTENT_TYPE",
    "HackingCollector",
    "MeteredScorer",
    "Metrics",
    "MetricsMiddleware",
    "metrics_response",
    "noting_status",
]

# Latency buckets from a fast rule reward (ms) to a judge or sandbox batch near the 180 s client timeout.
BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0, 120.0, 180.0)
CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"


class Metrics:
    """The metrics of one app; ``render()`` is the ``/metrics`` body."""

    def __init__(self, role: str):
        from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram

        self.registry = CollectorRegistry(auto_describe=True)
        self.role = role
        self.requests = Counter("rewardhub_requests", "HTTP requests answered, by endpoint and status",
                                ["endpoint", "status"], registry=self.registry)
        self.latency = Histogram("rewardhub_request_seconds", "Time to answer an HTTP request", ["endpoint"],
                                 buckets=BUCKETS, registry=self.registry)
        self.inflight = Gauge("rewardhub_requests_in_flight", "Requests being answered now", registry=self.registry)
        if role == "server":
            self.outcomes = Counter("rewardhub_reward_outcomes", "Scored samples by reward alias and outcome",
                                    ["reward", "outcome"], registry=self.registry)
            self.samples = Counter("rewardhub_samples", "Samples scored", registry=self.registry)
            self.group_wait = Histogram("rewardhub_group_wait_seconds",
                                        "Seconds from a sample's arrival until its group was complete and scored",
                                        buckets=BUCKETS, registry=self.registry)
        else:
            self.forwards = Counter("rewardhub_router_forwards", "Sub-requests forwarded, by replica and outcome",
                                    ["replica", "outcome"], registry=self.registry)
            self.replica_up = Gauge("rewardhub_router_replica_up", "1 when the replica answers its readiness check",
                                    ["replica"], registry=self.registry)
            self.reroutes = Counter("rewardhub_router_reroutes",
                                    "Samples sent to another replica than their first choice (it was down)",
                                    registry=self.registry)

    def watch_hacking(self, monitor: Any) -> None:
        """Expose ``monitor``'s ``rewardhub/hacking/...`` metrics on ``/metrics`` (read at each scrape)."""
        self.registry.register(HackingCollector(monitor))

    def render(self) -> bytes:
        from prometheus_client import generate_latest

        return generate_latest(self.registry)

    def observe_scored(self, scored: Any) -> None:
        """Count each sample's outcome per reward alias (a ``SetResult``)."""
        self.samples.inc(len(scored.totals))
        for alias, result in scored.components.items():
            counts: dict[str, int] = {}
            for score in result.scores:
                counts[score.outcome] = counts.get(score.outcome, 0) + 1
            for outcome, count in counts.items():
                self.outcomes.labels(alias, outcome).inc(count)


class HackingCollector:
    """The hacking monitor's metrics as Prometheus gauges: ``rewardhub/hacking/<figure>`` becomes
    ``rewardhub_hacking_<figure>``; a signal's flag ``rewardhub_hacking_signal{signal=...}``; a per-reward
    figure (``abstained/<alias>``, ``failed/<alias>``, ``share/<alias>``) ``rewardhub_hacking_<kind>{reward=...}``;
    a signature's share ``rewardhub_hacking_signature{signature=...}``."""

    def __init__(self, monitor: Any):
        self.monitor = monitor

    def describe(self) -> list:
        return []  # families depend on the monitor's aliases and history: nothing to check at registration

    def collect(self):
        from prometheus_client.core import GaugeMetricFamily

        from rewardhub.hacking import PREFIX, SIGNALS

        report = self.monitor.report()
        families: dict[str, GaugeMetricFamily] = {}

        def family(name: str, help_text: str, labels: tuple[str, ...] = ()) -> GaugeMetricFamily:
            if name not in families:
                families[name] = GaugeMetricFamily(name, help_text, labels=list(labels))
            return families[name]

        family("rewardhub_hacking_steps", "Steps the reward-hacking monitor has closed").add_metric([], report["steps"])
        for key, value in report["metrics"].items():
            kind, _, subject = key.removeprefix(f"{PREFIX}/").partition("/")
            if subject:
                label = "signature" if kind == "signature" else "reward"
                family(f"rewardhub_hacking_{kind}", f"Latest step's {kind} figure of the hacking monitor, per {label}",
                       (label,)).add_metric([subject], value)
            elif kind in SIGNALS:
                family("rewardhub_hacking_signal", "1 while the hacking monitor's signal holds",
                       ("signal",)).add_metric([kind], value)
            else:
                family(f"rewardhub_hacking_{kind}", f"Latest step's {kind} figure of the hacking monitor").add_metric(
                    [], value)
        yield from families.values()


class MeteredScorer:
    """A :class:`~rewardhub.trainers.groups.CallScorer` that counts outcomes and group waits."""

    def __init__(self, scorer: Any, metrics: Metrics):
        self.scorer, self.metrics = scorer, metrics

    @property
    def assembler(self) -> Any:
        return self.scorer.assembler

    async def ascore(self, batch: Any, keys: Any = None, **options: Any) -> Any:
        start = time.perf_counter()
        scored = await self.scorer.ascore(batch, keys, **options)
        if self.scorer.assembler is not None:
            waited = time.perf_counter() - start
            for _ in range(len(batch)):
                self.metrics.group_wait.observe(waited)
        self.metrics.observe_scored(scored)
        return scored

    def close(self) -> None:
        self.scorer.close()


class MetricsMiddleware:
    """ASGI middleware: counts every HTTP request by endpoint (its route path) and status, and times it."""

    def __init__(self, app: Any, metrics: Metrics, endpoints: set[str]):
        self.app, self.metrics, self.endpoints = app, metrics, endpoints

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        endpoint = scope["path"] if scope["path"] in self.endpoints else "other"  # no label per unknown path
        start, (send_and_note, noted) = time.perf_counter(), noting_status(send)
        self.metrics.inflight.inc()
        try:
            await self.app(scope, receive, send_and_note)
        finally:
            self.metrics.inflight.dec()
            self.metrics.requests.labels(endpoint, str(noted["status"])).inc()
            self.metrics.latency.labels(endpoint).observe(time.perf_counter() - start)


def noting_status(send: Any) -> tuple[Any, dict[str, int]]:
    """ASGI ``send`` wrapped to note the response status (500 until a response starts: the app raised)."""
    noted = {"status": 500}

    async def send_and_note(message):
        if message["type"] == "http.response.start":
            noted["status"] = message["status"]
        await send(message)

    return send_and_note, noted


def metrics_response(metrics: Metrics):
    from starlette.responses import Response

    return Response(metrics.render(), media_type=CONTENT_TYPE)
