"""Java, Go, Rust and JavaScript in the local sandbox: build apart from run, compile errors, the build cache,
and the Python runs' hardening (no network, no host files, memory, processes, deadline) for each runtime.

Each language has one program that does what its first stdin line asks, so each compiles once per module.
"""

from __future__ import annotations

import socket
import threading

import pytest
from toolchains import COMPILED, DOUBLE, languages

from rewardhub.sandbox import Program, get_backend
from rewardhub.sandbox.languages import first_compile_error, java_main_class, toolchain_problem
from rewardhub.sandbox.local import LocalBackend, isolation_problem

LANGUAGES = [name for name in COMPILED if toolchain_problem(name) is None]  # built by the module's fixture
pytestmark = pytest.mark.skipif(isolation_problem() is not None, reason=f"no local isolation: {isolation_problem()}")

# Commands (first stdin line): echo N (prints 2N), net PORT (connects to the host's 127.0.0.1:PORT), file PATH
# (does a host file show?), mem (2 GB), threads (200 threads or processes), loop (never ends).
PROGRAMS = {
    "java": r"""
import java.io.*;
import java.net.*;
import java.nio.file.*;

public class Probe {
    public static void main(String[] args) throws Exception {
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in));
        String[] cmd = in.readLine().trim().split(" ");
        switch (cmd[0]) {
            case "echo": System.out.println(Long.parseLong(cmd[1]) * 2); break;
            case "net":
                try (Socket s = new Socket()) {
                    s.connect(new InetSocketAddress("127.0.0.1", Integer.parseInt(cmd[1])), 2000);
                    System.out.println("connected");
                } catch (IOException e) { System.out.println("blocked"); }
                break;
            case "file": System.out.println(Files.exists(Paths.get(cmd[1])) ? "visible" : "hidden"); break;
            case "mem": {
                long[][] blocks = new long[64][];
                for (int i = 0; i < 64; i++) { blocks[i] = new long[4 << 20]; blocks[i][7] = i; }
                System.out.println("allocated"); break;
            }
            case "threads":
                for (int i = 0; i < 200; i++) {
                    Thread t = new Thread(() -> { try { Thread.sleep(20000); } catch (InterruptedException e) {} });
                    t.setDaemon(true); t.start();
                }
                System.out.println("spawned"); break;
            default: while (true) {}
        }
    }
}
""",
    "go": r"""package main

import (
	"fmt"
	"net"
	"os"
	"runtime"
	"strconv"
	"time"
)

func main() {
	var cmd, arg string
	fmt.Scan(&cmd, &arg)
	switch cmd {
	case "echo":
		n, _ := strconv.ParseInt(arg, 10, 64)
		fmt.Println(n * 2)
	case "net":
		if c, err := net.DialTimeout("tcp", "127.0.0.1:"+arg, 2*time.Second); err == nil {
			c.Close()
			fmt.Println("connected")
		} else {
			fmt.Println("blocked")
		}
	case "file":
		if _, err := os.Stat(arg); err == nil {
			fmt.Println("visible")
		} else {
			fmt.Println("hidden")
		}
	case "mem":
		b := make([]byte, 2<<30)
		for i := 0; i < len(b); i += 4096 {
			b[i] = 1
		}
		fmt.Println("allocated")
	case "threads":
		for i := 0; i < 200; i++ {
			go func() { runtime.LockOSThread(); time.Sleep(20 * time.Second) }()
		}
		time.Sleep(time.Second)
		fmt.Println("spawned")
	default:
		for {
		}
	}
}
""",
    "rust": r"""use std::io::Read;
use std::net::{SocketAddr, TcpStream};
use std::time::Duration;

fn main() {
    let mut input = String::new();
    std::io::stdin().read_to_string(&mut input).unwrap();
    let words: Vec<&str> = input.split_whitespace().collect();
    match words[0] {
        "echo" => println!("{}", words[1].parse::<i64>().unwrap() * 2),
        "net" => {
            let addr: SocketAddr = format!("127.0.0.1:{}", words[1]).parse().unwrap();
            match TcpStream::connect_timeout(&addr, Duration::from_secs(2)) {
                Ok(_) => println!("connected"),
                Err(_) => println!("blocked"),
            }
        }
        "file" => println!("{}", if std::path::Path::new(words[1]).exists() { "visible" } else { "hidden" }),
        "mem" => {
            let v = vec![1u8; 2 << 30];
            println!("allocated {}", v[12345]);
        }
        "threads" => {
            let handles: Vec<_> = (0..200).map(|_| std::thread::spawn(|| std::thread::sleep(Duration::from_secs(20)))).collect();
            println!("spawned {}", handles.len());
        }
        _ => loop {},
    }
}
""",
    "javascript": r"""
const [cmd, arg] = require("fs").readFileSync(0, "utf8").trim().split(/\s+/);
if (cmd === "echo") console.log(String(BigInt(arg) * 2n));
else if (cmd === "net") {
  const s = require("net").connect(Number(arg), "127.0.0.1");
  s.on("connect", () => { console.log("connected"); s.destroy(); });
  s.on("error", () => console.log("blocked"));
} else if (cmd === "file") console.log(require("fs").existsSync(arg) ? "visible" : "hidden");
else if (cmd === "mem") {
  const blocks = [];
  for (let i = 0; i < 64; i++) blocks.push(Buffer.alloc(32 << 20, 1));
  console.log("allocated");
} else if (cmd === "threads") {
  const cp = require("child_process");
  for (let i = 0; i < 200; i++) cp.spawn("/bin/sleep", ["20"]);
  setTimeout(() => console.log("spawned"), 1000);
} else { for (;;) {} }
""",
}

