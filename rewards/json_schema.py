"""The ``json_schema`` reward: the completion is one strict JSON document that validates against a schema.

The document is the completion itself (after a closed ``<think>`` block), the content of its
``<answer>`` tag, or its single fenced code block (```` ```json ... ``` ```` or ``~~~``, closed by a fence
of the same kind; prose around a fence is fine). Several fenced blocks (of either kind), or JSON
inside prose without a fence, do not count: which of them would be the answer? Nor does a fence (or
tag) beside JSON written in the prose, valid or not (``{"a": 1`` next to a fenced ``{"a": 2}``).
(``allow_prose: true`` accepts one JSON value inside prose, when it is the only ``{`` / ``[`` value there.)
The JSON is strict (RFC 8259): ``NaN``, ``Infinity`` and duplicate keys are refused, as any other
parser but Python's would refuse them (and a duplicate key hides one of two values from the validator).
Line breaks are read canonically (``\r``, U+2028, ... are line breaks for the fences); the document's
characters are validated as written: it is data for a program, so ``"ye\u200bs"`` is not ``"yes"``.
The schema comes from the row (column ``schema``) or from params; it is validated with ``jsonschema``
under the draft it declares (2020-12 by default), formats checked. With ``partial_credit`` an object
that fails scores the share of its fields that are valid.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any

from rewardhub import ConfigError, Reward, RewardInputError, Row, Score, hookimpl

from .deps import require

__all__ = [
    "JsonSchema",
    "MAX_CANDIDATES",
    "MAX_CHARS",
    "STRICT",
    "SchemaRowError",
    "fenced_blocks",
    "field_share",
    "find_document",
    "register_rewards",
    "strict_json",
]

_THINK_END = "</think>"
MAX_CHARS = 1_000_000
MAX_CANDIDATES = 1000  # JSON starts tried inside prose (each failed start costs a parse)


class SchemaRowError(RewardInputError):
    """A row's schema is missing or is not a valid JSON Schema."""


class JsonSchema(Reward):
    """1.0 when the completion's JSON document validates against the row's (or the params') schema."""

    name = "json_schema"
    description = "1.0 if the completion (or its fenced block / answer tag) is JSON valid under the schema"

    def __init__(
        self,
        *,
        schema: dict | str | None = None,
        schema_column: str = "schema",
        partial_credit: bool = False,
        allow_prose: bool = False,
        check_formats: bool = True,
        on_error: str = "none",
    ):
        super().__init__(on_error=on_error)
        require(self.name, "schema", "jsonschema")
        self.schema_column = schema_column
        self.partial_credit = partial_credit
        self.allow_prose = allow_prose
        self.check_formats = check_formats
        self._validators: dict[str, Any] = {}
        self.schema = None
        if schema is not None:
            try:
                self.schema = _schema(schema)
                self._validator(self.schema)
            except SchemaRowError as exc:
                raise ConfigError(f"json_schema: the schema in params is not usable: {exc}") from None

    def score_sample(self, text: str, row: Row) -> Score:
        schema = self.schema if self.schema is not None else _schema(row[self.schema_column])
        validator = self._validator(schema)
        found = find_document(text, self.allow_prose)
        if isinstance(found, str):
            return Score(0.0, found, False)
        document, where = found
        try:
            errors = sorted(validator.iter_errors(document), key=lambda e: list(e.absolute_path))
        except RecursionError:
            return Score(0.0, f"the JSON {where} is nested too deeply to validate", False)
        if not errors:
            return Score(1.0, f"valid JSON {where}", True)
        summary = "; ".join(_describe(e) for e in errors[:3]) + (f"; +{len(errors) - 3} more" if len(errors) > 3 else "")
        value = field_share(schema, document, errors) if self.partial_credit else 0.0
        return Score(value, f"JSON {where} fails the schema: {summary}", False)

    def _validator(self, schema: dict) -> Any:
        """A validator for ``schema`` (checked once; cached by the schema's text)."""
        key = json.dumps(schema, sort_keys=True, default=str)
        validator = self._validators.get(key)
        if validator is None:
            import jsonschema
            from jsonschema.validators import validator_for

            cls = validator_for(schema, default=jsonschema.Draft202012Validator)
            try:
                cls.check_schema(schema)
            except jsonschema.SchemaError as exc:
                raise SchemaRowError(f"not a valid JSON Schema: {exc.message}") from None
            validator = cls(schema, format_checker=cls.FORMAT_CHECKER if self.check_formats else None)
            if len(self._validators) > 256:
                self._validators.clear()
            self._validators[key] = validator
        return validator

    def __getstate__(self) -> dict[str, Any]:
        return {**self.__dict__, "_validators": {}}


