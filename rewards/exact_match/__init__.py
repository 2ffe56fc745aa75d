"""``exact_match``: 1.0 when the completion's final answer equals the reference column, else 0.0.

The answer is found where the math family finds it (``rewards/math``'s ``find_answer``: the answer tag, the
last statement in any language of the lexicon, ``####``, and only when nothing is stated, the last math span, a
bare answer or the last number, never in a text cut off), or by the ``extractors`` named. It is then compared
with the reference:

- as a **value**, exactly, where both read as one (``values``): numbers in any spelling the shared layer reads
  (grouped digits, Swiss and Indian groups, decimal commas, full-width and CJK numerals, number words,
  ``1.6 \\times 10^{-19}`` = ``1.6e-19``, superscript exponents, repeating decimals, mixed numbers, ``x = 10``),
  quantities converted exactly with pint (``3180 min`` = ``53\\,\\text{h}``, never ``5 ms`` for ``5\\text{ s}``),
  tuples and intervals in order, sets and unbracketed lists of solutions in any order (``\\pm 4`` = ``4, -4``);
- else as a **normalised string** (case, whitespace, punctuation, LaTeX wrappers; a factorial keeps its ``!``).

Refused with 0 and the reason: several values offered where not all are right (a hedge in any language), a
stated answer taken back with no single value after it, two final statements that disagree with no correction
between them, and anything that reads as neither an equal value nor an equal string. Nothing is approximate: no
tolerance, no parser, no worker process. A completion that is the reference after normalisation is always 1.0.
"""

from .reward import ExactMatch, _quote, register_rewards

__all__ = ["ExactMatch", "_quote", "register_rewards"]
