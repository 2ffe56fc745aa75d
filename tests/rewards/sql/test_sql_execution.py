"""``sql_execution`` on generated databases: every rewrite of a gold query scores 1.0, every wrong query
(filters, joins, order, aggregates, NULL handling) 0.0, on one database and on several (test-suite
accuracy); an empty gold abstains; the red team (writes, ATTACH, extensions, PRAGMA, runaway joins and
recursion, several statements) scores 0 and leaves the database as it was."""

from __future__ import annotations

import random
import sqlite3
from pathlib import Path

import pytest

import rewardhub
from rewardhub.rewards.sql import extract_query, orders_rows

SCHEMA = """
CREATE TABLE customer(id INTEGER PRIMARY KEY, name TEXT NOT NULL, city TEXT, vip INTEGER);
CREATE TABLE product(id INTEGER PRIMARY KEY, title TEXT NOT NULL, price REAL NOT NULL, category TEXT);
CREATE TABLE orders(id INTEGER PRIMARY KEY, customer_id INTEGER REFERENCES customer(id),
                    product_id INTEGER REFERENCES product(id), quantity INTEGER NOT NULL, day TEXT NOT NULL);
"""
CITIES = ["Oslo", "Lima", "Pune", None]
CATEGORIES = ["book", "tool", "toy", None]


def database(seed: int) -> str:
    """An SQL script building a small shop whose data depends on ``seed`` (NULLs, customers without orders)."""
    rng = random.Random(seed)
    lines = [SCHEMA]
    for i in range(1, 13):
        city, vip = rng.choice(CITIES), rng.choice([0, 1, None])
        lines.append(f"INSERT INTO customer VALUES ({i}, 'c{i}', {_sql(city)}, {_sql(vip)});")
    for i in range(1, 9):
        lines.append(f"INSERT INTO product VALUES ({i}, 'p{i}', {rng.randint(1, 40) + rng.choice([0, 0.25, 0.5])}, "
                     f"{_sql(rng.choice(CATEGORIES))});")
    for i in range(1, 41):
        lines.append(f"INSERT INTO orders VALUES ({i}, {rng.randint(1, 10)}, {rng.randint(1, 8)}, {rng.randint(1, 5)}, "
                     f"'2024-0{rng.randint(1, 3)}-{rng.randint(10, 28)}');")
    return "\n".join(lines)


def _sql(value):
    return "NULL" if value is None else repr(value) if isinstance(value, str) else str(value)


