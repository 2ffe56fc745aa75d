"""The Rust driver: appended to the solution's file, a ``main`` that calls ``FN`` (a free function, or
``Solution::FN`` of an ``impl Solution``) with the JSON arguments on stdin and prints the value as JSON on
the last line of stdout. Arguments are decoded by the parameter types the compiler infers (``FromJson``);
a borrowed parameter (``&str``, ``&[T]``, ``&mut Vec<T>``) gets a reference to an owned value. A ``main``
of the solution's own is renamed (it never runs)."""

from __future__ import annotations

import re

__all__ = ["rust_program", "rust_arity"]

_MAIN = re.compile(r"^(\s*)fn\s+main\s*\(\s*\)", re.M)

SUPPORT = r"""
#[allow(dead_code)]
mod rewardhub_json {
    pub enum Json { Null, Bool(bool), Num(String), Str(String), Arr(Vec<Json>), Obj(Vec<(String, Json)>) }

    pub struct Parser<'a> { s: &'a [u8], i: usize }
    impl<'a> Parser<'a> {
        pub fn new(s: &'a str) -> Self { Parser { s: s.as_bytes(), i: 0 } }
        fn skip(&mut self) { while self.i < self.s.len() && (self.s[self.i] as char).is_whitespace() { self.i += 1; } }
        pub fn value(&mut self) -> Json {
            self.skip();
            match self.s[self.i] {
                b'[' => {
                    self.i += 1; let mut items = Vec::new(); self.skip();
                    if self.s[self.i] == b']' { self.i += 1; return Json::Arr(items); }
                    loop { items.push(self.value()); self.skip(); self.i += 1; if self.s[self.i - 1] == b']' { return Json::Arr(items); } }
                }
                b'{' => {
                    self.i += 1; let mut items = Vec::new(); self.skip();
                    if self.s[self.i] == b'}' { self.i += 1; return Json::Obj(items); }
                    loop {
                        let key = match self.value() { Json::Str(k) => k, _ => panic!("object key") };
                        self.skip(); self.i += 1;
                        items.push((key, self.value())); self.skip(); self.i += 1;
                        if self.s[self.i - 1] == b'}' { return Json::Obj(items); }
                    }
                }
                b'"' => {
                    self.i += 1; let mut out = String::new();
                    while self.s[self.i] != b'"' {
                        if self.s[self.i] == b'\\' {
                            let e = self.s[self.i + 1]; self.i += 2;
                            match e {
                                b'n' => out.push('\n'), b't' => out.push('\t'), b'r' => out.push('\r'),
                                b'b' => out.push('\u{8}'), b'f' => out.push('\u{c}'),
                                b'u' => {
                                    let code = u32::from_str_radix(std::str::from_utf8(&self.s[self.i..self.i + 4]).unwrap(), 16).unwrap();
                                    out.push(char::from_u32(code).unwrap_or('\u{fffd}')); self.i += 4;
                                }
                                other => out.push(other as char),
                            }
                        } else {
                            let start = self.i;
                            while self.s[self.i] != b'"' && self.s[self.i] != b'\\' { self.i += 1; }
                            out.push_str(std::str::from_utf8(&self.s[start..self.i]).unwrap());
                        }
                    }
                    self.i += 1; Json::Str(out)
                }
                b't' => { self.i += 4; Json::Bool(true) }
                b'f' => { self.i += 5; Json::Bool(false) }
                b'n' => { self.i += 4; Json::Null }
                _ => {
                    let start = self.i;
                    while self.i < self.s.len() && b"+-0123456789.eE".contains(&self.s[self.i]) { self.i += 1; }
                    Json::Num(String::from_utf8(self.s[start..self.i].to_vec()).unwrap())
                }
            }
        }
    }

    pub trait FromJson: Sized { fn from_json(v: &Json) -> Self; }
    macro_rules! numbers { ($($t:ty),*) => { $(impl FromJson for $t {
        fn from_json(v: &Json) -> Self { match v { Json::Num(n) => n.parse::<$t>().unwrap_or_else(|_| n.parse::<f64>().unwrap() as $t), _ => panic!("not a number") } }
    })* } }
    numbers!(i8, i16, i32, i64, i128, isize, u8, u16, u32, u64, u128, usize, f32, f64);
    impl FromJson for bool { fn from_json(v: &Json) -> Self { match v { Json::Bool(b) => *b, _ => panic!("not a bool") } } }
    impl FromJson for String { fn from_json(v: &Json) -> Self { match v { Json::Str(s) => s.clone(), _ => panic!("not a string") } } }
    impl FromJson for char { fn from_json(v: &Json) -> Self { match v { Json::Str(s) => s.chars().next().unwrap(), _ => panic!("not a char") } } }
    impl<T: FromJson> FromJson for Vec<T> { fn from_json(v: &Json) -> Self { match v { Json::Arr(a) => a.iter().map(T::from_json).collect(), _ => panic!("not a list") } } }
    impl<T: FromJson> FromJson for Option<T> { fn from_json(v: &Json) -> Self { match v { Json::Null => None, other => Some(T::from_json(other)) } } }
    impl<A: FromJson, B: FromJson> FromJson for (A, B) { fn from_json(v: &Json) -> Self { match v { Json::Arr(a) => (A::from_json(&a[0]), B::from_json(&a[1])), _ => panic!("not a pair") } } }

    pub trait ToJson { fn to_json(&self, out: &mut String); }
    macro_rules! integers { ($($t:ty),*) => { $(impl ToJson for $t { fn to_json(&self, out: &mut String) { out.push_str(&self.to_string()); } })* } }
    integers!(i8, i16, i32, i64, i128, isize, u8, u16, u32, u64, u128, usize, bool);
    impl ToJson for f64 { fn to_json(&self, out: &mut String) { if self.is_finite() { out.push_str(&format!("{:?}", self)); } else { out.push_str("null"); } } }
    impl ToJson for f32 { fn to_json(&self, out: &mut String) { (*self as f64).to_json(out) } }
    impl ToJson for () { fn to_json(&self, out: &mut String) { out.push_str("null"); } }
    impl ToJson for str {
        fn to_json(&self, out: &mut String) {
            out.push('"');
            for c in self.chars() {
                match c { '"' => out.push_str("\\\""), '\\' => out.push_str("\\\\"),
                          c if (c as u32) < 0x20 => out.push_str(&format!("\\u{:04x}", c as u32)), c => out.push(c) }
            }
            out.push('"');
        }
    }
    impl ToJson for String { fn to_json(&self, out: &mut String) { self.as_str().to_json(out) } }
    impl ToJson for char { fn to_json(&self, out: &mut String) { self.to_string().to_json(out) } }
    impl<T: ToJson + ?Sized> ToJson for &T { fn to_json(&self, out: &mut String) { (**self).to_json(out) } }
    impl<T: ToJson> ToJson for [T] {
        fn to_json(&self, out: &mut String) {
            out.push('[');
            for (i, item) in self.iter().enumerate() { if i > 0 { out.push(','); } item.to_json(out); }
            out.push(']');
        }
    }
    impl<T: ToJson> ToJson for Vec<T> { fn to_json(&self, out: &mut String) { self.as_slice().to_json(out) } }
    impl<T: ToJson> ToJson for Option<T> { fn to_json(&self, out: &mut String) { match self { Some(v) => v.to_json(out), None => out.push_str("null") } } }
    impl<A: ToJson, B: ToJson> ToJson for (A, B) {
        fn to_json(&self, out: &mut String) { out.push('['); self.0.to_json(out); out.push(','); self.1.to_json(out); out.push(']'); }
    }
}

fn main() {
    use rewardhub_json::{FromJson, ToJson};
    let mut input = String::new();
    std::io::Read::read_to_string(&mut std::io::stdin(), &mut input).unwrap();
    let args = match rewardhub_json::Parser::new(&input).value() { rewardhub_json::Json::Arr(a) => a, _ => panic!("arguments") };
    let value = __CALL__;
    let mut text = String::from("\n");
    value.to_json(&mut text);
    text.push('\n');
    std::io::Write::write_all(&mut std::io::stdout(), text.as_bytes()).unwrap();
    std::io::Write::flush(&mut std::io::stdout()).unwrap();
    std::process::exit(0);
}
"""


