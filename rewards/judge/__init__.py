"""The ``judge`` family (LLM-as-judge): templates (``prompt``), the OpenAI-compatible client with
limits and retries (``client``, ``limits``), a shared cache (``cache``), verdict parsing (``parse``)
and the reward (``reward``)."""

from .errors import JudgeConfigError, JudgeContextOverflow, JudgeInputError, JudgeRequestError
from .reward import JudgeReward

__all__ = ["JudgeConfigError", "JudgeContextOverflow", "JudgeInputError", "JudgeRequestError", "JudgeReward"]
