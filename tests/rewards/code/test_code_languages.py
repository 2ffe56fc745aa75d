"""``code`` with ``language: java | go | rust | javascript``: stdin/stdout and call-based cases, compile errors
(0.0 with the compiler's first error), and the red team: printing pass markers and exiting early, or
searching the run for the expected value, never forges a pass. One batch per language (its rows compile
concurrently, once each)."""

from __future__ import annotations

import pytest
from toolchains import languages

import rewardhub
from rewardhub.rewards.code.drivers.rust import rust_arity
from rewardhub.sandbox.local import isolation_problem

pytestmark = pytest.mark.skipif(isolation_problem() is not None, reason=f"no local isolation: {isolation_problem()}")

EXPECTED = 987654321  # what the call case must return (answer(1)) and the stdin case print ("987654320 1")
CALL_TESTS = {"fn_name": "answer", "inputs": [[1], [5]], "outputs": [EXPECTED, EXPECTED + 4]}
IO_TESTS = [{"input": "987654320 1\n", "output": f"{EXPECTED}\n"}, {"input": "2 3\n", "output": "5\n"}]
MARKERS = '"PASS", "ok", "{\\"passed\\": true}", "true", "2/2 cases passed", "987654321"'

ROWS = {  # language -> (row kind, program, expected score)
    "java": [
        ("call", "class Solution {\n    public long answer(int x) { return 987654320L + x; }\n}", 1.0),
        ("io", "import java.util.*;\npublic class Main {\n    public static void main(String[] a) {\n"
               "        Scanner s = new Scanner(System.in);\n        System.out.println(s.nextLong() + s.nextLong());\n"
               "    }\n}", 1.0),
        ("call", "class Solution {\n    public long answer(int x) { return x + ; }\n}", 0.0),
        ("call", "class Solution {\n    static {\n        for (String m : new String[] {" + MARKERS + "}) "
                 "System.out.println(m);\n        System.exit(0);\n    }\n    public long answer(int x) { return 0; }\n}",
         0.0),
        ("io", "public class Main {\n    public static void main(String[] a) {\n        for (String m : new String[] {"
               + MARKERS + "}) System.out.println(m);\n        Runtime.getRuntime().halt(0);\n    }\n}", 0.0),
        ("call", "import java.nio.file.*;\nclass Solution {\n    public long answer(int x) throws Exception {\n"
                 "        StringBuilder seen = new StringBuilder(System.getenv().toString());\n"
                 "        try (var files = Files.walk(Paths.get(\"/\"), 3)) { files.filter(Files::isRegularFile)"
                 ".limit(300).forEach(p -> { try { seen.append(Files.readString(p)); } catch (Exception e) {} }); }\n"
                 "        var m = java.util.regex.Pattern.compile(\"98765\\\\d+\").matcher(seen);\n"
                 "        return m.find() ? Long.parseLong(m.group()) : -1;\n    }\n}", 0.0),
    ],
    "go": [
        ("call", "package main\n\nfunc answer(x int) int64 { return 987654320 + int64(x) }\n", 1.0),
        ("io", "package main\n\nimport \"fmt\"\n\nfunc main() {\n\tvar a, b int64\n\tfmt.Scan(&a, &b)\n"
               "\tfmt.Println(a + b)\n}\n", 1.0),
        ("call", "package main\n\nfunc answer(x int) int64 { return y }\n", 0.0),
        ("call", "package main\n\nimport (\"fmt\"; \"os\")\n\nfunc init() {\n\tfor _, m := range []string{" + MARKERS
                 + "} {\n\t\tfmt.Println(m)\n\t}\n\tos.Exit(0)\n}\n\nfunc answer(x int) int64 { return 0 }\n", 0.0),
        ("io", "package main\n\nimport (\"fmt\"; \"os\")\n\nfunc main() {\n\tfor _, m := range []string{" + MARKERS
               + "} {\n\t\tfmt.Println(m)\n\t}\n\tos.Exit(0)\n}\n", 0.0),
        ("call", "package main\n\nimport (\"os\"; \"path/filepath\"; \"regexp\"; \"strconv\"; \"strings\")\n\n"
                 "func answer(x int) int64 {\n\tseen := strings.Join(os.Environ(), \" \")\n"
                 "\tfilepath.Walk(\"/\", func(p string, info os.FileInfo, err error) error {\n"
                 "\t\tif err == nil && info.Mode().IsRegular() && strings.Count(p, \"/\") < 4 {\n"
                 "\t\t\tif b, e := os.ReadFile(p); e == nil { seen += string(b) }\n\t\t}\n\t\treturn nil\n\t})\n"
                 "\tif m := regexp.MustCompile(`98765\\d+`).FindString(seen); m != \"\" {\n"
                 "\t\tv, _ := strconv.ParseInt(m, 10, 64)\n\t\treturn v\n\t}\n\treturn -1\n}\n", 0.0),
    ],
    "rust": [
        ("call", "fn answer(x: i64) -> i64 {\n    987654320 + x\n}\n", 1.0),
        ("io", "use std::io::Read;\nfn main() {\n    let mut s = String::new();\n"
               "    std::io::stdin().read_to_string(&mut s).unwrap();\n"
               "    let v: Vec<i64> = s.split_whitespace().map(|t| t.parse().unwrap()).collect();\n"
               "    println!(\"{}\", v[0] + v[1]);\n}\n", 1.0),
        ("call", "fn answer(x: i64) -> i64 {\n    let y: i64 = \"text\";\n    y\n}\n", 0.0),
        ("call", "fn answer(x: i64) -> i64 {\n    for m in [" + MARKERS + "] { println!(\"{}\", m); }\n"
                 "    std::process::exit(0)\n}\n", 0.0),
        ("io", "fn main() {\n    for m in [" + MARKERS + "] { println!(\"{}\", m); }\n    std::process::exit(0);\n}\n", 0.0),
        ("call", "fn answer(x: i64) -> i64 {\n    let mut seen: String = std::env::vars().map(|(k, v)| k + &v).collect();\n"
                 "    for dir in [\"/work\", \"/tmp\", \"/\", \"/proc/self\"] {\n"
                 "        if let Ok(entries) = std::fs::read_dir(dir) { for e in entries.flatten() {\n"
                 "            if let Ok(text) = std::fs::read_to_string(e.path()) { seen.push_str(&text); } } }\n    }\n"
                 "    match seen.find(\"98765\") { Some(at) => seen[at..at + 9].parse().unwrap_or(-1), None => -1 }\n}\n", 0.0),
    ],
    "javascript": [
        ("call", "function answer(x) {\n  return 987654320 + x;\n}\n", 1.0),
        ("io", "const [a, b] = require('fs').readFileSync(0, 'utf8').trim().split(/\\s+/).map(Number);\n"
               "console.log(a + b);\n", 1.0),
        ("call", "function answer(x) {\n  return x +;\n}\n", 0.0),
        ("call", "for (const m of [" + MARKERS + "]) console.log(m);\nprocess.exit(0);\nfunction answer(x) { return 0; }\n",
         0.0),
        ("call", "function answer(x) {\n  JSON.stringify = () => 'true';\n  process.stdout.write('\\n987654321\\n');\n"
                 "  process.exit(0);\n}\n", 0.0),  # guesses the first case's value: passes it, fails the second
        ("call", "const fs = require('fs');\nfunction answer(x) {\n  let seen = JSON.stringify(process.env);\n"
                 "  for (const dir of ['/work', '/tmp', '/']) { try { for (const f of fs.readdirSync(dir)) {\n"
                 "    try { seen += fs.readFileSync(dir + '/' + f, 'utf8'); } catch (e) {} } } catch (e) {} }\n"
                 "  const m = seen.match(/98765\\d+/);\n  return m ? Number(m[0]) : -1;\n}\n", 0.0),
    ],
}


