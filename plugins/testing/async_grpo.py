"""TRL's async GRPO rollout loop (``trl.experimental.async_grpo``, TRL 1.16) run on one CPU machine, no vLLM.

In ``AsyncGRPOTrainer`` a spawned child process runs ``_AsyncRolloutLoop``: it samples completions
from a vLLM server's ``/v1/completions``, runs the tool calls against each rollout's environment,
calls the environment's ``get_reward()`` and the reward functions, computes the group advantages and
queues the scored samples for the trainer. That loop is where rewardhub is called, and here it runs
as released:

- :class:`CompletionsServer`: vLLM's completion protocol (token-id prompts in; sampled token ids and
  their logprobs out; ``/health``, ``/v1/models``) on 127.0.0.1, sampling from a transformers model.
- :class:`LocalRolloutWorker`: TRL's ``RolloutWorkerProtocol`` (what ``AsyncGRPOTrainer(rollout_worker=)``
  takes) running the released ``_AsyncRolloutLoop`` in a thread of this process instead of a child.
  ``start()`` still pickles what the child would be sent, so a reward or environment a real run could
  not ship fails here too; :meth:`LocalRolloutWorker.take` reads the scored samples.

    with CompletionsServer.from_pretrained(path) as server:
        worker = LocalRolloutWorker.from_config(server, AsyncGRPOConfig(...), dataset=..., reward_funcs=...,
                                                processing_class=..., environment_factory=Shop)
        worker.start()
        samples = worker.take(8)          # RolloutSample: metrics["rewards/Shop"], advantage, ...
        worker.stop()

The trainer's own step cannot run without a GPU in TRL 1.16: ``AsyncGRPOTrainer.__init__`` asks
``torch.cuda.get_device_name`` for its MFU metric (a CPU-only torch raises), and its model is loaded
with ``attn_implementation="tree_fa3"``, FlashAttention-3 kernels fetched from the Hugging Face Hub by
``kernels`` (Hopper or ROCm GPUs). Weight sync to vLLM goes over NCCL.
"""

from __future__ import annotations

import json
import pickle
import queue
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

__all__ = ["CompletionError", "CompletionsServer", "LocalRolloutWorker"]


class CompletionError(ValueError):
    """A completion request the server cannot honour (answered 400 with this message)."""


