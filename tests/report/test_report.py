"""The HTML report as users get it: written from a scored file with several rewards, checked section by
section against numbers worked out from the data, run through the real CLI, and opened in headless
Chromium to see that the charts render.
"""

import base64
import io
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
from html.parser import HTMLParser
from pathlib import Path

import pytest
from PIL import Image

from rewardhub.report import write_report

RH = str(Path(sys.executable).with_name("rewardhub"))
HACK = "<script>alert('pwned')</script> The answer is 42."
WEIGHTS = {"math": 1.0, "format": 0.5, "judge": 1.0}
ERROR = "error: ConnectionError: endpoint <down>"
TIMEOUT = "timeout after 5 s"
# (prompt, completion, math, format, judge, judge reason); None = the reward abstained.
DATA = [
    ("P0", "c0: 4", 1.0, 1.0, 0.9, "clear"),
    ("P0", "c1: 4", 1.0, 1.0, 0.8, "fine"),
    ("P0", "c2: 4", 1.0, 1.0, 0.7, "fine"),
    ("P0", "c3: 4", 1.0, 1.0, 0.6, "terse"),
    ("P1", "c4: 9", 1.0, 1.0, 0.2, "unconvincing"),
    ("P1", "c5: 8", 0.0, 0.0, None, ERROR),
    ("P1", "c6: 8", 0.0, 1.0, None, TIMEOUT),
    ("P1", "c7: ?", None, 1.0, 0.3, "vague"),
    ("P2", HACK, 0.0, 1.0, 1.0, "very convincing"),
    ("P2", [{"role": "assistant", "content": "I think 7"}], 0.0, 1.0, 0.1, "wrong"),
    ("P2", "c10: 7", 0.0, 1.0, 0.1, "wrong"),
    ("P2", "c11: 7", 0.0, 1.0, 0.1, "wrong: answer says the request timed out"),  # an ok score, not a timeout
]
OUTCOMES = {ERROR: "error", TIMEOUT: "timeout"}  # set by the reward, never read from the reason
SECONDS = {"math": 0.002, "format": 0.0001, "judge": 0.25}


def scored_rows():
    rows = []
    for prompt, completion, math, fmt, judge, judge_reason in DATA:
        values = {"math": math, "format": fmt, "judge": judge}
        parts = [WEIGHTS[name] * v for name, v in values.items() if v is not None]
        reasons = {
            "math": "no \\boxed answer" if math is None else ("correct" if math else "expected 4"),
            "format": "ok" if fmt else "no <think> block",
            "judge": judge_reason,
        }
        outcomes = {name: "ok" if v is not None else "abstain" for name, v in values.items()}
        outcomes["judge"] = OUTCOMES.get(judge_reason, outcomes["judge"])
        rows.append({
            "prompt": prompt, "completion": completion, "solution": "4", "rewards": values,
            "reward": sum(parts) if parts else None, "reasons": reasons, "outcomes": outcomes, "seconds": SECONDS,
        })
    return rows


TRAINER_STATE = {
    "global_step": 30,
    "log_history": [
        {"step": s, "rewards/math/mean": m, "rewards/judge/mean": j, "reward": m + j, "frac_reward_zero_std": f}
        for s, m, j, f in [(10, 0.25, 0.5, 0.6), (20, 0.5, 0.55, 0.4), (30, 0.75, 0.6, 0.2)]
    ],
}


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    folder = tmp_path_factory.mktemp("report")
    scored = folder / "scored.jsonl"
    scored.write_text("".join(json.dumps(r) + "\n" for r in scored_rows()) + "{broken\n")
    state = folder / "trainer_state.json"
    state.write_text(json.dumps(TRAINER_STATE))
    return folder, scored, state


@pytest.fixture(scope="module")
def report(files):
    folder, scored, state = files
    path = write_report(scored, folder / "out" / "report.html", trainer_state=state, title="Run <b>1</b>")
    return path, path.read_text(encoding="utf-8")