# gold -> (equivalent rewrites, wrong queries)
PAIRS = {
    "SELECT name FROM customer WHERE city = 'Oslo'": (
        ["SELECT c.name FROM customer AS c WHERE c.city IN ('Oslo')",
         "SELECT name FROM customer WHERE city = 'Oslo' ORDER BY id DESC",
         "SELECT name FROM (SELECT * FROM customer) WHERE city LIKE 'oslo'"],
        ["SELECT name FROM customer WHERE city = 'Lima'",
         "SELECT name FROM customer WHERE city <> 'Oslo'",
         "SELECT DISTINCT city FROM customer WHERE city = 'Oslo'"],
    ),
    "SELECT c.name, SUM(o.quantity * p.price) FROM customer c JOIN orders o ON o.customer_id = c.id "
    "JOIN product p ON p.id = o.product_id GROUP BY c.id ORDER BY 2 DESC, c.id": (
        ["SELECT name, total FROM (SELECT c.id, c.name, SUM(o.quantity * p.price) AS total FROM orders o, customer c, "
         "product p WHERE o.customer_id = c.id AND p.id = o.product_id GROUP BY c.id) ORDER BY total DESC, id"],
        ["SELECT c.name, SUM(o.quantity * p.price) FROM customer c JOIN orders o ON o.customer_id = c.id JOIN product p "
         "ON p.id = o.product_id GROUP BY c.id ORDER BY 2, c.id",
         "SELECT c.name, SUM(p.price) FROM customer c JOIN orders o ON o.customer_id = c.id JOIN product p "
         "ON p.id = o.product_id GROUP BY c.id ORDER BY 2 DESC, c.id",
         "SELECT c.name, SUM(o.quantity * p.price) FROM customer c LEFT JOIN orders o ON o.customer_id = c.id "
         "LEFT JOIN product p ON p.id = o.product_id GROUP BY c.id ORDER BY 2 DESC, c.id"],
    ),
    "SELECT c.name FROM customer c LEFT JOIN orders o ON o.customer_id = c.id WHERE o.id IS NULL": (
        ["SELECT name FROM customer WHERE id NOT IN (SELECT customer_id FROM orders WHERE customer_id IS NOT NULL)",
         "SELECT name FROM customer c WHERE NOT EXISTS (SELECT 1 FROM orders o WHERE o.customer_id = c.id)",
         "SELECT name FROM customer EXCEPT SELECT c.name FROM customer c JOIN orders o ON o.customer_id = c.id"],
        ["SELECT c.name FROM customer c JOIN orders o ON o.customer_id = c.id WHERE o.id IS NULL",
         "SELECT DISTINCT c.name FROM customer c JOIN orders o ON o.customer_id = c.id",
         "SELECT name FROM customer WHERE id NOT IN (SELECT product_id FROM orders)"],
    ),
    "SELECT COUNT(*) FROM customer WHERE vip IS NULL": (
        ["SELECT COUNT(id) FROM customer WHERE vip IS NULL",
         "SELECT SUM(CASE WHEN vip IS NULL THEN 1 ELSE 0 END) FROM customer",
         "SELECT COUNT(*) - COUNT(vip) FROM customer"],
        ["SELECT COUNT(*) FROM customer WHERE vip = NULL",
         "SELECT COUNT(vip) FROM customer",
         "SELECT COUNT(*) FROM customer WHERE vip = 0"],
    ),
    "SELECT category, COUNT(*), AVG(price) FROM product GROUP BY category": (
        ["SELECT category, COUNT(id), SUM(price) / COUNT(*) FROM product GROUP BY category",
         "SELECT category, COUNT(*), AVG(price) FROM product GROUP BY category ORDER BY category DESC"],
        ["SELECT category, COUNT(category), AVG(price) FROM product GROUP BY category",
         "SELECT category, COUNT(*), AVG(price) FROM product WHERE category IS NOT NULL GROUP BY category",
         "SELECT category, COUNT(*), MAX(price) FROM product GROUP BY category"],
    ),
    "SELECT day, SUM(quantity) FROM orders WHERE day >= '2024-02-01' GROUP BY day ORDER BY day LIMIT 5": (
        ["SELECT day, TOTAL(quantity) FROM orders WHERE day > '2024-01-31' GROUP BY 1 ORDER BY 1 ASC LIMIT 5"],
        ["SELECT day, SUM(quantity) FROM orders WHERE day >= '2024-02-01' GROUP BY day ORDER BY day DESC LIMIT 5",
         "SELECT day, SUM(quantity) FROM orders WHERE day >= '2024-02-01' GROUP BY day ORDER BY day LIMIT 4",
         "SELECT day, SUM(quantity) FROM orders GROUP BY day ORDER BY day LIMIT 5"],
    ),
}
RED_TEAM = [
    "DELETE FROM customer",
    "UPDATE product SET price = 0",
    "INSERT INTO customer VALUES (99, 'x', 'Oslo', 1)",
    "DROP TABLE orders",
    "CREATE TABLE t(x)",
    "ATTACH DATABASE '/tmp/rewardhub-attack.db' AS evil",
    "ATTACH DATABASE ':memory:' AS evil",
    "PRAGMA query_only = OFF",
    "PRAGMA writable_schema = ON",
    "SELECT load_extension('/usr/lib/x86_64-linux-gnu/libsqlite3.so.0')",
    "SELECT name FROM customer; DELETE FROM customer",
    "BEGIN IMMEDIATE",
    "VACUUM INTO '/tmp/rewardhub-attack.db'",
    "SELECT COUNT(*) FROM orders a, orders b, orders c, orders d, orders e, orders f, orders g",
    "WITH RECURSIVE n(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM n) SELECT x FROM n",
    "WITH RECURSIVE n(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM n) SELECT COUNT(*) FROM n",
    "SELECT length(randomblob(1000000000))",
]
DATABASES = [database(seed) for seed in (1, 2, 3)]