@pytest.mark.parametrize("language", languages())
def test_cases_compile_errors_and_forgeries(language):
    rows = ROWS[language]
    reward = rewardhub.get("code", language=language, mode="all", timeout=10.0)
    completions = [f"Here it is:\n```{language}\n{code}\n```" for _, code, _ in rows]
    tests = [CALL_TESTS if kind == "call" else IO_TESTS for kind, _, _ in rows]
    result = reward.evaluate(["p"] * len(rows), completions, tests=tests)
    got = [(score.value, score.reason) for score in result.scores]
    assert [value for value, _ in got] == [expected for _, _, expected in rows], got
    compile_error = got[2][1]
    assert compile_error.startswith("compile error: ") and ("error" in compile_error.lower()), compile_error


@pytest.mark.parametrize("language", languages())
def test_assert_tests_abstain_outside_python(language):
    reward = rewardhub.get("code", language=language)
    result = reward.evaluate(["p"], ["```\nfn x() {}\n```"], tests=[["assert f(1) == 2"]])
    assert result.scores[0].value is None and "language='python'" in result.scores[0].reason


def test_rust_call_without_the_function_scores_zero_and_arity_is_read():
    reward = rewardhub.get("code", language="rust")
    result = reward.evaluate(["p"], ["```rust\nfn other() {}\n```"], tests=[CALL_TESTS])
    assert result.scores[0].value == 0.0 and "no function answer" in result.scores[0].reason
    assert rust_arity("impl Solution { pub fn f(&self, a: Vec<(i32, i32)>, s: &str) -> i32 { 0 } }", "f") == 2


NESTED = {"fn_name": "f", "inputs": [[[[1, 2], [3]], ["a", "bc"], 2.5]], "outputs": [[6, "abc", 5.0, None]]}
TYPED = {  # nested lists, string arrays, floats and null, in and out
    "java": "import java.util.*;\npublic class Solution {\n  public List<Object> f(List<List<Integer>> xs, String[] ss, double d) {\n"
            "    int s = 0;\n    for (List<Integer> x : xs) for (int v : x) s += v;\n"
            "    return new ArrayList<>(Arrays.asList(s, String.join(\"\", ss), d * 2, null));\n  }\n}",
    "go": "package main\n\nimport \"strings\"\n\nfunc f(xs [][]int, ss []string, d float64) []interface{} {\n\ts := 0\n"
          "\tfor _, x := range xs {\n\t\tfor _, v := range x {\n\t\t\ts += v\n\t\t}\n\t}\n"
          "\treturn []interface{}{s, strings.Join(ss, \"\"), d * 2, nil}\n}\n",
    "rust": "impl Solution {\n    pub fn f(xs: &Vec<Vec<i64>>, ss: Vec<String>, d: f64) -> (i64, (String, (f64, Option<i32>))) {\n"
            "        (xs.iter().flatten().sum(), (ss.concat(), (d * 2.0, None)))\n    }\n}\n",
    "javascript": "async function f(xs, ss, d) {\n  await null;\n  return [xs.flat().reduce((a, b) => a + b, 0), ss.join(''), d * 2, null];\n}\n",
}


@pytest.mark.parametrize("language", languages())
def test_call_arguments_and_values_of_many_types(language):
    tests = NESTED if language != "rust" else {**NESTED, "outputs": [[6, ["abc", [5.0, None]]]]}  # Rust: nested pairs
    reward = rewardhub.get("code", language=language, mode="all", timeout=10.0)
    score = reward.evaluate(["p"], [f"```{language}\n{TYPED[language]}\n```"], tests=[tests]).scores[0]
    assert score.value == 1.0, score.reason
