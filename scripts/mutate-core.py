#!/usr/bin/env python3
"""Mutation pass over core's own files (the gates), which gremlins v0.5.0
cannot do alone: it mutates a directory and everything below it, and
./core holds every core package.

Each mutant flips one operator on one line of a non-test file in core/
(== and !=, < and >=, > and <=, && and ||, a leading ! removed), the way
gremlins' conditionals mutators do, then runs `go test ./core` (without the layering test, which no
mutant of these files can change). A mutant
is killed when the tests fail, lives when they pass. Usage, from the
repository root: python3 scripts/mutate-core.py
"""
import pathlib, re, subprocess, sys

FILES = [p for p in sorted(pathlib.Path("core").glob("*.go")) if not p.name.endswith("_test.go")]
SWAPS = [(" == ", " != "), (" != ", " == "), (" < ", " >= "), (" >= ", " < "), (" > ", " <= "), (" <= ", " > "),
         (" && ", " || "), (" || ", " && ")]


def mutants(lines):
    for i, line in enumerate(lines):
        code = line.split("//")[0]
        if not code.strip() or code.lstrip().startswith(("import", "\"")) or "`" in code:
            continue
        for old, new in SWAPS:
            for m in re.finditer(re.escape(old), code):
                yield i, line[:m.start()] + new + line[m.end():], f"{old.strip()} -> {new.strip()}"
        for m in re.finditer(r"(if |&& |\|\| |return )!(?=[A-Za-z(])", code):
            yield i, line[:m.end() - 1] + line[m.end():], "! removed"


def main():
    killed, lived = 0, []
    for path in FILES:
        src = path.read_text()
        lines = src.split("\n")
        for i, mutated, what in mutants(lines):
            path.write_text("\n".join(lines[:i] + [mutated] + lines[i + 1:]))
            try:
                r = subprocess.run(["go", "test", "-count=1", "-timeout", "15s", "-skip", "TestLayering", "./core"], capture_output=True, text=True)
            finally:
                path.write_text(src)
            if r.returncode == 0:
                lived.append(f"{path}:{i + 1}: {what}: {lines[i].strip()}")
            else:
                killed += 1
    total = killed + len(lived)
    print(f"core: killed {killed}, lived {len(lived)}, efficacy {100.0 * killed / max(total, 1):.1f}%")
    for l in lived:
        print("  LIVED", l)
    return 0


if __name__ == "__main__":
    sys.exit(main())