class Page(HTMLParser):
    """Text and tables of each ``<section id=...>`` of the report."""

    def __init__(self, markup: str):
        super().__init__()
        self.text: dict[str, list[str]] = {}
        self.tables: dict[str, list[list[list[str]]]] = {}
        self.images: list[str] = []
        self.section = None
        self.cell = None
        self.feed(markup)

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if tag == "section":
            self.section = attrs["id"]
            self.text[self.section], self.tables[self.section] = [], []
        elif tag == "table":
            self.tables[self.section].append([])
        elif tag == "tr":
            self.tables[self.section][-1].append([])
        elif tag in ("td", "th"):
            self.cell = []
        elif tag == "img":
            self.images.append(attrs["src"])

    def handle_endtag(self, tag):
        if tag in ("td", "th"):
            self.tables[self.section][-1][-1].append(" ".join("".join(self.cell).split()))
            self.cell = None

    def handle_data(self, data):
        if self.section:
            self.text[self.section].append(data)
        if self.cell is not None:
            self.cell.append(data)

    def section_text(self, section: str) -> str:
        return " ".join(" ".join(self.text[section]).split())

    def row(self, section: str, first_cell: str, table: int = 0) -> list[str]:
        return next(r for r in self.tables[section][table] if r[0] == first_cell)


def column(name):
    index = {"math": 2, "format": 3, "judge": 4}[name]
    return [d[index] for d in DATA]


def totals():
    return [r["reward"] for r in scored_rows()]


def test_report_has_every_section_and_is_self_contained(report):
    _, markup = report
    page = Page(markup)
    assert list(page.text) == ["overview", "rewards", "spread", "agreement", "extremes", "training"]
    assert "<title>Run &lt;b&gt;1&lt;/b&gt;</title>" in markup
    # charts: 3 rewards + total distributions, speed, spread, correlation, training
    assert len(page.images) == 8
    for src in page.images:
        assert src.startswith("data:image/png;base64,")
        image = Image.open(io.BytesIO(base64.b64decode(src.split(",", 1)[1])))
        assert image.format == "PNG" and image.width >= 300 and image.height >= 150
    assert not re.findall(r'(?:src|href)="(?!data:|#)', markup), "the page must not load anything"
    assert "<script" not in markup.lower()


def test_overview_numbers_match_the_data(report):
    page = Page(report[1])
    overview = page.section_text("overview")
    assert "12 scored completions of 3 prompts" in overview and "3 × 4" in overview
    assert "1 input rows skipped" in overview and "line 13: invalid JSON" in overview
    for name in WEIGHTS:
        values = [v for v in column(name) if v is not None]
        row = page.row("overview", name)
        assert row[1] == f"{WEIGHTS[name]:.3f}"  # solved from the totals: the scored file has no weights
        assert row[2] == f"{statistics.fmean(values):.3f}"
        assert row[3] == f"{statistics.pstdev(values):.3f}"
        assert (row[4], row[5]) == (f"{min(values):.3f}", f"{max(values):.3f}")
        none = len(DATA) - len(values)
        assert row[6] == f"{100 * none / len(DATA):.1f}% ({none})"
    assert page.row("overview", "judge")[7:10] == ["1", "1", "250 ms"]
    assert page.row("overview", "math")[7:10] == ["0", "0", "2 ms"]
    # flat groups: math is constant on P0 and P2, format on P0 and P2, judge and the total nowhere
    assert [page.row("overview", n)[10] for n in ("math", "format", "judge")] == ["66.7%", "66.7%", "0.0%"]
    total = page.row("overview", "reward (weighted total)")
    assert total[1] == "—" and total[2] == f"{statistics.fmean(totals()):.3f}" and total[10] == "0.0%"
    assert "weights: solved from the totals" in overview


