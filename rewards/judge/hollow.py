"""Hollow completions: nothing to judge, so the judge is not asked and the completion scores 0.

LLM judges are known to accept content-free answers as correct: a lone ``:`` or ``.``, or a reasoning
opener with nothing after it ("Thought process:", "Let's solve this problem step by step.",
"Solution", "解", "かいせつ", "Respuesta"): the published judge *master keys* (Zhao et al., 2025, "One
Token to Fool LLM-as-a-Judge"). A policy finds them fast. A completion is hollow when, read
canonically, it holds no letter or digit outside such openers (in en/zh/ja/ko/es/de/fr/pt/it/ru);
it is scored 0.0 with the reason, and ranked below every other completion of its group. A completion
that is the reference answer itself (a chemistry answer "Solution") is never hollow.
"""

from __future__ import annotations

import functools
import re
from typing import Any

from rewardhub import Score
from rewardhub.rewards.text import canonical

__all__ = ["OPENERS", "hollow_reason", "hollow_score"]

OPENERS = (
    # English
    "thought process", "thinking process", "my thought process", "reasoning", "reasoning process", "analysis",
    "explanation", "solution", "the solution", "solution process", "answer", "the answer", "the answer is",
    "final answer", "the final answer is", "my answer", "response", "step", "step 1", "step by step",
    "let's solve this problem step by step", "let us solve this problem step by step",
    "let's solve this step by step", "let's solve this", "let's solve it", "let's think step by step",
    "let's think about this step by step", "let me think step by step", "let's think", "let me think",
    "let me solve this", "let me solve this step by step", "i'll solve this step by step",
    "i will solve this step by step", "let's work through this", "let's work through this step by step",
    "here's my reasoning", "here is my reasoning", "my reasoning", "let us think step by step", "let us think", "let us solve this", "let's break it down", "let's break this down", "let's see", "to solve this problem",
    "here is the solution", "here's the solution", "here is my answer", "here's my answer", "sure", "okay", "ok",
    "alright", "well", "hmm", "so", "first", "thinking", "think", "working", "work", "calculation",
    # Chinese
    "解", "解答", "解析", "答", "答案", "答案是", "最终答案", "分析", "思路", "思考过程", "思考", "推理", "推理过程",
    "步骤", "解题过程", "解题思路", "让我们一步一步地解决这个问题", "让我们一步一步地思考", "让我们一步一步来",
    "我们一步一步来", "一步一步", "好的", "首先",
    # Japanese
    "かいせつ", "解説", "解き方", "答え", "回答", "考え方", "思考過程", "ステップバイステップで考えましょう",
    "ステップバイステップで解いてみましょう", "順を追って考えましょう", "では", "まず",
    # Korean
    "해설", "풀이", "답", "정답", "해답", "생각 과정", "사고 과정", "단계별로 풀어봅시다", "단계별로 생각해 봅시다",
    # Spanish
    "respuesta", "la respuesta", "la respuesta es", "solución", "solucion", "razonamiento", "análisis",
    "proceso de pensamiento", "resolvamos este problema paso a paso", "pensemos paso a paso", "paso a paso",
    "veamos",
    # German
    "lösung", "antwort", "die antwort", "die antwort ist", "denkprozess", "gedankengang", "überlegung",
    "lösen wir dieses problem schritt für schritt", "lass uns schritt für schritt denken",
    "denken wir schritt für schritt", "schritt für schritt", "lösungsweg",
    # French
    "réponse", "la réponse", "la réponse est", "raisonnement", "processus de réflexion", "réflexion",
    "résolvons ce problème étape par étape", "réfléchissons étape par étape", "étape par étape",
    # Portuguese
    "resposta", "a resposta", "a resposta é", "solução", "raciocínio", "processo de pensamento",
    "vamos resolver este problema passo a passo", "vamos pensar passo a passo", "passo a passo",
    # Italian
    "risposta", "la risposta", "la risposta è", "soluzione", "ragionamento", "processo di pensiero",
    "risolviamo questo problema passo dopo passo", "pensiamo passo dopo passo", "passo dopo passo",
    # Russian
    "решение", "ответ", "ответ такой", "рассуждение", "ход мыслей", "размышление",
    "давайте решим эту задачу шаг за шагом", "давайте подумаем шаг за шагом", "шаг за шагом",
)  # fmt: skip
_NOT_CONTENT = re.compile(r"[\W_]+")
MAX_OPENERS_CHARS = 200  # a longer text is never read as openers only (it has content, or is filler for others)


def hollow_reason(text: str | None, reference: str | None = None) -> str | None:
    """Why ``text`` is hollow (no content beyond punctuation and reasoning openers), or ``None``."""
    words = _words(text or "")
    if reference is not None and words and words == _words(reference):
        return None
    if not words:
        return "hollow completion: no letter or digit to judge"
    if len(words) <= MAX_OPENERS_CHARS and _openers().fullmatch(words):
        return f"hollow completion: only an opener with nothing after it ({_short(text or '')!r})"
    return None


def hollow_score(text: str | None, row: Any, reference_column: str) -> Score | None:
    """0.0 with the reason when ``text`` is hollow (the row's reference, if any, is never hollow)."""
    reference = row[reference_column] if reference_column in row else None
    reason = hollow_reason(text, reference if isinstance(reference, str) else None)
    return None if reason is None else Score(0.0, reason, False)


def _words(text: str) -> str:
    return " ".join(_NOT_CONTENT.sub(" ", canonical(text).lower()).split())


@functools.cache
def _openers() -> re.Pattern[str]:
    forms = sorted({_words(opener) for opener in OPENERS}, key=len, reverse=True)
    alternatives = "|".join(re.escape(form) for form in forms)
    return re.compile(rf"(?:(?:{alternatives})\s?)+")


def _short(text: str, limit: int = 60) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 3] + "..."
