"""Judge templates: built-in rubrics, inline strings or files, rendered with a row's fields.

A template is text with ``{prompt}``, ``{completion}``, ``{reference}`` (the reference column) and
any other column as ``{name}``; literal braces are written ``{{`` and ``}}``. For an agent's episode,
``{episode}`` shows every message with its tool calls and results, and ``{env_state}`` the
environment's final state (the built-in ``trajectory`` template uses both).
"""

from __future__ import annotations

import string
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rewardhub import Row
from rewardhub.completions import is_conversational, message_text

from .delimit import RESPONSE_MARKERS, defused, template_headers, template_tags
from .episode_text import episode_text, state_text
from .errors import JudgeConfigError, JudgeInputError

__all__ = [
    "BUILTIN",
    "CUSTOM",
    "EPISODE_FIELDS",
    "JudgeTemplate",
    "Rubric",
    "SHOWS_COMPLETION",
    "prompt_text",
]


@dataclass(frozen=True)
class Rubric:
    """A built-in template with the parsing mode and score range it asks the judge for."""

    file: str
    parse: str
    low: float
    high: float


BUILTIN = {
    "pointwise": Rubric("pointwise.txt", "number", 0.0, 10.0),
    "binary": Rubric("binary.txt", "yes_no", 0.0, 1.0),
    "trajectory": Rubric("trajectory.txt", "number", 0.0, 10.0),  # an agent's episode (mode ``trajectory``)
    # the judge modes' defaults (rewards/judge/modes.py, ranking.py)
    "label": Rubric("label.txt", "auto", 0.0, 1.0),
    "criterion": Rubric("criterion.txt", "yes_no", 0.0, 1.0),
    "pairwise": Rubric("pairwise.txt", "auto", 0.0, 1.0),
    "groupwise": Rubric("groupwise.txt", "auto", 0.0, 1.0),
    "verify": Rubric("verify.txt", "auto", 0.0, 1.0),  # A correct / B incorrect / C invalid (mode ``verify``)
    "ruler": Rubric("ruler.txt", "auto", 0.0, 1.0),
}
# A template that must show the judge the completion may show the agent's whole episode instead.
SHOWS_COMPLETION = ("completion", "episode")
# Fields that show one completion's own episode: a group mode's template, which shows several, cannot.
EPISODE_FIELDS = ("episode", "env_state")
CUSTOM = Rubric("", "auto", 0.0, 10.0)


@dataclass(frozen=True)
class JudgeTemplate:
    """A validated template and the rubric defaults that go with it."""

    text: str
    origin: str
    fields: tuple[str, ...]
    rubric: Rubric
    tags: frozenset[str] = frozenset()  # the template's own tags, neutralised in completions (delimit.py)
    headers: frozenset[str] = RESPONSE_MARKERS  # the template's section names, neutralised in completions

    @classmethod
    def load(cls, spec: str, required: str = "completion") -> JudgeTemplate:
        """A built-in name (``pointwise``, ``binary``, ...), a path to a text file, or inline template text;
        ``required``: the field it must show the judge."""
        if spec in BUILTIN:
            from importlib import resources

            rubric = BUILTIN[spec]
            text = (resources.files("rewardhub.rewards.judge") / "templates" / rubric.file).read_text(encoding="utf-8")
            return cls.parse(text, f"built-in template {spec!r}", rubric, required)
        if "{" not in spec and "\n" not in spec:
            path = Path(spec).expanduser()
            if not path.is_file():
                raise JudgeConfigError(
                    f"judge template {spec!r} is not a built-in template ({', '.join(BUILTIN)}), not an existing "
                    f"file, and not inline template text (inline templates contain {{{required}}})"
                )
            return cls.parse(path.read_text(encoding="utf-8"), f"template file {str(path)!r}", CUSTOM, required)
        return cls.parse(spec, "inline template", CUSTOM, required)

    @classmethod
    def parse(cls, text: str, origin: str, rubric: Rubric, required: str = "completion") -> JudgeTemplate:
        try:
            parts = list(string.Formatter().parse(text))
        except ValueError as exc:
            raise JudgeConfigError(f"{origin} is not a valid template ({exc}); write literal braces as {{{{ }}}}") from None
        fields = []
        for _, name, spec, conversion in parts:
            if name is None:
                continue
            if not name.isidentifier() or spec or conversion:
                raise JudgeConfigError(
                    f"{origin} has field {{{name}}}: fields must be plain column names like {{completion}}; "
                    f"write literal braces as {{{{ }}}}"
                )
            fields.append(name)
        shown = SHOWS_COMPLETION if required == "completion" else (required,)
        if not any(name in fields for name in shown):
            hint = " (or {episode} for an agent's whole episode)" if required == "completion" else ""
            raise JudgeConfigError(f"{origin} never shows the judge the {required}: add {{{required}}}{hint}")
        return cls(text, origin, tuple(dict.fromkeys(fields)), rubric, template_tags(text), template_headers(text))

    def render(self, row: Row, reference_column: str, extra: dict[str, str] | None = None) -> str:
        """The template filled with this row's prompt, completion text, reference and columns; ``extra``
        fills fields that are no column (a rubric's criterion, a group's completions)."""
        extra = extra or {}
        values = {name: extra[name] if name in extra else self._value(row, name, reference_column) for name in self.fields}
        return self.text.format_map(values)

    def shown(self, completion: str) -> str:
        """A completion as the judge sees it: read canonically, unable to forge this template's sections or tags."""
        return defused(completion, self.tags, self.headers)

    def _value(self, row: Row, name: str, reference_column: str) -> str:
        if name == "completion":
            return self.shown(row.text or "")
        if name == "episode":
            return episode_text(row["messages"][_prompt_length(row.prompt):], self.tags, self.headers)
        if name == "env_state":
            return state_text(row["env_state"], self.tags, self.headers)
        if name == "prompt":
            if row.prompt is None:
                raise JudgeInputError("the judge template shows {prompt} but the row has no prompt")
            return prompt_text(row.prompt)
        return _text(row[reference_column if name == "reference" else name])


def _prompt_length(prompt: Any) -> int:
    """How many of ``messages`` are the prompt's (shown as ``{prompt}``, not again in ``{episode}``)."""
    if is_conversational(prompt):
        return len(prompt)
    return 1 if isinstance(prompt, str) else 0


def prompt_text(prompt: Any) -> str:
    """A prompt as plain text: the string, a lone message's content, or role-labelled messages."""
    if is_conversational(prompt):
        if len(prompt) == 1:
            return message_text(prompt[0])
        return "\n\n".join(f"{m['role']}: {message_text(m)}" for m in prompt)
    return _text(prompt)


def _text(value: Any) -> str:
    return value if isinstance(value, str) else str(value)