BROKEN = {  # a compile error, and the line the first error is on
    "java": ("public class Main {\n  public static void main(String[] a) {\n    int x = \"text\";\n  }\n}\n",
             "Main.java:3: error: incompatible types"),
    "go": ("package main\n\nfunc main() {\n\tx := undefinedName\n}\n", "main.go:4:7: undefined: undefinedName"),
    "rust": ("fn main() {\n    let x: i32 = \"text\";\n}\n", "error[E0308]: mismatched types"),
    "javascript": ("console.log(1;\n", "SyntaxError: missing ) after argument list"),
}


@pytest.fixture(scope="module")
def backend():
    pool = LocalBackend(workers=2)
    yield pool
    pool.close()


@pytest.fixture(scope="module")
def builds(backend):
    """Each language's probe, built once for the module."""
    results = backend.run_many([Program(PROGRAMS[lang], language=lang, compile_only=True) for lang in LANGUAGES])
    for lang, result in zip(LANGUAGES, results, strict=True):
        assert result.error is None and result.executable is not None, (lang, result.reason, result.stderr[-500:])
    return {lang: result.executable for lang, result in zip(LANGUAGES, results, strict=True)}


def run(backend, builds, lang, stdin, **limits):
    return backend.run(Program(PROGRAMS[lang], stdin=stdin, language=lang, executable=builds[lang], **limits))


@pytest.mark.parametrize("lang", languages())
def test_build_runs_with_stdin_and_is_kept_per_source(backend, builds, lang):
    result = run(backend, builds, lang, "echo 21\n")
    assert result.ok and result.stdout == "42\n", (result.reason, result.stderr[-500:])
    assert result.compile_duration == 0.0  # a given build: nothing compiled
    hits = backend.build_cache.hits
    again = backend.run(Program(PROGRAMS[lang], stdin="echo 4\n", language=lang))  # source: the module's build
    assert again.ok and again.stdout == "8\n"
    assert backend.build_cache.hits == hits + 1 and again.compile_duration > 0


@pytest.mark.parametrize("lang", languages())
def test_compile_error_is_the_programs_failure_with_the_first_error(backend, lang):
    code, first = BROKEN[lang]
    result = backend.run(Program(code, language=lang, stdin="1\n"))
    assert result.error is None and not result.ok and result.reason == "compile error"
    assert first in first_compile_error(lang, result.stderr), result.stderr


