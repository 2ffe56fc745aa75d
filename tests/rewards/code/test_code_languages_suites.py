"""Per-language suites for ``code``: ten problems (stdin/stdout and call-based), each with a canonical solution
in Java, Go, Rust and JavaScript that must score 1.0 and a broken variant (one edit: an off-by-one, a wrong
operator, a missed case) that must score 0.0. One batch per language: every program compiles once."""

from __future__ import annotations

import pytest
from toolchains import languages

import rewardhub
from rewardhub.sandbox.local import isolation_problem

pytestmark = pytest.mark.skipif(isolation_problem() is not None, reason=f"no local isolation: {isolation_problem()}")


def io(*pairs):
    return [{"input": stdin, "output": stdout} for stdin, stdout in pairs]


def call(name, *cases):
    return {"fn_name": name, "inputs": [args for args, _ in cases], "outputs": [value for _, value in cases]}


TESTS = {
    "sum": io(("3\n1 2 3\n", "6\n"), ("4\n-5 10 20 7\n", "32\n"), ("1\n1000000000000\n", "1000000000000\n")),
    "max": io(("3\n1 9 3\n", "9\n"), ("2\n-5 -10\n", "-5\n"), ("1\n7\n", "7\n")),
    "reverse": io(("hello\n", "olleh\n"), ("ab\n", "ba\n")),
    "fizzbuzz": io(("5\n", "1\n2\nFizz\n4\nBuzz\n"), ("15\n", "1\n2\nFizz\n4\nBuzz\nFizz\n7\n8\nFizz\nBuzz\n11\nFizz\n13\n14\nFizzBuzz\n")),
    "primes": io(("10\n", "4\n"), ("2\n", "1\n"), ("100\n", "25\n")),
    "fib": call("fib", ([0], 0), ([1], 1), ([10], 55), ([50], 12586269025)),
    "palindrome": call("isPalindrome", (["racecar"], True), (["ab"], False), ([""], True), (["abca"], False)),
    "sorted": call("sortDesc", ([[3, 1, 2]], [3, 2, 1]), ([[]], []), ([[5, -1, 5]], [5, 5, -1])),
    "gcd": call("gcd", ([12, 18], 6), ([7, 5], 1), ([0, 9], 9)),
    "count": call("countAbove", ([[1, 5, 7, 2], 3], 2), ([[], 0], 0), ([[4, 4, 4], 4], 0), ([[1, 2, 3, 4, 5, 6], 2], 4)),
}

