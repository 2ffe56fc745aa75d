"""format_regex and tag_count: presets, user patterns, flags, bad patterns, the length cap, partial credit."""

import pytest

import rewardhub
from rewardhub import ConfigError
from rewardhub.rewards.format_regex import PRESETS
from rewardhub.testing import check_contract

MB = 1_000_000
GOOD = "<think>\nadd them\n</think>\n<answer>\n10\n</answer>"


def chat(text):
    return [{"role": "assistant", "content": text}]


@pytest.mark.parametrize(
    ("preset", "text", "value"),
    [
        ("think_answer", "<think>a</think><answer>b</answer>", 1.0),
        ("think_answer", " <think>a\nb</think>\n\n<answer>1</answer>\n", 1.0),
        ("think_answer", GOOD, 1.0),
        ("think_answer", "<think>a</think>", 0.0),
        ("think_answer", "<think>a</think><answer>b</answer> trailing", 0.0),
        ("think_answer", "<think></think><answer>b</answer>", 0.0),  # empty blocks earn nothing
        ("think_answer", "<think>a</think><answer> \n</answer>", 0.0),
        ("think_answer", "<think>a</think><answer>b</answer><answer>c</answer>", 0.0),
        ("think_answer", "<answer>b</answer><think>a</think>", 0.0),
        ("think_answer_newlines", GOOD, 1.0),
        ("think_answer_newlines", "<think>a</think>\n<answer>\nb\n</answer>", 0.0),
        ("think_answer_newlines", "<think>\n\n</think>\n<answer>\nb\n</answer>", 0.0),
        ("think", "<think>reasoning</think> The answer is 4.", 1.0),
        ("think", "<think>reasoning</think>  \n", 0.0),
        ("think", "<think>a</think> b <think>c</think> d", 0.0),
        ("think", "no tags", 0.0),
        ("answer", " <answer>5</answer> ", 1.0),
        ("answer", "text <answer>5</answer>", 0.0),
        ("boxed", r"so \boxed{\frac{1}{2}} ok", 1.0),
        ("boxed", r"\boxed{7}", 1.0),
        ("boxed", r"\boxed{", 0.0),
        ("boxed", "no box", 0.0),
    ],
)
def test_presets(preset, text, value):
    reward = rewardhub.get("format_regex", preset=preset)
    assert reward(None, [text, chat(text)]) == [value, value]
    score = reward.evaluate(None, [text]).scores[0]
    assert score.verdict is (value == 1.0)
    assert score.reason == (f"matches preset {preset!r}" if value else f"no {PRESETS[preset].mode} of preset {preset!r}")


def test_default_is_think_answer():
    assert rewardhub.get("format_regex")(None, [GOOD, "plain"]) == [1.0, 0.0]


@pytest.mark.parametrize(
    ("params", "text", "value"),
    [
        ({"pattern": r"\d+"}, "123", 1.0),
        ({"pattern": r"\d+"}, "123 apples", 0.0),
        ({"pattern": r"\d+", "mode": "search"}, "123 apples", 1.0),
        ({"pattern": r"\d+", "mode": "match"}, "123 apples", 1.0),
        ({"pattern": r"\d+", "mode": "match"}, "apples 123", 0.0),
        ({"pattern": "a.b"}, "a\nb", 0.0),
        ({"pattern": "a.b", "flags": ["DOTALL"]}, "a\nb", 1.0),
        ({"pattern": "ab", "flags": ["ignorecase"]}, "AB", 1.0),
        ({"pattern": "^b$", "mode": "search", "flags": "M|I"}, "a\nB\nc", 1.0),
        ({"pattern": "^b$", "mode": "search"}, "a\nb\nc", 0.0),
    ],
)
def test_user_patterns_modes_and_flags(params, text, value):
    assert rewardhub.get("format_regex", **params)(None, [text]) == [value]


@pytest.mark.parametrize(
    ("params", "message"),
    [
        ({"pattern": "(unclosed"}, r"invalid regex pattern '\(unclosed': missing \), unterminated subpattern"),
        ({"pattern": "a", "flags": ["DOTAL"]}, "unknown regex flag 'DOTAL'"),
        ({"pattern": "a", "mode": "find"}, "mode must be one of fullmatch, match, search"),
        ({"preset": "xml"}, "unknown preset 'xml'; presets: think_answer"),
        ({"preset": "think", "pattern": "a"}, "either pattern or preset"),
        ({"preset": "think", "mode": "search"}, "sets its own mode and flags"),
        ({"pattern": "a", "max_chars": 0}, "max_chars"),
    ],
)
def test_config_errors(params, message):
    with pytest.raises(ConfigError, match=message):
        rewardhub.get("format_regex", **params)


def test_bad_pattern_in_a_config_names_the_entry():
    with pytest.raises(ConfigError, match=r"reward entry 'fmt': invalid regex pattern '\[a-'"):
        rewardhub.load([{"name": "format_regex", "alias": "fmt", "params": {"pattern": "[a-"}}])


def test_max_chars_abstains_on_long_texts():
    reward = rewardhub.get("format_regex", pattern="(a|aa)*b", max_chars=1000)  # exponential on "aaa...c"
    result = reward.evaluate(None, ["a" * 5000 + "c", "aab", "ab" * 600])
    assert result.values == [None, 1.0, None]
    assert result.reasons[0] == "not checked: 5001 chars > max_chars 1000"


