"""``sql_execution`` throughput vs sqlite3 directly, same run.

Rows: a gold query and a candidate (half rewrites, half wrong) on one of ``--databases`` generated shop
databases given as SQL scripts, as a text-to-SQL batch has them. Baselines, in this process: ``naive``
builds the database from its script per row and runs both queries (no limits, no read-only guard: a
candidate's ``DELETE`` would change what the next query sees); ``copy`` builds each database once and
runs both queries on a fresh in-memory copy per row (``deserialize``), still unguarded. The reward runs
the same rows with every guard (authorizer, query_only, time/row/heap limits) in ``--workers``
deadline-killed worker processes. Rounds alternate; medians are reported, with how many verdicts
match the rows' labels.
Run: python -m bench.sql [--rows 400] [--databases 4] [--workers 2] [--rounds 3]
"""

from __future__ import annotations

import argparse
import random
import sqlite3
import statistics
import time
from collections import Counter

import rewardhub

QUERIES = [  # (gold, rewrite, wrong)
    ("SELECT name FROM customer WHERE city = 'Oslo'", "SELECT c.name FROM customer c WHERE c.city IN ('Oslo')",
     "SELECT name FROM customer WHERE city <> 'Oslo'"),
    ("SELECT c.name, COUNT(o.id) FROM customer c LEFT JOIN orders o ON o.customer_id = c.id GROUP BY c.id ORDER BY c.id",
     "SELECT name, (SELECT COUNT(*) FROM orders WHERE customer_id = customer.id) FROM customer ORDER BY id",
     "SELECT c.name, COUNT(*) FROM customer c LEFT JOIN orders o ON o.customer_id = c.id GROUP BY c.id ORDER BY c.id"),
    ("SELECT category, AVG(price) FROM product GROUP BY category", "SELECT category, SUM(price) / COUNT(*) FROM product GROUP BY 1",
     "SELECT category, AVG(price) FROM product WHERE category IS NOT NULL GROUP BY category"),
    ("SELECT COUNT(*) FROM customer WHERE vip IS NULL", "SELECT COUNT(*) - COUNT(vip) FROM customer",
     "SELECT COUNT(*) FROM customer WHERE vip = NULL"),
]


def database(seed: int) -> str:
    rng = random.Random(seed)
    lines = ["CREATE TABLE customer(id INTEGER PRIMARY KEY, name TEXT, city TEXT, vip INTEGER);",
             "CREATE TABLE product(id INTEGER PRIMARY KEY, title TEXT, price REAL, category TEXT);",
             "CREATE TABLE orders(id INTEGER PRIMARY KEY, customer_id INTEGER, product_id INTEGER, quantity INTEGER);"]
    city, category = ["'Oslo'", "'Lima'", "'Pune'", "NULL"], ["'a'", "'b'", "NULL"]
    lines += [f"INSERT INTO customer VALUES ({i}, 'c{i}', {rng.choice(city)}, {rng.choice(['0', '1', 'NULL'])});"
              for i in range(1, 201)]
    lines += [f"INSERT INTO product VALUES ({i}, 'p{i}', {rng.randint(1, 90) + 0.5}, {rng.choice(category)});"
              for i in range(1, 51)]
    lines += [f"INSERT INTO orders VALUES ({i}, {rng.randint(1, 150)}, {rng.randint(1, 50)}, {rng.randint(1, 5)});"
              for i in range(1, 1001)]
    return "\n".join(lines)


def make_rows(n: int, databases: int, seed: int = 0) -> list[tuple[str, str, str, bool]]:
    """(database script, gold, candidate, whether the candidate is right)."""
    rng = random.Random(seed)
    scripts = [database(s) for s in range(databases)]
    rows = []
    for i in range(n):
        gold, rewrite, wrong = QUERIES[i % len(QUERIES)]
        right = rng.random() < 0.5
        rows.append((scripts[i % databases], gold, rewrite if right else wrong, right))
    return rows


def naive(rows: list[tuple[str, str, str, bool]]) -> list[float]:
    scores = []
    for script, gold, candidate, _ in rows:
        connection = sqlite3.connect(":memory:")
        connection.executescript(script)
        same = Counter(connection.execute(gold).fetchall()) == Counter(connection.execute(candidate).fetchall())
        scores.append(float(same))
        connection.close()
    return scores


def copied(rows: list[tuple[str, str, str, bool]]) -> list[float]:
    built: dict[str, bytes] = {}
    scores = []
    for script, gold, candidate, _ in rows:
        if script not in built:
            builder = sqlite3.connect(":memory:")
            builder.executescript(script)
            built[script] = builder.serialize()
            builder.close()
        connection = sqlite3.connect(":memory:")
        connection.deserialize(built[script])
        same = Counter(connection.execute(gold).fetchall()) == Counter(connection.execute(candidate).fetchall())
        scores.append(float(same))
        connection.close()
    return scores


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rows", type=int, default=400)
    parser.add_argument("--databases", type=int, default=4)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    rows = make_rows(args.rows, args.databases)
    reward = rewardhub.get("sql_execution", workers=args.workers)
    columns = {"solution": [r[1] for r in rows], "db": [r[0] for r in rows]}
    completions = [f"```sql\n{r[2]}\n```" for r in rows]
    reward.evaluate(["p"] * 4, completions[:4], solution=columns["solution"][:4], db=columns["db"][:4])  # workers up
    expected = [float(r[3]) for r in rows]
    rates: dict[str, list[float]] = {"sqlite3, database built per row": [], "sqlite3, fresh copy per row": [],
                                     "sql_execution (guarded, workers)": []}
    agree: dict[str, int] = {}
    for _ in range(args.rounds):
        for name in rates:
            start = time.perf_counter()
            if name.startswith("sql_execution"):
                got = reward.evaluate(["p"] * len(rows), completions, **columns).values
            else:
                got = (naive if "built" in name else copied)(rows)
            rates[name].append(len(rows) / (time.perf_counter() - start))
            agree[name] = sum(a == b for a, b in zip(got, expected, strict=True))
    base = statistics.median(rates["sqlite3, database built per row"])
    print(f"{args.rows} rows, {args.databases} databases (200 customers, 50 of them without orders; 50 products; 1,000 orders each)\n")
    print("| executor | rows/s | vs built per row | verdicts right |")
    print("|---|---|---|---|")
    for name, values in rates.items():
        print(f"| {name} | {statistics.median(values):.0f} | {statistics.median(values) / base:.2f}x "
              f"| {agree[name]}/{len(rows)} |")


if __name__ == "__main__":
    main()
