#!/usr/bin/env python3
"""What `import Koe` shows a Swift user, counted: the public symbols of Koe and of everything it re-exports.

swift-symbolgraph-extract lists a module's public symbols (types, members, operators, cases). Koe's own graph
leaves out what Koe re-exports, so each `@_exported import` in Sources/Koe is counted too: a whole module's
graph, or the symbols under one declaration for a scoped import (`@_exported import struct KoeStages.Preset`).
Fails above the budget, so the door cannot creep back open.
"""
import argparse
import functools
import glob
import json
import os
import re
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
EXPORT = re.compile(r"^\s*@_exported\s+import\s+(?:(struct|class|enum|protocol|typealias|func|var|let)\s+)?([\w.]+)", re.M)


@functools.cache
def package_config_includes():
    """The -I flags of the pkg-config packages Package.swift's system libraries name (FFTW's headers are where the
    Makefile built it, found through the PKG_CONFIG_PATH it exports)."""
    names = re.findall(r'pkgConfig:\s*"([^"]+)"', open(os.path.join(ROOT, "Package.swift")).read())
    found = subprocess.run(["pkg-config", "--cflags-only-I", *names], capture_output=True, text=True)
    if found.returncode != 0:
        sys.exit(f"public_symbols: pkg-config could not find {' '.join(names)}: {found.stderr.strip()}")
    return found.stdout.split()


def symbols(module, modules_dir, march, output):
    """The public symbols of `module`, as path strings such as 'VoiceChanger.pitch'. `march` is the CPU the build
    was compiled for: its modules import CAVX2 or CAVX512 only where the CPU has AVX2 or AVX-512."""
    includes = ["-I", modules_dir] + [arg for d in glob.glob(os.path.join(ROOT, "Sources/C*")) for arg in ("-I", d)]
    extracted = subprocess.run(
        ["swift-symbolgraph-extract", "-module-name", module, "-target", "x86_64-unknown-linux-gnu",
         "-minimum-access-level", "public", "-output-dir", output, "-Xcc", f"-march={march}"]
        + includes + package_config_includes(),
        capture_output=True, text=True)
    if extracted.returncode != 0:
        sys.exit(f"public_symbols: swift-symbolgraph-extract failed on {module}:\n{extracted.stderr.strip()}")
    graph = json.load(open(os.path.join(output, module + ".symbols.json")))
    return [".".join(symbol["pathComponents"]) for symbol in graph["symbols"]]


def exports():
    """(module, declaration or None) for each `@_exported import` in Sources/Koe."""
    found = []
    for path in sorted(glob.glob(os.path.join(ROOT, "Sources/Koe/*.swift"))):
        for kind, name in EXPORT.findall(open(path).read()):
            module, _, declaration = name.partition(".")
            found.append((module, declaration if kind else None))
    return found


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--modules", default=os.path.join(ROOT, ".build/debug/Modules"),
                        help="the build's Modules folder (swift build or swift test makes it)")
    parser.add_argument("--march", default="x86-64", help="the CPU the build was compiled for (clang's -march)")
    parser.add_argument("--budget", type=int, default=180)
    parser.add_argument("--list", action="store_true", help="print every symbol counted")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as output:
        counted = {"Koe": symbols("Koe", args.modules, args.march, output)}
        graphs = {}
        for module, declaration in exports():
            graphs.setdefault(module, symbols(module, args.modules, args.march, output))
            key = module if declaration is None else f"{module}.{declaration}"
            counted[key] = [s for s in graphs[module]
                            if declaration is None or s == declaration or s.startswith(declaration + ".")]
    total = sum(len(names) for names in counted.values())
    for key, names in counted.items():
        print(f"  {key}: {len(names)}")
        if args.list:
            for name in sorted(names):
                print(f"    {name}")
    verdict = "PASS" if total <= args.budget else "FAIL"
    print(f"{verdict}: import Koe shows {total} public symbols (budget {args.budget})")
    return 0 if total <= args.budget else 1


if __name__ == "__main__":
    sys.exit(main())
