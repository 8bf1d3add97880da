#!/usr/bin/env python3
"""Stage-by-stage timing of koe's WORLD against pyworld on real speech.

Usage: python3 bench/bench.py [--pairs 5] [--seconds 60] [--rates 48000,16000] [--threads 1]

Builds bench/ in release (`swift build -c release --package-path bench`), makes at least
--seconds of speech at each rate (the corpus clips in ../shared/corpus, resampled with sox
and concatenated in turn until long enough; the project's samples/*.wav when the corpus is
absent), then runs koe and pyworld alternately, A B A B, --pairs times. Each koe run is
one `koe-bench` process that times its stages in process after reading the signal; each
pyworld run is timed in this process on the already loaded signal, so neither side pays
for start-up or file reading. Both sides run the same chain: DIO, StoneMask on DIO's F0,
Harvest, then CheapTrick, D4C and synthesis on Harvest's F0. The table shows the median
of each stage: koe seconds, pyworld seconds and pyworld / koe (above 1: koe is faster), by the
wall clock and by CPU time (the process's, all threads). On a machine shared with other work
the wall clock also counts time spent waiting for a core; CPU time does not, so its ratio is
the steadier of the two. --threads shares CheapTrick's and D4C's frames among that many
threads (the results are the same for any count).
"""

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from itertools import cycle
from pathlib import Path

import numpy as np
import pyworld
import soundfile

BENCH = Path(__file__).resolve().parent
REPOSITORY = BENCH.parent
STAGES = ("dio", "stonemask", "harvest", "cheaptrick", "d4c", "synthesis")
FRAME_PERIOD = 5.0


def build():
    command = ["swift", "build", "-c", "release", "--package-path", str(BENCH)]
    print("building:", " ".join(command), flush=True)
    subprocess.run(command, check=True)
    path = subprocess.run(command + ["--show-bin-path"], check=True, capture_output=True, text=True)
    return Path(path.stdout.strip()) / "koe-bench"


def source_clips(corpus):
    clips = sorted(corpus.glob("*.wav")) if corpus.is_dir() else []
    if clips:
        return clips, f"corpus {corpus}"
    clips = sorted((REPOSITORY / "samples").glob("*.wav"))
    if clips:
        return clips, f"samples (corpus not found at {corpus})"
    sys.exit(f"bench: no speech found (neither {corpus} nor {REPOSITORY / 'samples'} holds wav files)")


def make_speech(clips, rate, seconds, workdir):
    """At least `seconds` of mono speech at `rate`: the clips resampled, then concatenated in turn."""
    resampled = []
    for index, clip in enumerate(clips):
        path = workdir / f"clip{index}_{rate}.wav"
        subprocess.run(["sox", "-D", str(clip), "-r", str(rate), "-c", "1", str(path)], check=True)
        resampled.append((path, soundfile.info(str(path)).frames))
    chosen, total = [], 0
    for path, frames in cycle(resampled):
        if total >= seconds * rate:
            break
        chosen.append(str(path))
        total += frames
    speech = workdir / f"speech_{rate}.wav"
    subprocess.run(["sox", "-D", *chosen, str(speech)], check=True)
    signal, actual_rate = soundfile.read(str(speech), dtype="float64")
    assert actual_rate == rate
    raw = workdir / f"speech_{rate}.f64"
    signal.astype("<f8").tofile(raw)
    return np.ascontiguousarray(signal), raw


def run_koe(binary, raw, rate, threads):
    """Wall-clock and CPU seconds per stage of one koe-bench process."""
    command = [str(binary), str(raw), str(rate), str(threads)]
    report = json.loads(subprocess.run(command, check=True, capture_output=True, text=True).stdout)
    return report["stages"], report["cpu"]


def run_pyworld(signal, rate):
    """Wall-clock and CPU seconds per stage of pyworld, in this process on the loaded signal."""
    wall, cpu = {}, {}

    def timed(name, body):
        start, start_cpu = time.perf_counter(), time.process_time()
        result = body()
        wall[name] = time.perf_counter() - start
        cpu[name] = time.process_time() - start_cpu
        return result

    f0, time_axis = timed("dio", lambda: pyworld.dio(signal, rate, frame_period=FRAME_PERIOD))
    timed("stonemask", lambda: pyworld.stonemask(signal, f0, time_axis, rate))
    f0, time_axis = timed("harvest", lambda: pyworld.harvest(signal, rate, frame_period=FRAME_PERIOD))
    spectrogram = timed("cheaptrick", lambda: pyworld.cheaptrick(signal, f0, time_axis, rate))
    aperiodicity = timed("d4c", lambda: pyworld.d4c(signal, f0, time_axis, rate))
    timed("synthesis", lambda: pyworld.synthesize(f0, spectrogram, aperiodicity, rate, FRAME_PERIOD))
    return wall, cpu


