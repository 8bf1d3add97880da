"""pyworld as a reference below 15.8 kHz.

There WORLD's D4C voicing test (`D4CLoveTrainSub` in d4c.cpp) sums its power spectrum up to 7900 Hz, past
Nyquist, into a buffer it allocated and never wrote that far. What it adds is whatever the heap held, so pyworld
calls any number of frames unvoiced, from call to call within one process (codec2's 8 kHz speech: none or one of
kristoff's 708 voiced frames here; in CI, enough of big_dog's to move the mean aperiodicity by 23 dB). With that
memory zeroed, WORLD's sums are defined, and koe's D4C computes them.

glibc zeroes what malloc hands out when its perturb tunable is set (to 255: freed bytes become 0xff, allocated
ones their complement), except from the per-thread cache, which is then turned off. glibc reads tunables when a
process starts, so a process that compares with pyworld starts itself again under them.
"""

import os
import sys

ZEROED_HEAP = "glibc.malloc.tcache_count=0:glibc.malloc.perturb=255"


def restart_with_zeroed_heap():
    """Replaces this process by the same command under ZEROED_HEAP, unless it already runs under it."""
    tunables = os.environ.get("GLIBC_TUNABLES", "")
    if ZEROED_HEAP in tunables:
        return
    sys.stdout.flush()
    sys.stderr.flush()
    environment = dict(os.environ, GLIBC_TUNABLES=":".join(filter(None, [tunables, ZEROED_HEAP])))
    os.execve(sys.executable, [sys.executable, *sys.orig_argv[1:]], environment)
