"""Regenerate demo.jsonl: GSM8K-style prompts, 4 sampled-looking completions each, varied formats."""

import json
import random
from pathlib import Path

PROBLEMS = [
    ("Tom has 3 boxes of 12 pencils. He gives away 9 pencils. How many are left?", "27"),
    ("A train travels 60 km/h for 2.5 hours. How far does it go, in km?", "150"),
    ("What is 15% of 240?", "36"),
    ("Simplify 6/8 as a fraction in lowest terms.", "\\frac{3}{4}"),
    ("A rectangle is 7 cm by 9 cm. What is its area in square cm?", "63"),
    ("Solve for x: 2x + 5 = 17.", "6"),
    ("What is the sum of the first 10 positive integers?", "55"),
    ("A shirt costs $40 and is discounted by 25%. What is the new price in dollars?", "30"),
    ("How many minutes are in 3.5 hours?", "210"),
    ("What is 2^10?", "1024"),
    ("What is the square root of 144?", "12"),
    ("Sara reads 25 pages a day. How many pages does she read in 2 weeks?", "350"),
]


def completions(answer: str, rng: random.Random) -> list[str]:
    wrong = str(int(answer) + rng.choice([-2, -1, 1, 3])) if answer.isdigit() else "\\frac{2}{3}"
    return [
        f"<think>Let me work it out step by step. The result is {answer}.</think>\n<answer>{answer}</answer>",
        f"<think>Careful arithmetic gives {wrong}.</think>\n<answer>{wrong}</answer>",
        f"We compute carefully and get the final answer \\boxed{{{answer}}}.",
        rng.choice([
            "I think the answer is hard to say. " * 6,
            f"<think>hmm</think> The answer is {wrong}.",
            f"#### {answer}",
            f"<think></think>\n<answer>{answer}, {wrong}</answer>",
        ]),
    ]


def main() -> None:
    rng = random.Random(7)
    rows = []
    for question, answer in PROBLEMS:
        for completion in completions(answer, rng):
            rows.append({"prompt": question, "completion": completion, "solution": answer})
    out = Path(__file__).with_name("demo.jsonl")
    out.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    print(f"wrote {len(rows)} rows to {out}")


if __name__ == "__main__":
    main()