@pytest.mark.parametrize("preset", list(PRESETS))
def test_presets_are_linear_on_one_megabyte(preset):
    reward = rewardhub.get("format_regex", preset=preset, max_chars=2 * MB)
    texts = [
        "</think><answer>" * (MB // 16),
        "<think>" + "</think><answer>" * (MB // 16),
        "<think>a</think>" + "<answer>x</answer>" * (MB // 18),
        "<think>a</think>" + " " * MB,
        "<think>a</think>" + "x" * MB + "<think>",
        "\\boxed{" * (MB // 7),
        "\\boxed{" + "a" * MB,
        "<think>" + "a" * MB + "</think><answer>1</answer>",
    ]
    matching = {"think_answer": {7}, "think": {2, 7}}.get(preset, set())
    assert reward(None, texts) == [1.0 if i in matching else 0.0 for i in range(len(texts))]


def test_default_cap_abstains_on_a_megabyte():
    result = rewardhub.get("format_regex").evaluate(None, ["x" * MB])
    assert result.values == [None] and "max_chars 100000" in result.reasons[0]


def test_bad_rows_and_load():
    rewards = rewardhub.load({"rewards": [
        {"name": "format_regex", "weight": 0.5},
        {"name": "format_regex", "alias": "digits", "params": {"pattern": r"\d+"}},
    ]})
    scored = rewards.score([
        {"prompt": "p", "completion": GOOD},
        {"prompt": "p", "completion": 5},
        {"prompt": "p", "completion": chat("42")},
        {"prompt": "p", "completion": ""},
    ])
    assert [r["rewards"] for r in scored] == [
        {"format_regex": 1.0, "digits": 0.0},
        {"format_regex": None, "digits": None},
        {"format_regex": 0.0, "digits": 1.0},
        {"format_regex": 0.0, "digits": 0.0},
    ]
    assert [r["reward"] for r in scored] == [0.5, 0.0, 1.0, 0.0]  # the abstaining row counts at its group's floor


def test_format_regex_contract_kit():
    check_contract(rewardhub.get("format_regex"), correct_completion=GOOD)


@pytest.mark.parametrize(
    ("text", "value", "reason"),
    [
        (GOOD, 1.0, "all tags once, in order"),
        ("<think>a</think>", 0.5, "<answer> missing; </answer> missing"),
        ("<think></think><answer>1</answer>", 0.75, "no content between <think> and </think>"),
        ("</think>x<think><answer>1</answer>", 0.75, "</think> not after <think>"),
        ("<think>a</think><think>b</think><answer>1</answer>", 0.5,
         "<think> appears 2 times; </think> appears 2 times"),
        ("<answer>1</answer>", 0.5, "<think> missing; </think> missing"),
        ("", 0.0, "<think> missing; </think> missing; <answer> missing; </answer> missing"),
    ],
)
def test_tag_count(text, value, reason):
    reward = rewardhub.get("tag_count")
    for form in (text, chat(text)):
        score = reward.evaluate(None, [form]).scores[0]
        assert (score.value, score.reason, score.verdict) == (value, reason, value == 1.0)


def test_tag_count_custom_tags_and_errors():
    reward = rewardhub.get("tag_count", tags=["reasoning", "code"])
    assert reward(None, ["<reasoning>r</reasoning><code>c</code>", "<reasoning>r</reasoning>"]) == [1.0, 0.5]
    for tags, message in (([], "non-empty list"), ("think", "expected list or null, got str"), (["<think>"], "bare words")):
        with pytest.raises(ConfigError, match=message):
            rewardhub.get("tag_count", tags=tags)


def test_tag_count_one_megabyte_and_contract():
    values = rewardhub.get("tag_count")(None, ["<think>" * (MB // 7), "<think>a</think><answer>" + "x" * MB + "</answer>"])
    assert values == [0.0, 1.0]
    check_contract(rewardhub.get("tag_count"), correct_completion=GOOD)


# ----- invisible and look-alike characters (issue 33, item 4): what a person sees decides ----------------------
ZWSP, WJ, SHY, HANGUL_FILLER, BRAILLE_BLANK = "\u200b", "\u2060", "\u00ad", "\u3164", "\u2800"


@pytest.mark.parametrize("blank", [ZWSP, WJ, SHY, ZWSP * 50, f" {ZWSP}\n{WJ} ", HANGUL_FILLER, BRAILLE_BLANK,
                                   "\u200c\u200d\ufeff", "\u2028", "\u3000"])
@pytest.mark.parametrize("where", ["think", "answer"])
def test_a_block_holding_only_invisible_characters_is_empty(blank, where):
    think = blank if where == "think" else "add them"
    answer = blank if where == "answer" else "10"
    text = f"<think>{think}</think>\n<answer>{answer}</answer>"
    for preset in ("think_answer", "think_answer_newlines"):
        assert rewardhub.get("format_regex", preset=preset)([None], [text]) == [0.0]
    assert rewardhub.get("format_regex", preset="answer")([None], [f"<answer>{blank}</answer>"]) == [0.0]
    assert rewardhub.get("tag_count")([None], [text]) == [0.75]  # the empty block's closing half is not earned


def test_line_separators_are_line_breaks_and_honest_unicode_stays_right():
    for separator in ("\u2028", "\u2029", "\u0085", "\r\n", "\r"):
        text = f"<think>{separator}add{separator}</think>{separator}<answer>{separator}10{separator}</answer>"
        assert rewardhub.get("format_regex", preset="think_answer_newlines")([None], [text]) == [1.0]
    honest = "<think>Сложим: 3 + 7 = 10 — 答え</think>\n<answer>10 ✓</answer>"
    assert rewardhub.get("format_regex")([None], [honest]) == [1.0]
    assert rewardhub.get("tag_count")([None], [honest]) == [1.0]
    assert rewardhub.get("tag_count")([None], [f"<think>a{ZWSP}b</think><answer>1</answer>"]) == [1.0]
