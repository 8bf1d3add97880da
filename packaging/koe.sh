#!/bin/sh
# bin/koe of `make dist`'s tarball: runs the koe built for the x86-64-v3 level (AVX2, FMA, BMI1/2, ...; a
# conversion takes a fifth less CPU time) when this CPU has every feature of that level, else the one built for any
# x86-64, which never stops with SIGILL. python/koe/_native.py makes the same choice for the wheel.
libexec=$(dirname "$(readlink -f "$0")")/../libexec/koe
# x86-64-v3's features beyond the baseline (its own and x86-64-v2's), as /proc/cpuinfo names them (abm: LZCNT).
features="cx16 lahf_lm popcnt sse4_1 sse4_2 ssse3 avx avx2 bmi1 bmi2 f16c fma abm movbe xsave"
cpu_flags=" $(grep -m1 '^flags' /proc/cpuinfo 2>/dev/null | cut -d: -f2) "
level=x86-64-v3
for feature in $features; do
    case $cpu_flags in
        *" $feature "*) ;;
        *) level=x86-64; break ;;
    esac
done
exec "$libexec/koe-$level" "$@"