def _scores(completions, golds, db, **params):
    reward = rewardhub.get("sql_execution", timeout=2.0, max_rows=5000, **params)
    result = reward.evaluate(["p"] * len(completions), completions, solution=golds, db=[db] * len(completions))
    return result.scores


def _suite():
    completions, golds, expected = [], [], []
    for gold, (rewrites, wrong) in PAIRS.items():
        for query, value in [(q, 1.0) for q in [gold, *rewrites]] + [(q, 0.0) for q in wrong]:
            completions.append(f"The query:\n```sql\n{query};\n```")
            golds.append(gold)
            expected.append(value)
    return completions, golds, expected


@pytest.mark.parametrize("dbs", [DATABASES[0], DATABASES], ids=["one database", "three databases"])
def test_rewrites_score_one_and_wrong_queries_zero(dbs):
    completions, golds, expected = _suite()
    scores = _scores(completions, golds, dbs)
    got = [score.value for score in scores]
    wrong = [(c, s.reason) for c, s, e in zip(completions, scores, expected, strict=True) if s.value != e]
    assert got == expected, wrong


def test_empty_gold_abstains_on_one_database_and_counts_on_several():
    gold = "SELECT name FROM customer WHERE city = 'Pune' AND vip = 1"
    empty_somewhere = [db for db in DATABASES if not _rows(db, gold)]
    assert empty_somewhere, "the data must make the gold empty on some database"
    wrong = "SELECT name FROM customer WHERE city = 'Nowhere'"
    alone = _scores([wrong], [gold], empty_somewhere[0])[0]
    assert alone.value is None and alone.outcome == "abstain" and "no rows" in alone.reason
    several = _scores([wrong, gold], [gold, gold], DATABASES)
    assert [s.value for s in several] == [0.0, 1.0]


def test_red_team_scores_zero_and_leaves_the_database_unchanged(tmp_path):
    path = tmp_path / "shop.sqlite"
    with sqlite3.connect(path) as connection:
        connection.executescript(DATABASES[0])
    before = path.read_bytes()
    gold = "SELECT name FROM customer ORDER BY id"
    for db in (DATABASES[0], str(path)):
        scores = _scores(RED_TEAM + [gold], [gold] * (len(RED_TEAM) + 1), db)
        assert [s.value for s in scores] == [0.0] * len(RED_TEAM) + [1.0], [(q, s.reason) for q, s in zip(RED_TEAM, scores[:-1], strict=True)]
    assert path.read_bytes() == before
    assert not Path("/tmp/rewardhub-attack.db").exists()


def test_bad_rows_abstain_with_reasons_and_the_others_score():
    gold = "SELECT name FROM customer"
    scores = rewardhub.get("sql_execution").evaluate(
        ["p"] * 4, ["SELECT name FROM customer"] * 4, solution=[gold, gold, "SELEC x", gold],
        db=[DATABASES[0], "/nowhere/shop.sqlite", DATABASES[0], "CREATE TABLE broken("]).scores
    assert scores[0].value == 1.0
    assert scores[1].value is None and "not found" in scores[1].reason
    assert scores[2].value is None and scores[2].reason.startswith("gold failed")
    assert scores[3].value is None and scores[3].reason.startswith("database failed")


def test_query_extraction_and_order_detection():
    assert extract_query("text\n```sql\nSELECT 1;\n```\nmore\n```sql\nSELECT 2;\n```") == "SELECT 2"
    assert extract_query("SELECT 3;") == "SELECT 3"
    assert orders_rows("SELECT a FROM t ORDER BY a")
    assert not orders_rows("SELECT a FROM (SELECT a FROM t ORDER BY a LIMIT 3)")
    assert orders_rows("SELECT a FROM t UNION SELECT b FROM u ORDER BY 1")


def _rows(db: str, query: str) -> list:
    connection = sqlite3.connect(":memory:")
    connection.executescript(db)
    return connection.execute(query).fetchall()