@pytest.mark.parametrize("lang", languages())
def test_no_network_and_no_host_files(backend, builds, lang, tmp_path):
    server = socket.create_server(("127.0.0.1", 0))
    accepted: list[object] = []
    waiter = threading.Thread(target=lambda: accepted.append(server.accept()), daemon=True)
    waiter.start()
    secret = tmp_path / "secret.txt"
    secret.write_text("host only")
    try:
        net = run(backend, builds, lang, f"net {server.getsockname()[1]}\n")
        files = [run(backend, builds, lang, f"file {path}\n") for path in (secret, "/etc/shadow", __file__)]
    finally:
        server.close()
    assert net.stdout.strip() == "blocked" and not accepted, (net.stdout, net.stderr[-300:])
    assert [f.stdout.strip() for f in files] == ["hidden"] * 3


@pytest.mark.parametrize("lang", languages())
def test_memory_threads_and_deadline_are_bounded(backend, builds, lang):
    memory = run(backend, builds, lang, "mem\n", memory_mb=256)
    assert memory.error is None and not memory.ok and "allocated" not in memory.stdout, memory.stdout
    threads = run(backend, builds, lang, "threads\n", max_processes=8, timeout=10)
    assert threads.error is None and "spawned" not in threads.stdout, (threads.stdout, threads.reason)
    loop = run(backend, builds, lang, "loop\n", timeout=1)
    assert loop.timed_out and loop.error is None and loop.reason.startswith("timeout")


def test_missing_toolchain_names_the_debian_package(tmp_path):
    problem = toolchain_problem("java", str(tmp_path))
    assert "default-jdk-headless" in problem and "javac" in problem
    assert "golang-go" in toolchain_problem("go", str(tmp_path)) and "'nodejs'" in toolchain_problem("javascript", str(tmp_path))


def test_java_main_class_follows_the_source():
    assert java_main_class("class A {}\npublic class Solver { static void main(String[] a) {} }") == "Solver"
    assert java_main_class("class Helper {}\nclass Main { public static void main(String[] a) {} }") == "Main"
    assert java_main_class("class Helper {}\nclass App { public static void main(String[] a) {} }") == "App"


def test_compile_time_is_bounded_apart_from_the_run(backend):
    """A build past compile_timeout is the program's timeout (a constexpr evaluation of ~4e10 steps, which
    g++ would run for minutes), reported as such, whatever the run's own timeout."""
    bomb = ("constexpr long spin() { long s = 0; for (long i = 0; i < 200000; i++) for (long j = 0; j < 200000; j++) "
            "s += i ^ j; return s; }\nstatic_assert(spin() != 1, \"\");\nint main() { return 0; }\n")
    result = backend.run(Program(bomb, language="cpp", compile_timeout=1, timeout=30))
    assert result.timed_out and result.error is None and result.reason == "compile timeout after 1 s", result.reason
    assert result.compile_duration > 0


@pytest.mark.parametrize("lang", languages())
def test_unsafe_backend_builds_and_runs_the_language_too(lang):
    """No isolation (chosen by name only), but the same language table: build, run, build once run again."""
    unsafe = get_backend("unsafe")
    source = unsafe.run(Program(DOUBLE[lang], language=lang, stdin="4\n", timeout=10))
    built = unsafe.run(Program(DOUBLE[lang], language=lang, compile_only=True))
    again = unsafe.run(Program("", language=lang, executable=built.executable, stdin="5\n"))
    assert (source.stdout, again.stdout) == ("8\n", "10\n"), (source.stderr[-300:], again.stderr[-300:])


def test_cli_says_which_languages_work_here(capsys):
    from rewardhub.cli import main

    assert main(["sandbox", "--backend", "local"]) == 0
    line = next(line for line in capsys.readouterr().out.splitlines() if line.startswith("local: languages: "))
    working = line.removeprefix("local: languages: ").split(";")[0].split(", ")
    here = [name for name in ("python", "c", "cpp") if toolchain_problem(name) is None] + LANGUAGES
    assert working == here, line  # every language whose toolchain is here
