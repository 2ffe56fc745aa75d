"""The languages the sandbox builds and runs: one table every backend reads (which file the code goes in,
how it compiles, what the build is, how the build runs, what its runtime needs), and the checks that say
which toolchains this machine has. Knows nothing of tests: ``rewards/code`` brings those.

Every toolchain is a Debian package's (``default-jdk-headless``, ``golang-go``, ``rustc``, ``nodejs``);
a language whose toolchain is missing is refused with an error naming the package to install.
"""

from __future__ import annotations

import functools
import os
import re
import shutil
from dataclasses import dataclass, field

__all__ = [
    "LANGUAGES", "SANDBOX_PATH", "Language", "first_compile_error", "host_paths", "java_main_class", "language",
    "toolchain_problem",
]

SANDBOX_PATH = "/usr/local/bin:/usr/bin:/bin"  # the PATH of every run: toolchains are looked up here only


@dataclass(frozen=True)
class Language:
    """How one language is built and run inside a run's work folder (``/work``).

    ``compile`` is one command (``{memory}``: the compile memory in MB); it leaves ``build`` (a file), or,
    with ``package``, a folder the sandbox zips into ``build``. ``run`` is the command that runs the build
    (empty: the build is a native executable, executed from its sealed descriptor); ``{memory}`` there is
    the run's ``memory_mb``. ``reserve_mb`` is the address space the runtime reserves beyond what it uses
    (JVM, V8, Go runtime), added to the run's ``RLIMIT_AS``; ``resident_mb`` what it uses on its own,
    added to the run's memory cgroup; ``threads`` the threads it starts, added to ``RLIMIT_NPROC``.
    """

    name: str
    package: str  # the Debian package with the toolchain ("" for the interpreter running rewardhub)
    source: str
    compile: tuple[str, ...] = ()
    build: str = ""
    package_dir: str = ""
    run: tuple[str, ...] = ()
    tools: tuple[str, ...] = ()  # programs that must be on SANDBOX_PATH
    env: dict[str, str] = field(default_factory=dict)
    reserve_mb: int = 0
    resident_mb: int = 0
    threads: int = 0
    host_paths: tuple[str, ...] = ()  # host folders the toolchain reads (bound read-only into runs), globbed
    error_pattern: str = r"\berror\b"  # the first stderr line matching it is the compiler's first error

    def source_name(self, code: str) -> str:
        """The file the code goes in (Java: named after the public class, as javac requires)."""
        if self.name == "java":
            public = _java_public_class(code)
            return f"{public}.java" if public else "Main.java"
        return self.source

    def compile_command(self, code: str, memory_mb: int) -> list[str] | None:
        if not self.compile:
            return None
        return [part.format(memory=memory_mb, source=self.source_name(code)) for part in self.compile]

    def run_command(self, code: str, memory_mb: int) -> list[str] | None:
        """The command that runs the build (``None``: execute the build itself)."""
        if not self.run:
            return None
        return [part.format(memory=memory_mb, main=java_main_class(code), build=self.build) for part in self.run]


_JAVA_PUBLIC = re.compile(r"\bpublic\s+(?:(?:final|abstract|strictfp)\s+)*class\s+([A-Za-z_$][\w$]*)")
_JAVA_CLASS = re.compile(r"^\s*(?:(?:public|final|abstract|strictfp)\s+)*class\s+([A-Za-z_$][\w$]*)", re.M)
_JAVA_MAIN = re.compile(r"\bstatic\s+(?:final\s+)?void\s+main\s*\(")


def java_main_class(code: str) -> str:
    """The class ``java`` starts: the top-level class holding the first ``main`` method, else the public
    class, else ``Main``. (Braces are counted without reading strings: a guess javac then confirms.)"""
    main = _JAVA_MAIN.search(code)
    if main:
        top = [m.group(1) for m in _JAVA_CLASS.finditer(code, 0, main.start()) if _top_level(code, m.start())]
        if top:
            return top[-1]
    return _java_public_class(code) or "Main"


def _top_level(code: str, at: int) -> bool:
    return code.count("{", 0, at) == code.count("}", 0, at)


def _java_public_class(code: str) -> str | None:
    """The top-level public class (javac wants it in a file of its name), if there is one."""
    return next((m.group(1) for m in _JAVA_PUBLIC.finditer(code) if _top_level(code, m.start())), None)