def _schema(value: Any) -> dict:
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except ValueError as exc:
            raise SchemaRowError(f"the schema is text that is not JSON: {exc}") from None
    if isinstance(value, bool):
        return value  # type: ignore[return-value]  # true / false are schemas too
    if not isinstance(value, Mapping):
        raise SchemaRowError(f"the schema must be a JSON object; got {type(value).__name__}")
    return dict(value)


def find_document(text: str, allow_prose: bool = False) -> tuple[Any, str] | str:
    """The completion's JSON document and where it was found, or why there is none."""
    if _THINK_END in text:
        text = text.rsplit(_THINK_END, 1)[1]
    if len(text) > MAX_CHARS:
        return f"the completion is longer than {MAX_CHARS} characters"
    close = text.rfind("</answer>")
    start = text.rfind("<answer>", 0, close) if close != -1 else -1
    if start != -1:
        tagged = text[start + len("<answer>") : close]
        beside = _json_in_prose(text[:start] + " " + text[close + len("</answer>") :])
        if beside:
            return f"JSON {beside} outside the <answer> tag too: which one is the answer?"
        fences, prose = _fences(tagged)
        if len(fences) == 1 and not _json_in_prose(prose):  # <answer>```json ... ```</answer>
            return _parsed(fences[0].strip(), "in the fenced block of the <answer> tag")
        if len(fences) > 1:
            return f"{len(fences)} fenced blocks in the <answer> tag: which one is the answer?"
        return _parsed(tagged.strip(), "in the <answer> tag")
    fences, prose = _fences(text)
    if len(fences) > 1:
        return f"{len(fences)} fenced blocks: which one is the answer?"
    if fences:
        beside = _json_in_prose(prose)
        if beside:
            return f"JSON {beside} in the prose beside the fenced block: which one is the answer?"
        return _parsed(fences[0].strip(), "in the fenced block")
    stripped = text.strip()
    parsed = _parsed(stripped, "(the whole completion)")
    if isinstance(parsed, str) and allow_prose:
        return _embedded(stripped)
    if isinstance(parsed, str):
        return parsed + "; JSON inside prose belongs in a fenced block"
    return parsed


_BREAKS = "\r\n\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029"  # what str.splitlines ends a line at
_FENCE = re.compile(r"[ \t]{0,3}(`{3,}|~{3,})")
# JSON written in prose: an object that opens with a key or closes at once, an array of objects or strings.
_PROSE_JSON = re.compile(r"\{\s*(?:\"|\})|\[\s*(?:\{|\"|\[)")


def fenced_blocks(text: str) -> list[str]:
    """The contents of closed fenced blocks (a line opening with ```` ``` ```` or ``~~~``, closed by a line
    of only the same character, at least as many), in one pass; an unclosed last block (a truncated
    answer) is none."""
    return _fences(text)[0]


def _fences(text: str) -> tuple[list[str], str]:
    """The closed fenced blocks' contents and the text outside them (an unclosed block counts as outside).
    Any line break ends a line (``\\r``, U+2028, ...); a block's content is its text as written."""
    if "```" not in text and "~~~" not in text:
        return [], text
    blocks, outside = [], []
    opener, content_start, outside_start, last_end, at = "", -1, 0, 0, 0
    for line in text.splitlines(keepends=True):
        start, at = at, at + len(line)
        body = line.rstrip(_BREAKS)
        if content_start < 0:
            fence = _FENCE.match(body)
            if fence:
                outside.append(text[outside_start:start])
                opener, content_start, outside_start = fence.group(1), at, start
        elif body.strip() and set(body.strip()) == {opener[0]} and len(body.strip()) >= len(opener):
            blocks.append(text[content_start : max(last_end, content_start)])
            content_start, outside_start = -1, at
        last_end = start + len(body)
    outside.append(text[outside_start:])
    return blocks, "\n".join(outside)


