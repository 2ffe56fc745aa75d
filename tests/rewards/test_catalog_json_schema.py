"""``json_schema`` red team (issue 33): strict JSON and one answer block. Each gamed text scores 0; the
honest forms keep their credit."""

from __future__ import annotations

import pytest

import rewardhub
from rewardhub.rewards.json_schema import fenced_blocks, find_document, strict_json

SCHEMA = {"type": "object", "properties": {"name": {"type": "string"}, "age": {"type": "number", "minimum": 0}},
          "required": ["name", "age"], "additionalProperties": False}
OK = '{"name": "Ada", "age": 36}'
GAMED = [
    '{"name": "Ada", "age": NaN}', '{"name": "Ada", "age": Infinity}', '{"name": "Ada", "age": -Infinity}',
    '```json\n{"name": "Ada", "age": NaN}\n```',
    '{"name": "Ada", "age": -1, "age": 36}', '{"name": 5, "name": "Ada", "age": 36}',
    '```json\n{"name": "Ada", "age": 36, "age": "x"}\n```',
    '~~~\n{"name": 5}\n~~~\n```json\n' + OK + '\n```', '```json\n' + OK + '\n```\n~~~json\n{"name": 5}\n~~~',
    '~~~json\n{"name": 5}\n```\n' + OK + '\n```\n~~~',  # one ~~~ block holding a ``` line: invalid JSON
    'Here: {"name": "Ada", "age": -5}\n```json\n' + OK + '\n```', '{"name": 1\n```json\n' + OK + '\n```',
    'Either [{"name": "Bob"}] or\n```json\n' + OK + '\n```', '```json\n' + OK + '\n```\nor {"name": "Bob", "age": 1}',
    '<answer>' + OK + '</answer> or {"name": "Bob", "age": 2}', '{"name": "Bob", "age": 2}\n<answer>' + OK + '</answer>',
    '\u200b' + OK, '｛"name": "Ada", "age": 36｝', OK + '\u200b{"name": "Bob"}', OK + ' ' + OK,
]
HONEST = [
    OK, '```json\n' + OK + '\n```', '~~~json\n' + OK + '\n~~~', '````\n' + OK + '\n````',
    'Here is the record [1]:\n```json\n' + OK + '\n```\nIt has {name, age} fields.', '<answer>' + OK + '</answer>',
    '```json\r\n' + OK + '\r\n```', '```json\u2028' + OK + '\u2028```', '  \n' + OK + '\n  ',
    '{"name": "Ada\u2028Lovelace", "age": 36}',  # a raw U+2028 is allowed inside a JSON string
]


@pytest.mark.parametrize("text", GAMED)
def test_gamed_documents_score_zero(text):
    result = rewardhub.get("json_schema", schema=SCHEMA).evaluate([""], [text])
    assert result.values == [0.0], result.reasons


@pytest.mark.parametrize("text", HONEST)
def test_honest_documents_keep_their_credit(text):
    result = rewardhub.get("json_schema", schema=SCHEMA).evaluate([""], [text])
    assert result.values == [1.0], result.reasons


def test_strict_json_and_the_reasons():
    with pytest.raises(ValueError, match="NaN"):
        strict_json('{"a": NaN}')
    with pytest.raises(ValueError, match="duplicate key 'a'"):
        strict_json('{"a": 1, "b": {"a": 2, "a": 3}}')
    assert strict_json(' [1, {"a": 1}] ') == [1, {"a": 1}]
    assert "2 fenced blocks" in find_document("~~~\n{}\n~~~\n```\n{}\n```")
    assert "beside the fenced block" in find_document('{"a": 1\n```\n{}\n```')
    assert fenced_blocks("~~~\n```\n~~~\n````\nx\n```\n````") == ["```", "x\n```"]


def test_prose_mode_refuses_nan_and_duplicates_too():
    reward = rewardhub.get("json_schema", schema=SCHEMA, allow_prose=True)
    result = reward.evaluate([""] * 3, ['The record: {"name": "Ada", "age": NaN}.',
                                        'The record: {"name": "Ada", "age": 1, "age": 36}.', f"The record: {OK}."])
    assert result.values == [0.0, 0.0, 1.0], result.reasons