def median_row(name, koe_runs, pyworld_runs, pick):
    """(name, koe wall, pyworld wall, koe CPU, pyworld CPU), each the median over runs of `pick(timings)`."""
    def median(runs, kind):
        return statistics.median(pick(run[kind]) for run in runs)
    return (name, median(koe_runs, 0), median(pyworld_runs, 0), median(koe_runs, 1), median(pyworld_runs, 1))


def bench_rate(binary, signal, raw, rate, pairs, threads):
    koe_runs, pyworld_runs = [], []
    for pair in range(pairs):
        koe_runs.append(run_koe(binary, raw, rate, threads))
        pyworld_runs.append(run_pyworld(signal, rate))
        print(f"  {rate} Hz pair {pair + 1}/{pairs}: koe {sum(koe_runs[-1][0].values()):.2f} s, "
              f"pyworld {sum(pyworld_runs[-1][0].values()):.2f} s", file=sys.stderr, flush=True)
    rows = [median_row(stage, koe_runs, pyworld_runs, lambda timings, stage=stage: timings[stage]) for stage in STAGES]
    rows.append(median_row("all stages", koe_runs, pyworld_runs, lambda timings: sum(timings.values())))
    return rows


def print_table(rate, seconds, pairs, threads, rows):
    print(f"\n{rate} Hz, {seconds:.1f} s of speech, median of {pairs} alternating pairs, "
          f"koe CheapTrick/D4C on {threads} thread{'s' if threads > 1 else ''}")
    print(f"{'stage':<12} {'koe s':>9} {'pyworld s':>10} {'ratio':>7} {'koe cpu s':>10} {'pyworld cpu s':>14} {'ratio':>7}")

    def ratio(reference, value):
        return reference / value if value > 0 else float("inf")

    for stage, koe_wall, pyworld_wall, koe_cpu, pyworld_cpu in rows:
        print(f"{stage:<12} {koe_wall:9.3f} {pyworld_wall:10.3f} {ratio(pyworld_wall, koe_wall):7.2f} "
              f"{koe_cpu:10.3f} {pyworld_cpu:14.3f} {ratio(pyworld_cpu, koe_cpu):7.2f}")


def parse_arguments():
    parser = argparse.ArgumentParser(description="koe against pyworld, stage by stage.")
    parser.add_argument("--pairs", type=int, default=5, help="alternating koe/pyworld runs per rate (default 5)")
    parser.add_argument("--seconds", type=float, default=60.0, help="least length of speech (default 60)")
    parser.add_argument("--rates", type=lambda text: [int(rate) for rate in text.split(",")],
                        default=[48000, 16000], help="comma-separated rates (default 48000,16000)")
    parser.add_argument("--corpus", type=Path, default=REPOSITORY.parent / "shared" / "corpus",
                        help="folder of real speech wavs (default: ../shared/corpus beside the repository)")
    parser.add_argument("--koe-bench", type=Path, help="use this koe-bench binary instead of building one")
    parser.add_argument("--threads", type=int, default=1,
                        help="threads for koe's CheapTrick and D4C (default 1, as the per-stage bars are measured)")
    return parser.parse_args()


def main():
    arguments = parse_arguments()
    binary = arguments.koe_bench or build()
    clips, origin = source_clips(arguments.corpus)
    print(f"speech from {origin}", flush=True)
    with tempfile.TemporaryDirectory(prefix="koe-bench-") as scratch:
        for rate in arguments.rates:
            signal, raw = make_speech(clips, rate, arguments.seconds, Path(scratch))
            rows = bench_rate(binary, signal, raw, rate, arguments.pairs, arguments.threads)
            print_table(rate, len(signal) / rate, arguments.pairs, arguments.threads, rows)
            sys.stdout.flush()


if __name__ == "__main__":
    main()