_GO_ENV = {"GO111MODULE": "off", "CGO_ENABLED": "0", "GOTOOLCHAIN": "local", "GOPROXY": "off",
           "GOMAXPROCS": "2", "GOTELEMETRY": "off"}  # GOCACHE and GOPATH: under HOME, the run's work folder
_JVM = ("-Xlog:disable", "-Xlog:all=warning:stderr", "-XX:+UseSerialGC", "-XX:ActiveProcessorCount=2", "-XX:ReservedCodeCacheSize=64m",
        "-XX:MaxMetaspaceSize=192m", "-XX:CompressedClassSpaceSize=64m", "-Xshare:auto")

LANGUAGES: dict[str, Language] = {
    "python": Language("python", "", "main.py"),
    "c": Language("c", "gcc", "main.c", ("gcc", "-O2", "-std=gnu17", "-o", "main", "main.c", "-lm"), build="main",
                  tools=("gcc",)),
    "cpp": Language("cpp", "g++", "main.cpp", ("g++", "-O2", "-std=gnu++17", "-o", "main", "main.cpp", "-lm"),
                    build="main", tools=("g++",)),
    "java": Language(
        "java", "default-jdk-headless", "Main.java",
        ("javac", "-J-Xmx{memory}m", "-J-XX:+UseSerialGC", "-J-XX:TieredStopAtLevel=1", "-J-XX:ActiveProcessorCount=2",
         "-encoding", "UTF-8", "-Xlint:none", "-nowarn", "-d", "classes", "{source}"),
        build="main.jar", package_dir="classes",
        run=("java", "-Xmx{memory}m", "-Xss64m", *_JVM, "-cp", "{build}", "{main}"),
        tools=("javac", "java"), reserve_mb=1024, resident_mb=192, threads=24,
        host_paths=("/etc/java-*",), error_pattern=r"^\S+\.java:\d+: error: ",
    ),
    "go": Language(
        "go", "golang-go", "main.go", ("go", "build", "-o", "main", "."), build="main", tools=("go",),
        env=_GO_ENV, reserve_mb=1024, resident_mb=32, threads=16, error_pattern=r"^\S*main\.go:\d+:\d+: ",
    ),
    "rust": Language(
        "rust", "rustc", "main.rs",
        ("rustc", "-O", "--edition", "2021", "-C", "strip=symbols", "-o", "main", "main.rs"),
        build="main", tools=("rustc", "cc"), threads=16, error_pattern=r"^error(\[E\d+\])?: ",
    ),
    "javascript": Language(
        "javascript", "nodejs", "main.js", ("node", "--check", "main.js"), build="main.js",
        run=("node", "--max-old-space-size={memory}", "--stack-size=7000", "{build}"), tools=("node",),
        env={"UV_THREADPOOL_SIZE": "2", "NODE_OPTIONS": ""}, reserve_mb=1536, resident_mb=96, threads=16,
        error_pattern=r"^\w*Error: ",
    ),
}


def language(name: str) -> Language:
    try:
        return LANGUAGES[name]
    except KeyError:
        raise KeyError(f"unknown language {name!r}; supported: {', '.join(LANGUAGES)}") from None


@functools.lru_cache(maxsize=64)
def toolchain_problem(name: str, path: str = SANDBOX_PATH) -> str | None:
    """Why ``name``'s programs cannot build or run on this machine (its tools looked up on ``path``), or
    ``None`` when they can."""
    spec = language(name)
    missing = [tool for tool in spec.tools if shutil.which(tool, path=path) is None]
    if not missing:
        return None
    return (f"{name}: {', '.join(missing)} not found on {path}; install the Debian package "
            f"{spec.package!r} (apt-get install {spec.package})")


def host_paths(names: tuple[str, ...] | list[str] | None = None) -> list[str]:
    """Host folders the toolchains read outside /usr (the JDK's /etc/java-17-openjdk), existing ones only."""
    import glob

    found: list[str] = []
    for name in names if names is not None else LANGUAGES:
        for pattern in LANGUAGES[name].host_paths:
            found += [path for path in sorted(glob.glob(pattern)) if os.path.isdir(path) and path not in found]
    return found


def first_compile_error(language_name: str, stderr: str, limit: int = 300) -> str:
    """The compiler's first error in its output (its first line), or the first non-empty line."""
    pattern = re.compile(language(language_name).error_pattern, re.M)
    lines = [line.strip() for line in stderr.splitlines() if line.strip()]
    found = next((line for line in lines if pattern.search(line)), lines[0] if lines else "")
    return found[:limit]
