#!/usr/bin/env python3
"""The soak: an hour of 48 kHz speech through one VoiceChanger, as a live host runs it.

Builds Tests/Library's client package (it imports only `Koe`) and runs its koe-soak: 480-frame blocks through
the pointer form, a settings change every second (pitch, formant, gain, pitch range, an EQ band, presets).
Checks that no output sample is NaN or infinite and that resident memory stays flat: after the first minute
(buffers reach their working size), it grows by at most 2 % to the end. Prints the memory each minute.
Allocation per block is `make bench-micro`'s bar (the VoiceChanger benchmark's threshold), not this one's.
Usage: bench/soak.py [--minutes 60]
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile

import soundfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "Tests/Library"))
from library_test import build  # noqa: E402

GROWTH = 0.02


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--minutes", type=int, default=60)
    parser.add_argument("--input", default=os.path.join(ROOT, "samples/en-f-48k.wav"))
    args = parser.parse_args()

    speech, rate = soundfile.read(args.input, dtype="float32")
    assert rate == 48000 and speech.ndim == 1, "the soak's speech is 48 kHz mono"
    with tempfile.TemporaryDirectory() as folder:
        products = build(os.path.join(folder, "package"), os.path.join(ROOT, ".build/library-client"))
    run = subprocess.run([os.path.join(products, "koe-soak"), str(args.minutes)], input=speech.tobytes(),
                         capture_output=True)
    if run.returncode != 0:
        sys.exit(f"soak: koe-soak failed: {run.stderr.decode().strip()}")
    minutes = [json.loads(line) for line in run.stdout.decode().splitlines()]
    for minute in minutes:
        print(f"minute {minute['minute']:3d}: RSS {minute['rss_kib'] / 1024:7.1f} MiB, "
              f"{minute['non_finite']} non-finite samples, peak {minute['peak']:.3f}, {minute['seconds']:.0f} s")
    first, last = minutes[0], minutes[-1]
    growth = last["rss_kib"] / first["rss_kib"] - 1
    audio = args.minutes * 60
    failures = []
    if len(minutes) != args.minutes:
        failures.append(f"{len(minutes)} of {args.minutes} minutes reported")
    if last["non_finite"]:
        failures.append(f"{last['non_finite']} non-finite samples")
    if growth > GROWTH:
        failures.append(f"RSS grew {growth * 100:.1f} % after the first minute (at most {GROWTH * 100:.0f} %)")
    print(f"soak: {audio / 60:.0f} min of audio in {last['seconds']:.0f} s ({audio / last['seconds']:.1f}x real time); "
          f"RSS {first['rss_kib'] / 1024:.1f} MiB after minute 1, {last['rss_kib'] / 1024:.1f} MiB at the end "
          f"({growth * 100:+.2f} %); {last['non_finite']} non-finite samples")
    for failure in failures:
        print(f"FAIL {failure}")
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
