"""The Go driver: a second file of package ``main`` whose ``main`` calls the solution's function ``FN`` with
the JSON arguments on stdin, each decoded into the parameter's type (``encoding/json`` by reflection),
and prints the first returned value as JSON on the last line of stdout. A ``main`` of the solution's own
is renamed (it never runs), so a completion that kept its test ``main`` still builds."""

from __future__ import annotations

import re

__all__ = ["DRIVER_FILE", "go_program"]

DRIVER_FILE = "rewardhub_driver.go"
_MAIN = re.compile(r"^func\s+main\s*\(\s*\)", re.M)

DRIVER = """package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"reflect"
)

func main() {
	data, err := io.ReadAll(os.Stdin)
	var raw []json.RawMessage
	if err == nil {
		err = json.Unmarshal(data, &raw)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "arguments:", err)
		os.Exit(3)
	}
	f := reflect.ValueOf(__NAME__)
	t := f.Type()
	if t.NumIn() != len(raw) {
		fmt.Fprintf(os.Stderr, "__NAME__ takes %d arguments, the case gives %d\\n", t.NumIn(), len(raw))
		os.Exit(3)
	}
	args := make([]reflect.Value, len(raw))
	for i := range raw {
		v := reflect.New(t.In(i))
		if err := json.Unmarshal(raw[i], v.Interface()); err != nil {
			fmt.Fprintln(os.Stderr, "argument", i, err)
			os.Exit(3)
		}
		args[i] = v.Elem()
	}
	out := f.Call(args)
	var result interface{}
	if len(out) > 0 {
		result = out[0].Interface()
	}
	text, err := json.Marshal(result)
	if err != nil {
		fmt.Fprintln(os.Stderr, "result:", err)
		os.Exit(3)
	}
	os.Stdout.Write(append(append([]byte("\\n"), text...), '\\n'))
	os.Exit(0)
}
"""


def go_program(code: str, fn_name: str) -> tuple[str, dict[str, str]]:
    """The solution (its own ``main`` renamed) and the driver's file."""
    return _MAIN.sub("func rewardhubSolutionMain()", code), {DRIVER_FILE: DRIVER.replace("__NAME__", fn_name)}
