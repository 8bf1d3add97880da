"""koe's C extension, the build this CPU runs: the wheel holds one for the x86-64-v3 level (AVX2, FMA, BMI1/2,
...; a conversion takes a fifth less CPU time) and one for any x86-64, so it never stops with SIGILL on an older
CPU. The bin/koe launcher of `make dist`'s tarball (packaging/koe.sh) makes the same choice."""

import importlib

# x86-64-v3's features beyond the baseline (its own and x86-64-v2's), as /proc/cpuinfo names them (abm: LZCNT).
X86_64_V3_FEATURES = frozenset({
    "cx16", "lahf_lm", "popcnt", "sse4_1", "sse4_2", "ssse3",
    "avx", "avx2", "bmi1", "bmi2", "f16c", "fma", "abm", "movbe", "xsave",
})


def cpu_features():
    """The CPU's feature flags in /proc/cpuinfo; none where it cannot be read, so the baseline build is chosen."""
    try:
        with open("/proc/cpuinfo") as cpuinfo:
            for line in cpuinfo:
                if line.startswith("flags"):
                    return set(line.partition(":")[2].split())
    except OSError:
        pass
    return set()


extension = importlib.import_module(
    "._koe_x86_64_v3" if X86_64_V3_FEATURES <= cpu_features() else "._koe_x86_64", __package__)