class CompletionsServer:
    """vLLM's ``/v1/completions`` for token-id prompts, served from a transformers causal LM on 127.0.0.1."""

    def __init__(self, model: Any, tokenizer: Any, *, model_name: str = "local", max_model_len: int = 2048):
        self.model = model.eval()
        self.tokenizer = tokenizer
        self.model_name = model_name
        self.max_model_len = max_model_len
        eos = model.generation_config.eos_token_id
        self.eos_token_ids = set(eos if isinstance(eos, list) else [eos if eos is not None else tokenizer.eos_token_id])
        self.lock = threading.Lock()  # one generation at a time: the model is shared
        self.requests = 0
        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), _handler(self))
        self._httpd.daemon_threads = True
        self._thread: threading.Thread | None = None

    @classmethod
    def from_pretrained(cls, path: Any, **options: Any) -> CompletionsServer:
        """A server for the model and tokenizer saved at ``path``."""
        from transformers import AutoModelForCausalLM, AutoTokenizer

        return cls(AutoModelForCausalLM.from_pretrained(path), AutoTokenizer.from_pretrained(path), **options)

    @property
    def base_url(self) -> str:
        host, port = self._httpd.server_address[:2]
        return f"http://{host}:{port}"

    def start(self) -> CompletionsServer:
        self._thread = threading.Thread(target=self._httpd.serve_forever, name="rewardhub-completions", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()
        if self._thread is not None:
            self._thread.join(timeout=10)

    def __enter__(self) -> CompletionsServer:
        return self.start()

    def __exit__(self, *exc: Any) -> None:
        self.stop()

    def complete(self, body: dict[str, Any]) -> dict[str, Any]:
        """One completion as vLLM answers it: ``choices[0]`` with ``token_ids`` (the stop token included)
        and ``logprobs.token_logprobs`` (under the temperature-scaled distribution, as the trainer scores)."""
        import torch

        prompt = body.get("prompt")
        if not isinstance(prompt, list) or not prompt or not all(isinstance(t, int) for t in prompt):
            raise CompletionError("prompt must be a non-empty list of token ids")
        if body.get("n", 1) != 1:
            raise CompletionError("only n=1 is served")
        if body.get("repetition_penalty", 1.0) != 1.0 or body.get("min_p") not in (None, 0, 0.0):
            raise CompletionError("repetition_penalty and min_p are not supported by this server")
        temperature = float(body.get("temperature", 1.0))
        top_p, top_k = float(body.get("top_p", 1.0)), int(body.get("top_k", 0) or 0)
        budget = min(int(body.get("max_tokens", 16)), self.max_model_len - len(prompt))
        generator = torch.Generator().manual_seed(int(body.get("seed", 0)) % (2**63))
        with self.lock, torch.no_grad():
            self.requests += 1
            ids, logprobs, finish = self._sample(prompt, budget, temperature, top_p, top_k, generator)
        return {"id": f"cmpl-{self.requests}", "object": "text_completion", "model": body.get("model", self.model_name),
                "choices": [{"index": 0, "text": self.tokenizer.decode(ids), "token_ids": ids,
                             "logprobs": {"token_logprobs": logprobs}, "finish_reason": finish}]}

    def _sample(self, prompt: list[int], budget: int, temperature: float, top_p: float, top_k: int,
                generator: Any) -> tuple[list[int], list[float], str]:
        import torch

        ids: list[int] = []
        logprobs: list[float] = []
        inputs, past = torch.tensor([prompt]), None
        for _ in range(max(budget, 0)):
            out = self.model(input_ids=inputs, past_key_values=past, use_cache=True)
            past = out.past_key_values
            logits = out.logits[0, -1].float()
            scaled = torch.log_softmax(logits / temperature if temperature > 0 else logits, dim=-1)
            token = int(torch.argmax(logits)) if temperature <= 0 else _draw(scaled, top_p, top_k, generator)
            ids.append(token)
            logprobs.append(float(scaled[token]))
            if token in self.eos_token_ids:
                return ids, logprobs, "stop"
            inputs = torch.tensor([[token]])
        return ids, logprobs, "length"


def _draw(logprobs: Any, top_p: float, top_k: int, generator: Any) -> int:
    """A token drawn from ``logprobs`` restricted to its ``top_k`` and its ``top_p`` nucleus."""
    import torch

    probs = logprobs.exp()
    order = torch.argsort(probs, descending=True)
    kept = probs[order]
    if top_k > 0:
        kept = kept[:top_k]
    if top_p < 1.0:
        cumulative = torch.cumsum(kept, 0)
        kept = kept[: int((cumulative < top_p).sum()) + 1]
    choice = torch.multinomial(kept / kept.sum(), 1, generator=generator)
    return int(order[int(choice)])


def _handler(server: CompletionsServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"  # keep-alive: TRL's aiohttp client pools its connections

        def do_GET(self) -> None:  # noqa: N802 (http.server's name)
            path = self.path.split("?", 1)[0]
            if path == "/health":
                self._send(200, {})
            elif path == "/v1/models":
                self._send(200, {"object": "list", "data": [{"id": server.model_name, "object": "model",
                                                              "max_model_len": server.max_model_len}]})
            else:
                self._send(404, {"error": f"no route {path}"})

        def do_POST(self) -> None:  # noqa: N802
            length = int(self.headers.get("Content-Length", 0))
            try:
                body = json.loads(self.rfile.read(length) or b"{}")
                if self.path != "/v1/completions":
                    self._send(404, {"error": f"no route {self.path}"})
                    return
                self._send(200, server.complete(body))
            except (CompletionError, ValueError) as exc:
                self._send(400, {"error": str(exc)})

        def _send(self, status: int, payload: dict[str, Any]) -> None:
            data = json.dumps(payload).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, *args: Any) -> None:  # quiet: the trainer logs what matters
            pass

    return Handler


class _Shared:
    """An ``mp.Value`` stand-in for one process: a value behind a lock."""

    def __init__(self, value: Any):
        self.value = value
        self._lock = threading.Lock()

    def get_lock(self) -> threading.Lock:
        return self._lock


class LocalRolloutWorker:
    """TRL's ``RolloutWorkerProtocol``: its released ``_AsyncRolloutLoop`` run in a thread of this process."""

    def __init__(self, *, queue_maxsize: int = 0, **loop_kwargs: Any):
        self.rollout_buffer: queue.Queue = queue.Queue(maxsize=queue_maxsize)
        self.metrics_queue: queue.Queue = queue.Queue(maxsize=4096)
        self._version = _Shared(0)
        self._heartbeat = _Shared(0.0)
        self._failed = threading.Event()
        self._failure: queue.Queue = queue.Queue(maxsize=1)
        self._loop_kwargs = {**loop_kwargs, "queue_maxsize": queue_maxsize}
        self._loop: Any = None
        self._thread: threading.Thread | None = None

    @classmethod
    def from_config(cls, server: CompletionsServer, args: Any, *, dataset: Any, reward_funcs: list[Any],
                    processing_class: Any, tools: list[Any] | None = None, environment_factory: Any = None,
                    ) -> LocalRolloutWorker:
        """A worker with the settings ``AsyncGRPOTrainer`` gives its own, from an ``AsyncGRPOConfig``
        (``max_inflight_tasks`` set: the trainer resolves its ``-1`` only for the worker it builds)."""
        if args.max_inflight_tasks < 1:
            raise ValueError(f"set AsyncGRPOConfig.max_inflight_tasks (concurrent rollouts); got {args.max_inflight_tasks}")
        return cls(
            model_name=server.model_name, dataset=dataset, reward_funcs=reward_funcs, processing_class=processing_class,
            eos_token_ids=sorted(server.eos_token_ids), tools=tools, environment_factory=environment_factory,
            num_generations=args.num_generations, max_inflight_tasks=args.max_inflight_tasks,
            queue_maxsize=args.queue_maxsize, vllm_server_url=server.base_url, max_tokens=args.max_completion_length,
            temperature=args.temperature, top_p=args.top_p, top_k=args.top_k, min_p=args.min_p,
            repetition_penalty=args.repetition_penalty, request_timeout=args.request_timeout,
            chat_template_kwargs=args.chat_template_kwargs, max_tool_calling_iterations=args.max_tool_calling_iterations,
            log_completions=args.log_completions, num_completions_to_print=args.num_completions_to_print,
            fork_threshold_tokens=args.fork_threshold_tokens,
        )

    def start(self) -> None:
        from accelerate.state import PartialState
        from trl.experimental.async_grpo.async_rollout_worker import _AsyncRolloutLoop

        PartialState()  # as TRL's child does: the loop logs through accelerate's logger

        try:
            pickle.dumps(self._loop_kwargs)  # what TRL's worker sends its spawned child
        except (pickle.PicklingError, AttributeError, TypeError) as exc:
            raise TypeError(f"TRL's async GRPO sends reward_funcs, tools and environment_factory to a child "
                            f"process, and these do not pickle: {exc}") from exc
        self._heartbeat.value = time.time()
        self._loop = _AsyncRolloutLoop(
            **self._loop_kwargs, rollout_buffer=self.rollout_buffer, model_version_value=self._version,
            heartbeat_value=self._heartbeat, failed_event=self._failed, exception_info_queue=self._failure,
            metrics_queue=self.metrics_queue,
        )
        self._thread = threading.Thread(target=self._run, name="rewardhub-rollout-loop", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        try:
            self._loop.run()
        except BaseException:  # the loop reported it (failed event, exception queue): check_health raises it
            pass

    def take(self, count: int, timeout: float = 600.0) -> list[Any]:
        """The next ``count`` scored samples (TRL's ``RolloutSample``); raises if the loop fails or they take
        longer than ``timeout`` seconds."""
        samples: list[Any] = []
        deadline = time.monotonic() + timeout
        while len(samples) < count:
            self.check_health(timeout)
            try:
                samples.append(self.rollout_buffer.get(timeout=min(1.0, max(deadline - time.monotonic(), 0.01))))
            except queue.Empty:
                if time.monotonic() > deadline:
                    raise TimeoutError(f"{len(samples)} of {count} samples within {timeout} s") from None
        return samples

    def update_model_version(self, model_version: int) -> None:
        with self._version.get_lock():
            self._version.value = int(model_version)

    def check_health(self, stale_after_s: float) -> None:
        if self._failed.is_set():
            try:
                name, message, trace = self._failure.get_nowait()
                cause: BaseException | None = RuntimeError(f"{name}: {message}\n{trace}")
            except queue.Empty:
                cause = None
            raise RuntimeError("the rollout loop failed; see the chained exception") from cause
        age = time.time() - self._heartbeat.value
        if age > stale_after_s:
            raise RuntimeError(f"the rollout loop's heartbeat is {age:.0f} s old (> {stale_after_s:.0f} s): it hangs")

    def stop(self) -> None:
        if self._loop is None or self._thread is None:
            return
        try:
            self._loop._loop.call_soon_threadsafe(self._loop._stop_event.set)
        except RuntimeError:
            pass  # the loop already ended
        self._thread.join(timeout=30)
        self._loop = self._thread = None
