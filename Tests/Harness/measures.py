"""What the plugin and live tests measure on audio: F0 ratio (Praat, through parselmouth), delay (cross-correlation)
and level; and the bar on koe live's own work. Shared by Tests/Plugins and Tests/VirtualMic."""

import collections
import re

import numpy as np
import parselmouth

PITCH_STEP = 0.01          # s between Praat's F0 frames
PITCH_FLOOR = 60.0         # Hz
PITCH_CEILING = 800.0      # Hz: a voice raised by 1.2 stays under it
MIN_VOICED_FRAMES = 10     # fewer jointly voiced frames than this measure nothing
ENVELOPE_WINDOW = 0.020    # s
# koe live's summary gives its busiest block (wall time, as a share of the block's duration: what the deadline
# sees), the most CPU time its thread spent on one block (its own work) and the blocks in which it waited. koe
# misses a deadline of its own when it refuses a block, waits (a lock, a sleep: a real-time callback never does)
# or works longer than WORK_SHARE on a block: under it koe leaves half of every cycle to the server and the other
# clients. koe's most work at 48 kHz in 512 frames with speech, over 20 starts of 5 s on a 2-core AVX-512 virtual
# machine (load 0.3-1.2): median 10.6 %, at most 23.6 %; built for AVX2 alone, median 15.4 %, at most 42.6 % (a
# lone block: on one thread koe's worst block takes 12.6 % and 14.1 %). A koe that holds up a cycle fails. An xrun,
# or a busiest block over the bar, with koe's own work within it and no wait is the system's: koe's thread woken
# late, preempted or its CPU shared (in those starts the busiest block reached 47 % and 126 %, xruns came in 13 of
# 40, while koe's work stayed at 24 % and 21 %).
# koe's work is its thread's CPU time (CLOCK_THREAD_CPUTIME_ID), which also holds what the system does on that
# thread: interrupts (no IRQ time accounting on the kernels measured) and, in a virtual machine, the hypervisor's
# work for it. Under buffered disk writes one block in about three 5 s starts read 140 to 700 % there, where koe's
# own work on the same input stays under 16 %; a test that can give koe the same input again does so before it
# calls a block over the bar koe's (Tests/Plugins/live_test.py's starts).
WORK_SHARE = 0.5
SYSTEM_LATE = "the system's: koe's thread woken late or preempted while its own work stayed within the bar"
# On a shared virtual machine a neighbour's burst can slow every block for half a minute: one session read koe's
# most work at 69.7 % and then 50.7 % on the same speech, the hypervisor taking 6 to 10 % of the CPUs a minute
# later, and 20.2 % and 32.4 % in the runs before and after. A block over the bar is koe's only when it comes in
# this many runs.
SAME_SPEECH_RUNS = 3

SUMMARY = re.compile(r"live: ([\d.]+) s, xruns (\d+), refused blocks (\d+), busiest block ([\d.]+) % of its time "
                     r"\(([\d.]+) s in\), most work ([\d.]+) %, blocks waited (\d+), latency ([\d.]+) ms")
# koe live's summary line: seconds, xruns, refused blocks, the busiest block and koe's most work (shares of a
# block's duration), where the busiest block started (s), the blocks it waited in, its latency (s).
Summary = collections.namedtuple("Summary", "seconds xruns refused busiest at work waited latency")


def live_summary(log):
    """koe live's summary line in `log`, or None."""
    found = SUMMARY.search(log)
    if found is None:
        return None
    return Summary(float(found.group(1)), int(found.group(2)), int(found.group(3)), float(found.group(4)) / 100,
                   float(found.group(5)), float(found.group(6)) / 100, int(found.group(7)),
                   float(found.group(8)) / 1000)


def koe_late(summary):
    """Whether koe missed a deadline of its own: a block refused, a wait, or its work on a block over the bar."""
    return summary.refused > 0 or summary.waited > 0 or summary.work > WORK_SHARE