def _json_in_prose(prose: str) -> str | None:
    """What in ``prose`` reads as JSON (an object opening with a key, an array of objects, strings or
    arrays), else ``None``."""
    if "{" not in prose and "[" not in prose:
        return None
    found = _PROSE_JSON.search(prose)
    if found is not None:
        return f"({_short(prose[found.start() : found.start() + 40])!r})"
    return None


def _short(text: str) -> str:
    return " ".join(text.split())


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON (RFC 8259 has no NaN or Infinity)")


def _unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    document = dict(pairs)
    if len(document) != len(pairs):
        seen: set[str] = set()
        for key, _ in pairs:
            if key in seen:
                raise ValueError(f"duplicate key {key!r} (which of its values would the schema check?)")
            seen.add(key)
    return document


STRICT = json.JSONDecoder(parse_constant=_reject_constant, object_pairs_hook=_unique_keys)


def strict_json(text: str) -> Any:
    """``text`` as one strict JSON value (RFC 8259: no NaN / Infinity, no duplicate keys)."""
    value, end = STRICT.raw_decode(text, len(text) - len(text.lstrip(_JSON_SPACE)))
    if text[end:].strip(_JSON_SPACE):
        raise ValueError(f"extra data after the JSON value at character {end}")
    return value


_JSON_SPACE = " \t\n\r"


def _parsed(candidate: str, where: str) -> tuple[Any, str] | str:
    try:
        return strict_json(candidate), where
    except RecursionError:
        return f"the JSON {where} is nested too deeply"
    except ValueError as exc:
        return f"invalid JSON {where}: {exc}"


def _embedded(text: str) -> tuple[Any, str] | str:
    """The one JSON object or array inside prose; none or several (valid or not) is no answer."""
    starts = [i for i, ch in enumerate(text) if ch in "{["]
    documents, broken, end, tried = [], 0, -1, 0
    for start in starts:
        if start < end:
            continue  # inside the value just read
        tried += 1
        if tried > MAX_CANDIDATES:
            return f"more than {MAX_CANDIDATES} places where JSON could start: no single answer"
        try:
            value, end = STRICT.raw_decode(text, start)
        except (ValueError, RecursionError):
            broken += 1
            continue
        documents.append(value)
    if len(documents) == 1 and not broken:
        return documents[0], "in the prose"
    if not documents:
        return "no JSON object in the completion"
    return f"{len(documents)} JSON values and {broken} broken ones in the prose: which one is the answer?"


def field_share(schema: Any, document: Any, errors: list[Any]) -> float:
    """The share of an object's fields with no error. The fields are the schema's: its required ones and
    the document's keys it names (``properties``, ``patternProperties``); keys it does not name earn
    nothing (unless they break ``additionalProperties``, then they count as failed), so padding an
    object with extra keys cannot dilute its errors, and an empty object earns nothing."""
    if not isinstance(schema, Mapping) or not isinstance(document, Mapping):
        return 0.0
    fields = set(schema.get("required", [])) | {key for key in document if _named(schema, key)}
    failed = set()
    for error in errors:
        if error.absolute_path:
            failed.add(error.absolute_path[0])
        elif error.validator == "required":
            failed |= {name for name in error.validator_value if name not in document}
        elif error.validator == "additionalProperties":
            allowed = set(schema.get("properties", {}))
            failed |= {key for key in document if key not in allowed}
        else:
            return 0.0  # the object as a whole fails (type, minProperties, ...): no field is right
    fields |= failed & set(document)  # keys the schema forbids count, as failed
    if not fields:
        return 0.0
    return max(0.0, 1 - len(failed & fields) / len(fields))


def _named(schema: Mapping[str, Any], key: str) -> bool:
    """Whether the schema names ``key``: in ``properties`` or matching a ``patternProperties`` pattern."""
    if key in (schema.get("properties") or {}):
        return True
    for pattern in schema.get("patternProperties") or {}:
        try:
            if re.search(pattern, key):
                return True
        except re.error:
            continue
    return False


def _describe(error: Any) -> str:
    path = "/".join(str(p) for p in error.absolute_path)
    message = error.message if len(error.message) <= 120 else error.message[:117] + "..."
    return f"{path or '(root)'}: {message}"


@hookimpl
def register_rewards(register):
    register(JsonSchema)
