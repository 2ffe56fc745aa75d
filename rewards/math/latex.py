"""Rewrite an answer into LaTeX that the parser reads faithfully, so that no two different answers parse alike.

Left alone, Math-Verify reads ``x**3 + 1`` and ``x**2 + 1`` both as ``1``, ``0x1f`` and ``0x20`` as
``0*x*...``, drops the prime of ``E'``, and cannot read ``\\sqrt3`` or ``\\frac1{72}``. Here: brace-less
arguments of ``\\frac`` and ``\\sqrt`` are braced exactly as TeX reads them (one token each:
``\\frac172`` is 1/7 followed by 2), Python and sympy syntax (``**``, ``*``, ``sqrt()``, ``exp()``,
``pi``, ``oo``) becomes LaTeX, hexadecimal, binary and octal literals become decimal numbers, and primes
become ``^{\\prime}`` (a symbol of their own). All passes are linear in the answer's length times its
nesting depth; answers are short (the reward bounds their length first).
"""

from __future__ import annotations

import re

__all__ = ["to_parseable_latex"]

_FRAC_OR_SQRT = re.compile(r"\\(?:frac|sqrt)(?![A-Za-z])")
_CONTROL_WORD = re.compile(r"\\[A-Za-z]+|\\.")
_FUNCTION_CALL = re.compile(r"(?<![\\A-Za-z])(sqrt|exp|abs|Abs|Rational|sin|cos|tan|cot|sec|csc|log|ln)\(")
_POWER = re.compile(r"\*\*")
_TIMES = re.compile(r"(?<![*\\])\*(?![*}])")  # not \begin{align*}
_PYTHON_CONSTANT = re.compile(r"(?<![\\A-Za-z])(pi|oo)(?![A-Za-z])")
_OPERAND = re.compile(r"\s*(?:[-+]\s*)?(?:[A-Za-z0-9_.]+|\\[A-Za-z]+)")
_MAX_DEPTH = 50  # nesting beyond this is left as written (the parser's deadline handles what remains)
_INTEGER_LITERAL = re.compile(r"(?<![\w.])0(?:[xX][0-9a-fA-F]+|[bB][01]+|[oO][0-7]+)(?![\w.])")
_TEXT_OR_PRIME = re.compile(r"\\text\w*\s*\{[^{}]*\}|(?<=[A-Za-z0-9)}\]])(?:'|\u2032)+")


def to_parseable_latex(answer: str) -> str:
    """``answer`` with brace-less arguments braced, Python syntax as LaTeX, integer literals in decimal, primes kept."""
    text = _INTEGER_LITERAL.sub(lambda literal: str(int(literal.group(), 0)), answer) if "0" in answer else answer
    text = _braced_arguments(_python_to_latex(text))
    return _TEXT_OR_PRIME.sub(_prime, text) if "\\" in text or "'" in text or "\u2032" in text else text


def _prime(match: re.Match[str]) -> str:
    token = match.group()
    return token if token.startswith("\\") else "^{" + "\\prime" * len(token) + "}"


# ----- \frac and \sqrt arguments, as TeX reads them -----------------------------------------------------


def _braced_arguments(text: str, depth: int = 0) -> str:
    """Every argument of ``\\frac`` (two) and ``\\sqrt`` (one, after an optional ``[n]``) in braces."""
    if depth > _MAX_DEPTH:
        return text
    out: list[str] = []
    i = 0
    while i < len(text):
        if text[i] != "\\":  # no command starts here: copied up to the next backslash at once
            j = text.find("\\", i)
            j = len(text) if j < 0 else j
            out.append(text[i:j])
            i = j
            continue
        command = _FRAC_OR_SQRT.match(text, i)
        if command is None:
            j = i + 2 if text.startswith("\\\\", i) else i + 1  # copy "\\" (a line break) as one piece
            out.append(text[i:j])
            i = j
            continue
        out.append(command.group())
        i = command.end()
        if command.group() == "\\sqrt":
            j = _skip_spaces(text, i)
            close = text.find("]", j) if text.startswith("[", j) else -1
            if close >= 0:
                out.append(text[j : close + 1])
                i = close + 1
        for _ in range(2 if command.group() == "\\frac" else 1):
            argument, i = _argument(text, _skip_spaces(text, i), depth)
            if argument is None:
                break
            out.append("{" + argument + "}")
    return "".join(out)