SOLUTIONS = {  # problem -> language -> (canonical solution, (text, replaced by) making the broken variant)
    "sum": {
        "java": ("import java.util.*;\npublic class Main {\n  public static void main(String[] a) {\n    Scanner s = new Scanner(System.in);\n"
                 "    int n = s.nextInt(); long t = 0;\n    for (int i = 0; i < n; i++) t += s.nextLong();\n    System.out.println(t);\n  }\n}",
                 ("long t = 0", "long t = 1")),
        "go": ("package main\n\nimport \"fmt\"\n\nfunc main() {\n\tvar n int\n\tfmt.Scan(&n)\n\tvar t int64\n\tfor i := 0; i < n; i++ {\n"
               "\t\tvar x int64\n\t\tfmt.Scan(&x)\n\t\tt += x\n\t}\n\tfmt.Println(t)\n}\n", ("i < n", "i < n-1")),
        "rust": ("use std::io::Read;\nfn main() {\n    let mut s = String::new();\n    std::io::stdin().read_to_string(&mut s).unwrap();\n"
                 "    let v: Vec<i64> = s.split_whitespace().map(|x| x.parse().unwrap()).collect();\n"
                 "    let t: i64 = v[1..].iter().sum();\n    println!(\"{}\", t);\n}\n", ("v[1..]", "v[..]")),
        "javascript": ("const v = require('fs').readFileSync(0, 'utf8').trim().split(/\\s+/).map(BigInt);\n"
                       "let t = 0n;\nfor (const x of v.slice(1)) t += x;\nconsole.log(String(t));\n", ("v.slice(1)", "v.slice(2)")),
    },
    "max": {
        "java": ("import java.util.*;\npublic class Main {\n  public static void main(String[] a) {\n    Scanner s = new Scanner(System.in);\n"
                 "    int n = s.nextInt(); long m = Long.MIN_VALUE;\n    for (int i = 0; i < n; i++) m = Math.max(m, s.nextLong());\n"
                 "    System.out.println(m);\n  }\n}", ("Long.MIN_VALUE", "0")),
        "go": ("package main\n\nimport \"fmt\"\n\nfunc main() {\n\tvar n int\n\tfmt.Scan(&n)\n\tvar m int64 = -1 << 62\n\tfor i := 0; i < n; i++ {\n"
               "\t\tvar x int64\n\t\tfmt.Scan(&x)\n\t\tif x > m {\n\t\t\tm = x\n\t\t}\n\t}\n\tfmt.Println(m)\n}\n", ("x > m", "x < m")),
        "rust": ("use std::io::Read;\nfn main() {\n    let mut s = String::new();\n    std::io::stdin().read_to_string(&mut s).unwrap();\n"
                 "    let v: Vec<i64> = s.split_whitespace().map(|x| x.parse().unwrap()).collect();\n"
                 "    println!(\"{}\", v[1..].iter().max().unwrap());\n}\n", (".max()", ".min()")),
        "javascript": ("const v = require('fs').readFileSync(0, 'utf8').trim().split(/\\s+/).map(Number);\n"
                       "console.log(Math.max(...v.slice(1)));\n", ("v.slice(1)", "v")),
    },
    "reverse": {
        "java": ("import java.io.*;\npublic class Main {\n  public static void main(String[] a) throws IOException {\n"
                 "    String line = new BufferedReader(new InputStreamReader(System.in)).readLine();\n"
                 "    System.out.println(new StringBuilder(line).reverse());\n  }\n}", (".reverse()", "")),
        "go": ("package main\n\nimport \"fmt\"\n\nfunc main() {\n\tvar s string\n\tfmt.Scan(&s)\n\tr := []rune(s)\n"
               "\tfor i, j := 0, len(r)-1; i < j; i, j = i+1, j-1 {\n\t\tr[i], r[j] = r[j], r[i]\n\t}\n\tfmt.Println(string(r))\n}\n",
               ("r[i], r[j] = r[j], r[i]", "r[i] = r[j]")),
        "rust": ("fn main() {\n    let mut s = String::new();\n    std::io::stdin().read_line(&mut s).unwrap();\n"
                 "    println!(\"{}\", s.trim().chars().rev().collect::<String>());\n}\n", (".rev()", "")),
        "javascript": ("const s = require('fs').readFileSync(0, 'utf8').trim();\nconsole.log([...s].reverse().join(''));\n",
                       (".reverse()", ".sort()")),
    },
    "fizzbuzz": {
        "java": ("import java.util.*;\npublic class Main {\n  public static void main(String[] a) {\n    int n = new Scanner(System.in).nextInt();\n"
                 "    StringBuilder out = new StringBuilder();\n    for (int i = 1; i <= n; i++)\n"
                 "      out.append(i % 15 == 0 ? \"FizzBuzz\" : i % 3 == 0 ? \"Fizz\" : i % 5 == 0 ? \"Buzz\" : String.valueOf(i)).append('\\n');\n"
                 "    System.out.print(out);\n  }\n}", ("i % 15 == 0", "i % 30 == 0")),
        "go": ("package main\n\nimport \"fmt\"\n\nfunc main() {\n\tvar n int\n\tfmt.Scan(&n)\n\tfor i := 1; i <= n; i++ {\n\t\tswitch {\n"
               "\t\tcase i%15 == 0:\n\t\t\tfmt.Println(\"FizzBuzz\")\n\t\tcase i%3 == 0:\n\t\t\tfmt.Println(\"Fizz\")\n"
               "\t\tcase i%5 == 0:\n\t\t\tfmt.Println(\"Buzz\")\n\t\tdefault:\n\t\t\tfmt.Println(i)\n\t\t}\n\t}\n}\n",
               ("i <= n", "i < n")),
        "rust": ("fn main() {\n    let mut s = String::new();\n    std::io::stdin().read_line(&mut s).unwrap();\n"
                 "    let n: u32 = s.trim().parse().unwrap();\n    for i in 1..=n {\n        match (i % 3, i % 5) {\n"
                 "            (0, 0) => println!(\"FizzBuzz\"),\n            (0, _) => println!(\"Fizz\"),\n"
                 "            (_, 0) => println!(\"Buzz\"),\n            _ => println!(\"{}\", i),\n        }\n    }\n}\n",
                 ("(0, _) => println!(\"Fizz\")", "(0, _) => println!(\"fizz\")")),
        "javascript": ("const n = Number(require('fs').readFileSync(0, 'utf8'));\nconst out = [];\nfor (let i = 1; i <= n; i++)\n"
                       "  out.push(i % 15 === 0 ? 'FizzBuzz' : i % 3 === 0 ? 'Fizz' : i % 5 === 0 ? 'Buzz' : String(i));\n"
                       "console.log(out.join('\\n'));\n", ("i % 5 === 0 ? 'Buzz'", "i % 4 === 0 ? 'Buzz'")),
    },
    "primes": {
        "java": ("import java.util.*;\npublic class Main {\n  public static void main(String[] a) {\n    int n = new Scanner(System.in).nextInt();\n"
                 "    boolean[] c = new boolean[n + 1]; int k = 0;\n    for (int i = 2; i <= n; i++) {\n      if (c[i]) continue;\n      k++;\n"
                 "      for (long j = (long) i * i; j <= n; j += i) c[(int) j] = true;\n    }\n    System.out.println(k);\n  }\n}",
                 ("int i = 2", "int i = 1")),
        "go": ("package main\n\nimport \"fmt\"\n\nfunc main() {\n\tvar n int\n\tfmt.Scan(&n)\n\tk := 0\n\tfor i := 2; i <= n; i++ {\n"
               "\t\tp := true\n\t\tfor d := 2; d*d <= i; d++ {\n\t\t\tif i%d == 0 {\n\t\t\t\tp = false\n\t\t\t\tbreak\n\t\t\t}\n\t\t}\n"
               "\t\tif p {\n\t\t\tk++\n\t\t}\n\t}\n\tfmt.Println(k)\n}\n", ("d*d <= i", "d*d < i")),
        "rust": ("fn main() {\n    let mut s = String::new();\n    std::io::stdin().read_line(&mut s).unwrap();\n"
                 "    let n: usize = s.trim().parse().unwrap();\n    let k = (2..=n).filter(|&i| (2..i).take_while(|d| d * d <= i).all(|d| i % d != 0)).count();\n"
                 "    println!(\"{}\", k);\n}\n", ("(2..=n)", "(2..n)")),
        "javascript": ("const n = Number(require('fs').readFileSync(0, 'utf8'));\nlet k = 0;\nfor (let i = 2; i <= n; i++) {\n"
                       "  let p = true;\n  for (let d = 2; d * d <= i; d++) if (i % d === 0) { p = false; break; }\n  if (p) k++;\n}\n"
                       "console.log(k);\n", ("let k = 0", "let k = 1")),
    },
    "fib": {
        "java": ("class Solution {\n  public long fib(int n) {\n    long a = 0, b = 1;\n    for (int i = 0; i < n; i++) { long t = a + b; a = b; b = t; }\n"
                 "    return a;\n  }\n}", ("return a;", "return b;")),
        "go": ("package main\n\nfunc fib(n int) int64 {\n\tvar a, b int64 = 0, 1\n\tfor i := 0; i < n; i++ {\n\t\ta, b = b, a+b\n\t}\n\treturn a\n}\n",
               ("a, b = b, a+b", "a, b = b, a+b+1")),
        "rust": ("fn fib(n: u32) -> u64 {\n    let (mut a, mut b) = (0u64, 1u64);\n    for _ in 0..n {\n        let t = a + b;\n        a = b;\n"
                 "        b = t;\n    }\n    a\n}\n", ("for _ in 0..n", "for _ in 1..n")),
        "javascript": ("function fib(n) {\n  let a = 0, b = 1;\n  for (let i = 0; i < n; i++) [a, b] = [b, a + b];\n  return a;\n}\n",
                       ("return a;", "return n < 2 ? n : a - 1;")),
    },
    "palindrome": {
        "java": ("class Solution {\n  public boolean isPalindrome(String s) {\n    return new StringBuilder(s).reverse().toString().equals(s);\n  }\n}",
                 (".equals(s)", ".equals(s) || s.length() == 2")),
        "go": ("package main\n\nfunc isPalindrome(s string) bool {\n\tfor i, j := 0, len(s)-1; i < j; i, j = i+1, j-1 {\n"
               "\t\tif s[i] != s[j] {\n\t\t\treturn false\n\t\t}\n\t}\n\treturn true\n}\n", ("i, j = i+1, j-1", "i, j = i+2, j-2")),
        "rust": ("impl Solution {\n    pub fn isPalindrome(s: String) -> bool {\n        s.chars().eq(s.chars().rev())\n    }\n}\n",
                 ("s.chars().eq(s.chars().rev())", "s.chars().next() == s.chars().last()")),
        "javascript": ("var isPalindrome = function (s) {\n  return s === [...s].reverse().join('');\n};\n",
                       ("return s ===", "return s.length < 3 ||")),
    },
    "sorted": {
        "java": ("import java.util.*;\nclass Solution {\n  public List<Integer> sortDesc(List<Integer> xs) {\n    List<Integer> out = new ArrayList<>(xs);\n"
                 "    out.sort(Comparator.reverseOrder());\n    return out;\n  }\n}", ("Comparator.reverseOrder()", "Comparator.naturalOrder()")),
        "go": ("package main\n\nimport \"sort\"\n\nfunc sortDesc(xs []int) []int {\n\tout := append([]int{}, xs...)\n"
               "\tsort.Sort(sort.Reverse(sort.IntSlice(out)))\n\treturn out\n}\n", ("append([]int{}, xs...)", "append([]int{}, xs[1:]...)")),
        "rust": ("fn sortDesc(mut xs: Vec<i64>) -> Vec<i64> {\n    xs.sort_by(|a, b| b.cmp(a));\n    xs\n}\n", ("xs.sort_by(|a, b| b.cmp(a));", "xs.dedup();")),
        "javascript": ("function sortDesc(xs) {\n  return [...xs].sort((a, b) => b - a);\n}\n", ("(a, b) => b - a", "")),
    },
    "gcd": {
        "java": ("class Solution {\n  static int gcd(int a, int b) {\n    return b == 0 ? a : gcd(b, a % b);\n  }\n}", ("b == 0 ? a", "b == 0 ? 1")),
        "go": ("package main\n\nfunc gcd(a, b int) int {\n\tfor b != 0 {\n\t\ta, b = b, a%b\n\t}\n\treturn a\n}\n", ("return a", "return b")),
        "rust": ("fn gcd(a: u64, b: u64) -> u64 {\n    if b == 0 { a } else { gcd(b, a % b) }\n}\n", ("if b == 0 { a }", "if b == 0 { a + 0 * b + 1 }")),
        "javascript": ("const gcd = (a, b) => (b === 0 ? a : gcd(b, a % b));\n", ("b === 0 ? a", "b <= 1 ? a")),
    },
    "count": {
        "java": ("class Solution {\n  public int countAbove(int[] xs, int k) {\n    int c = 0;\n    for (int x : xs) if (x > k) c++;\n    return c;\n  }\n}",
                 ("x > k", "x >= k")),
        "go": ("package main\n\nfunc countAbove(xs []int, k int) int {\n\tc := 0\n\tfor _, x := range xs {\n\t\tif x > k {\n\t\t\tc++\n\t\t}\n\t}\n"
               "\treturn c\n}\n", ("x > k", "x > k+1")),
        "rust": ("fn countAbove(xs: &[i32], k: i32) -> usize {\n    xs.iter().filter(|&&x| x > k).count()\n}\n", ("x > k", "x != k")),
        "javascript": ("function countAbove(xs, k) {\n  return xs.filter((x) => x > k).length;\n}\n", ("x > k", "x < k")),
    },
}


@pytest.mark.parametrize("language", languages())
def test_canonical_solutions_score_one_and_broken_ones_zero(language):
    completions, tests, expected, names = [], [], [], []
    for problem, by_language in SOLUTIONS.items():
        code, (old, new) = by_language[language]
        assert old in code, (problem, language)
        for program, value in ((code, 1.0), (code.replace(old, new, 1), 0.0)):
            completions.append(f"```{language}\n{program}\n```")
            tests.append(TESTS[problem])
            expected.append(value)
            names.append(f"{problem} {'canonical' if value else 'broken'}")
    reward = rewardhub.get("code", language=language, mode="all", timeout=10.0)
    scores = reward.evaluate(["p"] * len(completions), completions, tests=tests).scores
    wrong = [(name, score.value, score.reason) for name, score, value in zip(names, scores, expected, strict=True)
             if score.value != value]
    assert not wrong
