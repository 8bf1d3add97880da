#!/usr/bin/env python3
"""Two builds of koe give the same bytes: the native release build and the one the unit tests ran (built for
x86-64-v3, what an AVX2 CPU runs, where this CPU has AVX2; see the Makefile's TEST_CPU).

Usage: python3 Tests/Conformance/same_output.py KOE_A KOE_B

The vector kernels have a form for AVX-512 (Sources/CAVX512) and a generic one, which do the same operations in the
same order; Swift fuses no multiply and add unasked; FFTW plans from the same wisdom on both. So every conversion
and analysis must be identical byte for byte, and conformance to WORLD, measured on one build, holds for both.

For each of samples/*.wav: `koe convert` with --pitch 1.2 --formant 1.1 on the DIO path (the default), the
Harvest path and --live, one thread and two, and `koe analyze` (f0, sp and ap as .npy). One PASS or FAIL line
each; the last line reads `same output: N passed, M failed`; exits 1 when one differs.
"""

import subprocess
import sys
import tempfile
from pathlib import Path

REPOSITORY = Path(__file__).resolve().parents[2]
CONVERSIONS = {
    "dio": ["--threads", "1"],
    "harvest": ["--threads", "1", "--f0-method", "harvest"],
    "live": ["--threads", "1", "--live"],
    "dio, 2 threads": ["--threads", "2"],
}


def run(command):
    result = subprocess.run([str(part) for part in command], capture_output=True, text=True)
    if result.returncode != 0:
        raise RuntimeError(f"{' '.join(map(str, command))} exited {result.returncode}: {result.stderr.strip()}")


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__.strip().splitlines()[2])
    builds = [Path(sys.argv[1]).resolve(), Path(sys.argv[2]).resolve()]
    for build in builds:
        if not build.is_file():
            sys.exit(f"same output: no koe at {build}")
    passed = failed = 0
    with tempfile.TemporaryDirectory(prefix="koe-same-output-") as scratch:
        scratch = Path(scratch)
        for sample in sorted((REPOSITORY / "samples").glob("*.wav")):
            cases = {}
            for name, options in CONVERSIONS.items():
                outputs = [scratch / f"{index}.wav" for index in range(2)]
                for build, output in zip(builds, outputs):
                    run([build, "convert", sample, output, "--pitch", "1.2", "--formant", "1.1", "--quiet",
                         *options])
                cases[f"convert, {name}"] = [output.read_bytes() for output in outputs]
            folders = [scratch / f"analysis{index}" for index in range(2)]
            for build, folder in zip(builds, folders):
                run([build, "analyze", sample, "--output-dir", folder])
            for array in ("f0", "sp", "ap"):
                cases[f"analyze, {array}.npy"] = [(folder / f"{array}.npy").read_bytes() for folder in folders]
            for case, (first, second) in cases.items():
                if first == second:
                    passed += 1
                    print(f"PASS {sample.name}: {case}")
                else:
                    failed += 1
                    differing = sum(a != b for a, b in zip(first, second)) + abs(len(first) - len(second))
                    print(f"FAIL {sample.name}: {case}: {differing} of {len(first)} bytes differ")
    print(f"same output: {passed} passed, {failed} failed")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