def _argument(text: str, i: int, depth: int) -> tuple[str | None, int]:
    """The argument starting at ``i`` (a braced group, a control word or one character) and where it ends."""
    if i >= len(text) or text[i] in "}]^_&":
        return None, i
    if text[i] == "{":
        close = _matching(text, i, "{", "}")
        if close is None:
            return None, i
        return _braced_arguments(text[i + 1 : close], depth + 1), close + 1
    word = _CONTROL_WORD.match(text, i)
    if word is not None:
        return word.group(), word.end()
    return text[i], i + 1


def _skip_spaces(text: str, i: int) -> int:
    while i < len(text) and text[i] in " \t\n":
        i += 1
    return i


def _matching(text: str, i: int, opening: str, closing: str) -> int | None:
    depth = 0
    for j in range(i, len(text)):
        if text[j] == opening:
            depth += 1
        elif text[j] == closing:
            depth -= 1
            if depth == 0:
                return j
    return None


# ----- Python / sympy syntax ---------------------------------------------------------------------------


def _python_to_latex(text: str) -> str:
    """``3*z**2 + sqrt(x+1)`` -> ``3 \\cdot z^{2} + \\sqrt{x+1}``; texts without Python syntax are unchanged."""
    if "*" not in text and "(" not in text and "pi" not in text and "oo" not in text:
        return text
    text = _calls(text)
    text = _powers(text)
    text = _TIMES.sub(r" \\cdot ", text)
    return _PYTHON_CONSTANT.sub(lambda constant: "\\pi " if constant.group() == "pi" else "\\infty ", text)


def _calls(text: str, depth: int = 0) -> str:
    """``sqrt(...)`` -> ``\\sqrt{...}``, ``exp(...)`` -> ``e^{...}``, ``abs(...)`` -> ``|...|``,
    ``Rational(1, 3)`` -> ``\\frac{1}{3}``, ``sin(`` -> ``\\sin(``."""
    if depth > _MAX_DEPTH:
        return text
    out: list[str] = []
    i = 0
    for call in _FUNCTION_CALL.finditer(text):
        if call.start() < i:  # inside a call already rewritten (its arguments were converted recursively)
            continue
        close = _matching(text, call.end() - 1, "(", ")")
        if close is None:
            continue
        name, inner = call.group(1), _calls(text[call.end() : close], depth + 1)
        out.append(text[i : call.start()])
        if name == "sqrt":
            out.append("\\sqrt{" + inner + "}")
        elif name == "exp":
            out.append("e^{" + inner + "}")
        elif name in ("abs", "Abs"):
            out.append("\\left|" + inner + "\\right|")
        elif name == "Rational" and inner.count(",") == 1:
            numerator, denominator = inner.split(",")
            out.append("\\frac{" + numerator.strip() + "}{" + denominator.strip() + "}")
        else:
            out.append("\\" + name + "(" + inner + ")")
        i = close + 1
    out.append(text[i:])
    return "".join(out)


def _powers(text: str, depth: int = 0) -> str:
    """``x**(n+1)`` -> ``x^{(n+1)}``, ``2**-1`` -> ``2^{-1}``: the operand after ``**`` in braces."""
    if depth > _MAX_DEPTH:
        return text
    out: list[str] = []
    i = 0
    for power in _POWER.finditer(text):
        if power.start() < i:
            continue
        out.append(text[i : power.start()])
        j = _skip_spaces(text, power.end())
        sign = text[j] if j < len(text) and text[j] in "+-" else ""
        j = _skip_spaces(text, j + len(sign))
        if j < len(text) and text[j] == "(":
            close = _matching(text, j, "(", ")")
            end = len(text) if close is None else close + 1
        else:
            operand = _OPERAND.match(text, j)
            end = j if operand is None else operand.end()
        out.append("^{" + sign + _powers(text[j:end], depth + 1) + "}")
        i = end
    out.append(text[i:])
    return "".join(out)