def test_per_reward_cards_group_none_reasons_and_failures(report):
    page = Page(report[1])
    text = page.section_text("rewards")
    assert "None 16.7% (2) · errors 1 · timeouts 1 · 250 ms per completion" in text
    why_none_judge = page.tables["rewards"][1]  # math's card has one table, judge's "Why None" comes next
    assert why_none_judge[1:] == [
        ["1", ERROR, ERROR],
        ["1", "timeout after # s", TIMEOUT],
    ]
    assert page.tables["rewards"][0][1:] == [["1", "no \\boxed answer", "no \\boxed answer"]]
    assert "endpoint &lt;down&gt;" in report[1]


def test_spread_section_counts_groups(report):
    page = Page(report[1])
    assert page.row("spread", "math") == ["math", "3", "2", "66.7%", "0.157"]  # P1 std of (1, 0, 0)
    assert page.row("spread", "judge")[:4] == ["judge", "3", "0", "0.0%"]
    assert page.row("spread", "reward (weighted total)")[:4] == ["reward (weighted total)", "3", "0", "0.0%"]


def pairs_of(text: str) -> dict[str, str]:
    """The agreement section's text per "a vs b" heading."""
    parts = re.split(r"(\S+ vs \S+) \(", text)
    return dict(zip(parts[1::2], parts[2::2], strict=True))


def test_agreement_shows_the_planted_disagreement_with_reasons_escaped(report):
    page = Page(report[1])
    pairs = pairs_of(page.section_text("agreement"))
    assert set(pairs) == {"math vs format", "math vs judge", "format vs judge"}
    # math vs judge: the hack (math 0, judge at its maximum) is the largest gap, then c4 (1 vs 0.2)
    pair = pairs["math vs judge"]
    assert "gap 1.00" in pair and "math = 0.000 (0% of its range) expected 4" in pair
    assert "judge = 1.000 (100% of its range) very convincing" in pair
    assert HACK in pair  # shown as text...
    assert "&lt;script&gt;alert(&#x27;pwned&#x27;)&lt;/script&gt;" in report[1]  # ...because it is escaped
    assert "gap 0.89" in pair and pair.index(HACK) < pair.index("c4: 9")
    shared = [(m, j) for m, j in zip(column("math"), column("judge"), strict=True) if None not in (m, j)]
    expected = statistics.correlation(*zip(*shared, strict=True))
    assert pair.startswith(f"r = {expected:.2f} over {len(shared)} rows")


def test_top_and_bottom_completions(report):
    page = Page(report[1])
    text = page.section_text("extremes")
    ranked = sorted(range(len(DATA)), key=lambda i: (-totals()[i], i))
    top_first, bottom_first = ranked[0], ranked[-1]
    assert text.index(f"total {totals()[top_first]:.3f} · line {top_first + 1}") < text.index("Bottom 5")
    assert text.index(f"total {totals()[bottom_first]:.3f} · line {bottom_first + 1}") > text.index("Bottom 5")
    assert "assistant: I think 7" in text  # chat completions are shown as text
    bottom_table = page.tables["extremes"][5]  # tables: 5 top rows, then the bottom rows
    assert bottom_table[1:] == [
        ["math", "0.000", "expected 4"],
        ["format", "0.000", "no <think> block"],
        ["judge", "None", ERROR],
    ]


def test_training_section_from_trainer_state(report):
    page = Page(report[1])
    assert page.tables["training"][0][1:] == [["math", "3", "0.250", "0.750"], ["judge", "3", "0.500", "0.600"]]


def test_report_without_trainer_state_or_with_empty_logs(files, tmp_path):
    _, scored, _ = files
    plain = Page(write_report(scored_rows(), tmp_path / "a.html").read_text())
    assert "training" not in plain.text
    empty = write_report(scored_rows(), tmp_path / "b.html", trainer_state={"log_history": [{"loss": 1.0}]})
    assert "has no rewards/<name>/mean" in Page(empty.read_text()).section_text("training")


