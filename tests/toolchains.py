"""The sandbox languages beyond Python and C, as test parameters skipped (saying which package to install)
where this machine lacks the toolchain; ``scripts/setup.sh`` installs them."""

from __future__ import annotations

import pytest

from rewardhub.sandbox.languages import toolchain_problem

COMPILED = ("java", "go", "rust", "javascript")


def languages(*names: str) -> list:
    """``pytest.param`` per language (all of ``COMPILED`` by default), skipped where its toolchain is missing."""
    return [pytest.param(name, marks=pytest.mark.skipif(toolchain_problem(name) is not None,
                                                        reason=toolchain_problem(name) or ""))
            for name in names or COMPILED]


DOUBLE = {  # per language, a program that prints twice the number on its stdin
    "java": ("import java.util.*;\npublic class Main { public static void main(String[] a) { "
             "System.out.println(2 * new Scanner(System.in).nextLong()); } }"),
    "go": "package main\n\nimport \"fmt\"\n\nfunc main() {\n\tvar n int64\n\tfmt.Scan(&n)\n\tfmt.Println(2 * n)\n}\n",
    "rust": ("fn main() { let mut s = String::new(); std::io::stdin().read_line(&mut s).unwrap(); "
             "println!(\"{}\", 2 * s.trim().parse::<i64>().unwrap()); }"),
    "javascript": "console.log(2 * Number(require('fs').readFileSync(0, 'utf8')));",
}
