"""Builds koe's Python extension: `swift build` makes the C ABI (Sources/KoeC) as one static archive, the C
extension (python/koe/_koe.c) is compiled as usual and linked with swiftc the way the Makefile's `plugins`
target links the plugins: the archive whole, the toolchain's static Swift runtime and its other archives as one
group, -static-stdlib, only the module init exported, -Bsymbolic, so the wheel runs without a Swift toolchain.
FFTW is the one pkg-config names: the Makefile's static build under `make wheel`, else the system's. libsndfile
comes from the system (Debian libsndfile1)."""

import json
import os
import re
import subprocess
from pathlib import Path

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

ROOT = Path(__file__).resolve().parent
SWIFT = os.environ.get("SWIFT", "swift")
SWIFTC = os.environ.get("SWIFTC", "swiftc")
TARGET_CPU = os.environ.get("TARGET_CPU", "native")


def version():
    """`koe --version`'s: the CLI's version, and the git commit as a local label (`.dirty` when the sources
    differ from it), as Sources/KoeBuildInfo reads it."""
    base = re.search(r'static let version = "([^"]+)"', (ROOT / "Sources/koe/Koe.swift").read_text()).group(1)
    try:
        commit = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short=7", "HEAD"], check=True,
                                capture_output=True, text=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return base
    dirty = subprocess.run(["git", "--no-optional-locks", "-C", str(ROOT), "diff", "--quiet", "HEAD", "--",
                            "Sources", "Package.swift"]).returncode != 0
    return f"{base}+g{commit}" + (".dirty" if dirty else "")


def static_archives():
    """The toolchain's static archives (the Swift runtime, Dispatch, Synchronization, ...)."""
    info = json.loads(subprocess.run([SWIFTC, "-print-target-info"], check=True, capture_output=True, text=True).stdout)
    folder = Path(info["paths"]["runtimeResourcePath"] + "_static") / "linux"
    return sorted(str(path) for path in folder.glob("*.a"))


class SwiftBuildExt(build_ext):
    def build_extension(self, ext):
        archive = ROOT / ".build/release/libKoeC.a"
        # SwiftPM adds to an existing archive (stale objects would link twice); a fresh one holds the current ones.
        archive.unlink(missing_ok=True)
        subprocess.run([SWIFT, "build", "-c", "release", "-Xswiftc", "-target-cpu", "-Xswiftc", TARGET_CPU,
                        "--product", "KoeC"], cwd=ROOT, check=True)
        objects = self.compiler.compile(ext.sources, output_dir=self.build_temp, include_dirs=ext.include_dirs,
                                        extra_postargs=["-O2", "-fPIC", "-Wall", "-Wextra", "-std=c11"])
        output = Path(self.get_ext_fullpath(ext.name))
        output.parent.mkdir(parents=True, exist_ok=True)
        libraries = subprocess.run(["pkg-config", "--libs", "fftw3", "sndfile"], check=True, capture_output=True,
                                   text=True).stdout.split()
        group = [flag for path in static_archives() for flag in ("-Xlinker", path)]
        command = [SWIFTC, "-emit-library", "-static-stdlib", "-o", str(output), *objects,
                   "-Xlinker", "--whole-archive", str(archive), "-Xlinker", "--no-whole-archive",
                   "-Xlinker", "--start-group", *group, "-Xlinker", "--end-group", *libraries,
                   "-Xlinker", f"--version-script={ROOT / 'python/koe/exports.map'}",
                   "-Xlinker", "-Bsymbolic", "-Xlinker", "-z", "-Xlinker", "nodelete", "-Xlinker", "--strip-all"]
        print("linking", output)
        subprocess.run(command, check=True)


setup(
    version=version(),
    ext_modules=[Extension("koe._koe", sources=["python/koe/_koe.c"], include_dirs=["Sources/KoeC/include"])],
    cmdclass={"build_ext": SwiftBuildExt},
)