def test_cli_writes_the_report_and_reports_bad_input(files, tmp_path):
    _, scored, state = files
    out = tmp_path / "cli.html"
    done = subprocess.run([RH, "report", str(scored), "-o", str(out), "--trainer-state", str(state)],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert f"wrote {out}" in done.stderr
    assert "<title>Reward report: scored.jsonl</title>" in out.read_text()
    bad = subprocess.run([RH, "report", str(scored), "-o", str(out), "--trainer-state", str(tmp_path / "no.json")],
                         capture_output=True, text=True, timeout=120)
    assert bad.returncode == 2 and "trainer state not found" in bad.stderr


def chromium() -> str:
    """The Chromium binary; installed with apt-get where missing (CI installs it up front)."""
    found = shutil.which("chromium") or shutil.which("chromium-browser")
    if found:
        return found
    if not shutil.which("apt-get") or os.geteuid() != 0:
        pytest.skip("chromium is not installed and cannot be installed here (needs root + apt-get): "
                    "run `apt-get install -y chromium`")
    install = ["apt-get", "install", "-y", "chromium"]
    result = subprocess.run(install, capture_output=True, text=True, timeout=900)
    if result.returncode != 0:  # stale package lists: refresh once and retry
        subprocess.run(["apt-get", "update"], capture_output=True, timeout=900)
        result = subprocess.run(install, capture_output=True, text=True, timeout=900)
    found = shutil.which("chromium")
    if not found:
        pytest.skip(f"`apt-get install -y chromium` failed: {result.stderr[-500:]}")
    return found


def test_report_renders_in_headless_chromium(report, tmp_path):
    path, _ = report
    shot = tmp_path / "shot.png"
    command = [
        chromium(), "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
        "--disable-background-networking", "--disable-component-update", "--disable-sync",
        f"--user-data-dir={tmp_path / 'profile'}", f"--screenshot={shot}", "--window-size=1280,2000",
        path.resolve().as_uri(),
    ]
    done = subprocess.run(command, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0 and shot.exists(), done.stderr[-2000:]
    image = Image.open(shot).convert("RGB")
    assert image.size == (1280, 2000)
    colours = image.getcolors(maxcolors=1 << 24)  # [(count, (r, g, b)), ...]
    assert len(colours) > 200, "the screenshot is (nearly) blank"
    # The chart bars use the report's primary colour, which nothing else on the page uses: many such
    # pixels mean the embedded PNG charts were decoded and drawn.
    bars = sum(n for n, (r, g, b) in colours if abs(r - 0x3B) < 12 and abs(g - 0x6F) < 12 and abs(b - 0xB6) < 12)
    assert bars > 20_000


def test_report_from_parquet_matches_jsonl(tmp_path):
    from rewardhub._files.output import write_rows

    rows = [r for r in scored_rows() if isinstance(r["completion"], str)]
    write_rows(rows, tmp_path / "scored.parquet")
    page = Page(write_report(tmp_path / "scored.parquet", tmp_path / "p.html").read_text())
    judge = [v for r in rows if (v := r["rewards"]["judge"]) is not None]
    assert page.row("overview", "judge")[2] == f"{statistics.fmean(judge):.3f}"
    assert "11 scored completions of 3 prompts" in page.section_text("overview")


def test_reward_names_with_dollar_signs_are_plain_text_in_charts(tmp_path):
    """matplotlib reads text between two '$' as mathtext: an alias like 'cost$\\x$' must not break or
    restyle the charts (the aliases come from user configs and TRL logs)."""
    names = ["cost$\\foo$", "a$b$"]
    rows = [
        {"prompt": f"p{p}", "completion": f"c{c}", "reward": float(c),
         "rewards": {names[0]: float(c), names[1]: float((c + p) % 2)}}
        for p in range(3) for c in range(3)
    ]
    state = {"log_history": [{"step": 1, f"rewards/{names[0]}/mean": 0.5}, {"step": 2, f"rewards/{names[0]}/mean": 0.7}]}
    out = write_report(rows, tmp_path / "dollars.html", trainer_state=state)
    page = out.read_text(encoding="utf-8")
    assert "cost$\\foo$" in page and "a$b$" in page
    assert page.count("data:image/png;base64,") >= 5  # per-reward and total distributions, spread, correlation, training