def _parameters(code: str, fn_name: str) -> list[str] | None:
    """The parameter types of ``fn fn_name(...)`` (``self`` left out), or ``None`` when it is not found."""
    found = re.search(r"\bfn\s+" + re.escape(fn_name) + r"\s*(?:<[^>]*>)?\s*\(", code)
    if not found:
        return None
    depth, start, parts = 0, found.end(), []
    for at in range(found.end(), len(code)):
        char = code[at]
        if char in "(<[":
            depth += 1
        elif char in ")>]":
            if depth == 0:
                parts.append(code[start:at])
                break
            depth -= 1
        elif char == "," and depth == 0:
            parts.append(code[start:at])
            start = at + 1
    types = []
    for part in (p.strip() for p in parts):
        if not part or part.lstrip("&").replace("mut ", "").strip() in ("self", "'_ self") or ":" not in part:
            continue
        types.append(part.split(":", 1)[1].strip())
    return types


def rust_arity(code: str, fn_name: str) -> int | None:
    types = _parameters(code, fn_name)
    return None if types is None else len(types)


def _argument(index: int, kind: str) -> str:
    if not kind.startswith("&"):
        return f"FromJson::from_json(&args[{index}])"
    mutable = kind[1:].lstrip().startswith("mut ")
    owned = re.sub(r"^&\s*(?:'\w+\s+)?(?:mut\s+)?", "", kind).strip()
    owned = "String" if owned == "str" else f"Vec<{owned[1:-1]}>" if owned.startswith("[") else owned
    return f"&{'mut ' if mutable else ''}<{owned} as FromJson>::from_json(&args[{index}])"


def rust_program(code: str, fn_name: str) -> str | None:
    """The solution (its own ``main`` renamed) with the driver; ``None`` when ``fn fn_name`` is not in it."""
    types = _parameters(code, fn_name)
    if types is None:
        return None
    owner = "Solution::" if re.search(r"\bimpl\s+Solution\b", code) else ""
    call = f"{owner}{fn_name}({', '.join(_argument(i, kind) for i, kind in enumerate(types))})"
    solution = _MAIN.sub(r"\1#[allow(dead_code)] fn rewardhub_solution_main()", code)
    head = "#![allow(unused_imports, unused_variables, non_snake_case)] "  # no newline: rustc's line numbers stay
    if owner and not re.search(r"\bstruct\s+Solution\b", code):
        head += "struct Solution; "
    return head + solution + "\n" + SUPPORT.replace("__CALL__", call)
