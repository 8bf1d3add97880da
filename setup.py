"""Builds koe's Python extension: `swift build` makes the C ABI (Sources/KoeC) as one static archive, the C
extension (python/koe/_koe.c) is compiled as usual and linked with swiftc the way the Makefile's `plugins`
target links the plugins: the archive whole, the toolchain's static Swift runtime and its other archives as one
group, -static-stdlib, only the module init exported, -Bsymbolic, so the wheel runs without a Swift toolchain.
It is built twice, for the x86-64-v3 level and for any x86-64 (python/koe/_native.py imports the one the CPU
runs), in `make dist`'s build folders with its flags. FFTW is the one pkg-config names: the Makefile's static build
under `make wheel`, else the system's. libsndfile comes from the system (Debian libsndfile1); `make wheel`'s
auditwheel copies it into the wheel."""

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
# The x86-64 levels the extension is built for: every x86-64 runs the first; the second (AVX2, FMA, BMI1/2, ...)
# converts in a fifth less CPU time.
CPU_LEVELS = ("x86-64", "x86-64-v3")


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


def scratch_path(level):
    """`make dist`'s build folder for LEVEL (the Makefile's DIST_BUILD/LEVEL), relative to ROOT."""
    return f".build-dist/{level}"


def swift_build_flags(level):
    """The Makefile's dist_swift_flags for LEVEL, the same to the letter: `make dist` and the wheel then share one
    build per level, where any other flag would make each rebuild what the other built. Swift's -target-cpu knows
    no x86-64-vN, so the level goes to clang, whose target the Swift code is compiled for."""
    return ["-c", "release", "--scratch-path", scratch_path(level), "--static-swift-stdlib",
            "-Xlinker", "--strip-all", "-Xswiftc", "-Xcc", "-Xswiftc", f"-march={level}"]


class LevelExtension(Extension):
    """The extension built for one x86-64 level, as python/koe/_native.py imports it: koe._koe_x86_64_v3, ..."""

    def __init__(self, level):
        self.level = level
        name = "_koe_" + level.replace("-", "_")
        super().__init__(f"koe.{name}", sources=["python/koe/_koe.c"], include_dirs=["Sources/KoeC/include"],
                         define_macros=[("KOE_EXTENSION", name)])


class SwiftBuildExt(build_ext):
    def build_extension(self, ext):
        archive = ROOT / scratch_path(ext.level) / "release/libKoeC.a"
        # SwiftPM adds to an existing archive (stale objects would link twice); a fresh one holds the current ones.
        archive.unlink(missing_ok=True)
        subprocess.run([SWIFT, "build", *swift_build_flags(ext.level), "--product", "KoeC"], cwd=ROOT, check=True)
        # Each level compiles into a folder of its own: the two objects differ in their module's name.
        objects = self.compiler.compile(ext.sources, output_dir=str(Path(self.build_temp) / ext.level),
                                        macros=ext.define_macros, include_dirs=ext.include_dirs,
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
    ext_modules=[LevelExtension(level) for level in CPU_LEVELS],
    cmdclass={"build_ext": SwiftBuildExt},
)