def judged_over_runs(summary, said, rerun):
    """`summary`, the first run's, judged over up to SAME_SPEECH_RUNS runs of the same speech: a block over the bar,
    with no block refused and no wait, is koe's only when every run has one. `rerun(run)` plays the speech through
    a new koe and returns its summary; `said`, `lateness`'s words for the first run. The last run's summary, and the
    words for all."""
    runs = 1
    while koe_late(summary) and not summary.refused and not summary.waited and runs < SAME_SPEECH_RUNS:
        runs += 1
        summary = rerun(runs)
        said = (said.removesuffix(": koe's") + f"; koe run {runs} on the same speech: its most work "
                f"{100 * summary.work:.1f} %")
    if runs > 1:
        said += ": koe's" if koe_late(summary) else ": the runs before it were the system's"
    return summary, said


def lateness(summary, xruns):
    """The summary's figures against the bar, and whose any lateness was."""
    said = (f"refused blocks {summary.refused}, blocks waited {summary.waited}, koe's busiest block "
            f"{100 * summary.busiest:.1f} % of its time ({summary.at:.2f} s in), its most work "
            f"{100 * summary.work:.1f} % "
            f"(bar: none refused or waited, work at most {100 * WORK_SHARE:.0f} %)")
    if koe_late(summary):
        return said + ": koe's"
    if xruns or summary.busiest > WORK_SHARE:
        return f"{said}: {SYSTEM_LATE}"
    return said


def f0_track(samples, rate):
    pitch = parselmouth.Sound(samples.astype(np.float64), rate).to_pitch(
        time_step=PITCH_STEP, pitch_floor=PITCH_FLOOR, pitch_ceiling=PITCH_CEILING)
    return pitch.selected_array["frequency"]


def aligned(source, changed, delay):
    """The parts of both that line up when the output lags by `delay` frames (which may be negative)."""
    if delay < 0:
        source, changed, delay = changed, source, -delay
        count = min(len(changed), len(source) - delay)
        return changed[:count], source[delay:delay + count]
    count = min(len(source), len(changed) - delay)
    return source[:count], changed[delay:delay + count]


def f0_ratio(source, changed, rate, delay):
    """The median of output F0 / input F0 over the frames Praat calls voiced in both, the output read `delay`
    frames late; and how many frames that is."""
    source, changed = aligned(source, changed, delay)
    before = f0_track(source, rate)
    after = f0_track(changed, rate)
    count = min(len(before), len(after))
    both = (before[:count] > 0) & (after[:count] > 0)
    if both.sum() < MIN_VOICED_FRAMES:
        return float("nan"), int(both.sum())
    return float(np.median(after[:count][both] / before[:count][both])), int(both.sum())


def lag(reference, signal, max_lag):
    """The lag in frames (-max_lag...max_lag) at which `signal` best matches `reference`, by cross-correlation,
    and the normalised correlation of the two over the frames they share at that lag."""
    size = 1 << (len(reference) + len(signal)).bit_length()
    correlation = np.fft.irfft(np.fft.rfft(signal, size) * np.conj(np.fft.rfft(reference, size)), size)
    lags = np.concatenate([np.arange(0, max_lag + 1), np.arange(-max_lag, 0)])
    values = np.concatenate([correlation[:max_lag + 1], correlation[size - max_lag:]])
    best = int(lags[int(np.argmax(values))])
    before, after = (part.astype(np.float64) for part in aligned(reference, signal, best))
    norm = np.linalg.norm(before) * np.linalg.norm(after)
    return best, float(np.dot(before, after) / norm) if norm > 0 else 0.0


def envelope(samples, rate):
    """RMS over a sliding 20 ms window, mean removed: the syllables' shape, which a vocoder keeps in time. A
    vocoder rebuilds each period's phase and places its own pulses, so the waveform itself can match the input
    several milliseconds early or late (WORLD's own resynthesis does, by up to half a period)."""
    width = max(1, int(rate * ENVELOPE_WINDOW))
    power = np.convolve(samples.astype(np.float64) ** 2, np.ones(width) / width, mode="same")
    rms = np.sqrt(np.maximum(power, 0))
    return rms - rms.mean()


def envelope_delay(source, changed, rate, max_lag):
    return lag(envelope(source, rate), envelope(changed, rate), max_lag)[0]


def level_db(source, changed, delay):
    """The output's level against the input's, in dB, over the frames both cover once aligned."""
    before, after = (part.astype(np.float64) for part in aligned(source, changed, delay))
    return float(10 * np.log10(np.mean(after ** 2) / np.mean(before ** 2)))
