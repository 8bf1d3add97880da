#!/usr/bin/env python3
"""Memory bar of issue 3: converting a 10-minute 48 kHz mono file, file to file and through a pipe, peaks
at <= 100 MB resident, and memory does not grow with the input's length.

Long inputs are made with sox by concatenating the shared corpus and samples/*.wav (resampled to 48 kHz
mono, 16-bit) and repeating the result up to 2 and 10 minutes. Each koe run's peak RSS is the ru_maxrss
that wait4(2) reports for that process alone. The pipe run is `sox ... -t raw - | koe - - ... | (reader)`.
Growth is the 10-minute peak minus the 2-minute peak (allowed: 5 MB).

Usage: python3 bench/memory.py [--koe .build/release/koe] [--options "--pitch 1.2 --formant 1.1"]
Exit status 1 if a bar fails.
"""

import os
import shlex
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

from common import REPO, corpus_parser, ensure_debian_packages, parse_with_koe, raw_options

RATE = 48000
BAR_BYTES = 100e6
GROWTH_BYTES = 5e6


def make_speech(corpus, folder, minutes):
    """All the speech there is at 48 kHz, back to back, repeated and cut to `minutes`."""
    pieces = []
    sources = (sorted(corpus.glob("*.wav")) if corpus else []) + sorted((REPO / "samples").glob("*.wav"))
    for index, source in enumerate(sources):
        piece = folder / f"piece{index}.wav"
        subprocess.run(["sox", str(source), "-r", str(RATE), "-c", "1", "-b", "16", str(piece)], check=True)
        pieces.append(str(piece))
    once = folder / "speech.wav"
    subprocess.run(["sox", *pieces, str(once)], check=True)
    seconds = float(subprocess.run(["soxi", "-D", str(once)], capture_output=True, text=True, check=True).stdout)
    inputs = {}
    for length in minutes:
        target = folder / f"speech-{length}min.wav"
        repeats = int(length * 60 / seconds) + 1
        subprocess.run(["sox", str(once), str(target), "repeat", str(repeats), "trim", "0", str(length * 60)], check=True)
        inputs[length] = target
    return inputs


def peak_of(process):
    """Waits for `process` and returns (exit status, its peak RSS in bytes); ru_maxrss is in KiB on Linux."""
    _, status, usage = os.wait4(process.pid, 0)
    process.returncode = os.waitstatus_to_exitcode(status)
    return process.returncode, usage.ru_maxrss * 1024


def file_to_file(koe, source, folder, options):
    target = folder / "out.wav"
    process = subprocess.Popen([str(koe), str(source), str(target), "--quiet", *options], stderr=subprocess.PIPE)
    stderr = process.stderr.read()
    status, peak = peak_of(process)
    if status != 0:
        sys.exit(f"koe failed: {stderr.decode().strip()}")
    target.unlink()
    return peak


def through_pipe(koe, source, options):
    raw = ["-t", "raw", "-e", "signed", "-b", "16", "-c", "1", "-r", str(RATE)]
    sox = subprocess.Popen(["sox", str(source), *raw, "-"], stdout=subprocess.PIPE)
    process = subprocess.Popen([str(koe), "-", "-", *raw_options(RATE), *options], stdin=sox.stdout, stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE)
    sox.stdout.close()
    received = [0]

    def reader():
        while data := os.read(process.stdout.fileno(), 1 << 16):
            received[0] += len(data)

    thread = threading.Thread(target=reader)
    thread.start()
    stderr = process.stderr.read()
    status, peak = peak_of(process)
    thread.join()
    sox.wait()
    if status != 0:
        sys.exit(f"koe failed: {stderr.decode().strip()}")
    return peak, received[0] // 2


def megabytes(value):
    return f"{value / 1e6:6.1f} MB"


def main():
    parser = corpus_parser(__doc__.split("\n\n")[0])
    parser.add_argument("--options", default="--pitch 1.2 --formant 1.1", help="conversion options")
    parser.add_argument("--minutes", type=float, nargs=2, default=[2, 10], metavar=("SHORT", "LONG"),
                        help="the two input lengths compared")
    arguments = parse_with_koe(parser)
    ensure_debian_packages([("sox", "sox")])
    options = shlex.split(arguments.options)

    peaks = {}
    with tempfile.TemporaryDirectory(prefix="koe-memory-") as scratch:
        folder = Path(scratch)
        inputs = make_speech(arguments.corpus, folder, arguments.minutes)
        print(f"koe IN OUT {' '.join(options)}   and   sox IN -t raw - | koe - - --type raw ... {' '.join(options)}")
        print(f"{'input':>8} {'mode':>6} {'peak RSS':>10} {'seconds':>8}")
        for minutes, source in inputs.items():
            start = time.perf_counter()
            peaks[(minutes, "file")] = file_to_file(arguments.koe, source, folder, options)
            print(f"{minutes:5g} min {'file':>6} {megabytes(peaks[(minutes, 'file')]):>10} {time.perf_counter() - start:8.1f}")
            start = time.perf_counter()
            peaks[(minutes, "pipe")], frames = through_pipe(arguments.koe, source, options)
            expected = round(minutes * 60 * RATE)
            note = "" if frames == expected else f"  (output {frames} frames, expected {expected})"
            print(f"{minutes:5g} min {'pipe':>6} {megabytes(peaks[(minutes, 'pipe')]):>10} {time.perf_counter() - start:8.1f}{note}")

    shortest, longest = sorted(arguments.minutes)
    failures = 0
    print()
    for mode in ["file", "pipe"]:
        peak = peaks[(longest, mode)]
        growth = peak - peaks[(shortest, mode)]
        within = peak <= BAR_BYTES
        steady = growth <= GROWTH_BYTES
        failures += (not within) + (not steady)
        print(f"{'PASS' if within else 'FAIL'}  {mode}: peak RSS at {longest:g} min {megabytes(peak).strip()} (bar 100 MB)")
        print(f"{'PASS' if steady else 'FAIL'}  {mode}: growth {shortest:g} -> {longest:g} min {growth / 1e6:+.1f} MB (allowed +5 MB)")
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
