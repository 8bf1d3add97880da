#!/usr/bin/env python3
"""The speed bars of issues 4, 24 and 38: koe against WORLD's C++ (pyworld, and WORLD's sources built here with a
driver of ours) and Rubber Band, side by side in one run.

Usage: python3 bench/bench.py [--koe .build/release/koe] [--pairs 5] [--seconds 60] [--rates 48000,16000]
                              [--only stages|conversion|anchor] [--world-march native]
                              [--json .build/bench/results.json]

Input: at least --seconds of real speech at each rate, the corpus clips (../shared/corpus, else samples/*.wav)
resampled with sox and concatenated in turn, as a 16-bit WAV. Every time is the median of --pairs rounds in
which the contenders run one after the other (A B A B ...), so slow spells on a shared machine fall on all; every
ratio (and so every bar) is the median of the rounds' own ratios, each taken between runs of one round. The
ratios of the medians are printed and stored beside them.

1. Stages. koe: one `koe-bench` process per round (bench/Sources/KoeBench, built here in release), timing its
   stages in process after reading the signal; pyworld: timed in this process on the loaded signal. Neither
   pays for start-up or file reading. The chain: DIO, StoneMask on DIO's F0, Harvest, then CheapTrick, D4C and
   synthesis on Harvest's F0, koe on one thread. Wall-clock and CPU seconds (the process's, all threads).
2. Whole conversion, pitch x1.2 and formants x1.1. koe: `koe convert IN OUT --pitch 1.2 --formant 1.1 --quiet
   --f0-method dio|harvest --threads 1|2`, the whole process, file to file. pyworld: the same work in this
   process on the loaded signal (dio + stonemask or harvest, cheaptrick, d4c, F0 x1.2, each envelope row read
   at bin / 1.1 by linear interpolation as koe does, synthesize); reading and writing files not counted.
   Rubber Band: `rubberband -3 -F -f 1.2 IN OUT`, the whole process (its R3 engine, formants preserved).
   At 48 kHz also two 1-thread conversions at once, as separate processes: twice a lone run's time over
   theirs is what the machine's two cores give at that moment, printed beside the 2-thread figure (not a bar).
3. Pipe mode, 48 kHz: the speech as raw signed 16-bit mono from a file on stdin through `koe - - --type raw
   --rate 48000 --encoding signed --bits 16 --channels 1 --pitch 1.2 --formant 1.1 --threads 1` to
   /dev/null; speed = audio seconds / wall seconds.
4. Live mode, 48 kHz: `koe convert IN OUT --live --pitch 1.2 --formant 1.1 --quiet --threads 1`, the whole
   process, file to file, in the conversion rounds; speed = audio seconds / wall seconds.
5. The WORLD C++ anchor (issue 38), in the conversion rounds: `world_convert IN OUT dio|harvest`, the whole
   process, file to file, as koe's is timed; bench/world_convert.cpp does what pyworld's path of part 2 does,
   compiled here with WORLD's src/*.cpp from pyworld's sdist (downloaded into .build/bench/, sha256 checked) by
   g++ -O3 -march=NATIVE (--world-march).

--only runs one part at each rate: `stages` (1), `conversion` (2 to 5), or `anchor` (koe on 1 thread and the
WORLD C++ anchor alone, both F0 paths: issue 38's bars in a short run). Only the bars of what ran are checked.

Prints a table per rate, then one line per bar of issues 4, 24 and 38 with PASS or FAIL, and writes every figure (medians
and each run) as JSON. Wall-clock time on a shared machine also counts time spent waiting for a core; the load
average is printed and stored. Exit status 1 if a bar fails.
"""

import argparse
import hashlib
import json
import math
import os
import platform
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time
import urllib.request
from pathlib import Path

from common import (DEFAULT_KOE, REPO, default_corpus, ensure_debian_packages, ensure_python_packages,
                    make_speech, raw_options, require_koe, run_timed, speech_clips)

ensure_python_packages([("numpy", "numpy"), ("soundfile", "soundfile"), ("pyworld", "pyworld")])
ensure_debian_packages([("sox", "sox"), ("rubberband", "rubberband-cli"), ("g++", "g++")])
import numpy as np  # noqa: E402  (installed above when missing)
import pyworld  # noqa: E402
import soundfile  # noqa: E402

BENCH = Path(__file__).resolve().parent
STAGES = ("dio", "stonemask", "harvest", "cheaptrick", "d4c", "synthesis")
FRAME_PERIOD = 5.0
PITCH = 1.2
FORMANT = 1.1
METHODS = ("dio", "harvest")
PIPE_RATE = 48000
BAR_RATE = 48000
PARTS = ("stages", "conversion", "anchor")
# WORLD's C++ as pyworld ships it: the sdist carries lib/World/src (pinned by its sha256, as PyPI lists it).
WORLD_SDIST = "pyworld-0.3.5"
WORLD_SDIST_URL = ("https://files.pythonhosted.org/packages/a5/0f/c78d631ffbb4c1aaebf80ff2bf9e791213b381dbe404f9ce1a3e"
                   "b3672931/pyworld-0.3.5.tar.gz")
WORLD_SDIST_SHA256 = "1b93e53cddb67a0e4faa34d6cf919ac6c662feb1c8c0ed901d71b595ab396aa3"


def build_koe_bench():
    # Compiled for this CPU, as `make release` compiles koe (TARGET_CPU, exported by the Makefile).
    target_cpu = os.environ.get("TARGET_CPU", "native")
    command = ["swift", "build", "-c", "release", "-Xswiftc", "-target-cpu", "-Xswiftc", target_cpu,
               "--package-path", str(BENCH)]
    print("building:", " ".join(command), flush=True)
    subprocess.run(command, check=True)
    path = subprocess.run(command + ["--show-bin-path"], check=True, capture_output=True, text=True)
    return Path(path.stdout.strip()) / "koe-bench"


def build_world_anchor(march):
    """bench/world_convert.cpp built with WORLD's sources for `march` (g++ -O3), in .build/bench/; its path."""
    folder = REPO / ".build" / "bench"
    folder.mkdir(parents=True, exist_ok=True)
    binary = folder / f"world_convert-{march}"
    driver = BENCH / "world_convert.cpp"
    if binary.exists() and binary.stat().st_mtime > driver.stat().st_mtime:
        return binary
    source = folder / WORLD_SDIST / "lib" / "World" / "src"
    if not source.is_dir():
        sdist = folder / f"{WORLD_SDIST}.tar.gz"
        if not sdist.exists():
            print(f"downloading {WORLD_SDIST_URL}", flush=True)
            urllib.request.urlretrieve(WORLD_SDIST_URL, sdist)
        digest = hashlib.sha256(sdist.read_bytes()).hexdigest()
        if digest != WORLD_SDIST_SHA256:
            sdist.unlink()
            sys.exit(f"{sdist}: sha256 {digest}, expected {WORLD_SDIST_SHA256}")
        with tarfile.open(sdist) as archive:
            for member in archive.getmembers():
                if member.isfile() and member.name.startswith(f"{WORLD_SDIST}/lib/World/src/"):
                    target = folder / member.name
                    target.parent.mkdir(parents=True, exist_ok=True)
                    target.write_bytes(archive.extractfile(member).read())
    command = ["g++", "-O3", f"-march={march}", "-I", str(source), "-o", str(binary), str(driver),
               *sorted(str(path) for path in source.glob("*.cpp"))]
    print("building:", " ".join(command), flush=True)
    subprocess.run(command, check=True)
    return binary


class Speech:
    """One rate's input: the WAV, the signal as loaded, and the forms koe-bench and the pipe read."""

    def __init__(self, clips, rate, seconds, folder):
        self.rate = rate
        self.wav = make_speech(clips, rate, seconds, folder)
        signal, actual_rate = soundfile.read(str(self.wav), dtype="float64")
        assert actual_rate == rate
        self.signal = np.ascontiguousarray(signal)
        self.seconds = len(signal) / rate
        self.float64 = folder / f"speech_{rate}.f64"
        self.signal.astype("<f8").tofile(self.float64)
        self.pcm16 = folder / f"speech_{rate}.s16"
        pcm, _ = soundfile.read(str(self.wav), dtype="int16")
        pcm.astype("<i2").tofile(self.pcm16)
        self.scratch = folder


# MARK: Stages

def koe_stages(binary, speech):
    """Wall-clock and CPU seconds per stage of one koe-bench process, on one thread."""
    command = [str(binary), str(speech.float64), str(speech.rate), "1"]
    report = json.loads(subprocess.run(command, check=True, capture_output=True, text=True).stdout)
    return report["stages"], report["cpu"]


def timer(wall, cpu):
    """A function that runs `body`, records its seconds under `name` in `wall` and `cpu`, and returns its result."""
    def timed(name, body):
        start, start_cpu = time.perf_counter(), time.process_time()
        result = body()
        wall[name] = time.perf_counter() - start
        cpu[name] = time.process_time() - start_cpu
        return result
    return timed


def pyworld_stages(speech):
    """Wall-clock and CPU seconds per stage of pyworld, in this process on the loaded signal."""
    signal, rate = speech.signal, speech.rate
    wall, cpu = {}, {}
    timed = timer(wall, cpu)
    f0, time_axis = timed("dio", lambda: pyworld.dio(signal, rate, frame_period=FRAME_PERIOD))
    timed("stonemask", lambda: pyworld.stonemask(signal, f0, time_axis, rate))
    f0, time_axis = timed("harvest", lambda: pyworld.harvest(signal, rate, frame_period=FRAME_PERIOD))
    spectrogram = timed("cheaptrick", lambda: pyworld.cheaptrick(signal, f0, time_axis, rate))
    aperiodicity = timed("d4c", lambda: pyworld.d4c(signal, f0, time_axis, rate))
    timed("synthesis", lambda: pyworld.synthesize(f0, spectrogram, aperiodicity, rate, FRAME_PERIOD))
    return wall, cpu


def bench_stages(binary, speech, pairs):
    runs = {"koe": [], "pyworld": []}
    for pair in range(pairs):
        runs["koe"].append(koe_stages(binary, speech))
        runs["pyworld"].append(pyworld_stages(speech))
        print(f"  {speech.rate} Hz stages, round {pair + 1}/{pairs}: koe {sum(runs['koe'][-1][0].values()):.2f} s, "
              f"pyworld {sum(runs['pyworld'][-1][0].values()):.2f} s", file=sys.stderr, flush=True)
    table = {}
    for stage in STAGES + ("all stages",):
        def pick(timings, stage=stage):
            return sum(timings.values()) if stage == "all stages" else timings[stage]
        row = {}
        for side in ("koe", "pyworld"):
            row[f"{side}_wall"] = statistics.median(pick(run[0]) for run in runs[side])
            row[f"{side}_cpu"] = statistics.median(pick(run[1]) for run in runs[side])
            row[f"{side}_wall_runs"] = [pick(run[0]) for run in runs[side]]
            row[f"{side}_cpu_runs"] = [pick(run[1]) for run in runs[side]]
        row["ratio"] = paired_ratio(row["pyworld_wall_runs"], row["koe_wall_runs"])
        row["cpu_ratio"] = paired_ratio(row["pyworld_cpu_runs"], row["koe_cpu_runs"])
        row["ratio_of_medians"] = ratio(row["pyworld_wall"], row["koe_wall"])
        table[stage] = row
    return table


# MARK: Whole conversion

def formant_warp(spectrogram, ratio):
    """Each row read at bin / ratio by linear interpolation (held at the last bin), as koe warps envelopes."""
    bins = spectrogram.shape[1]
    source = np.minimum(np.arange(bins) / ratio, bins - 1)
    index = np.minimum(source.astype(int), bins - 2)
    fraction = source - index
    lower, upper = spectrogram[:, index], spectrogram[:, index + 1]
    # Column indexing leaves the rows strided; pyworld's synthesis takes C-ordered rows.
    return np.ascontiguousarray(lower + fraction * (upper - lower))


def pyworld_convert(speech, method):
    """pyworld doing koe convert's work on the loaded signal: (wall, CPU) seconds."""
    signal, rate = speech.signal, speech.rate
    start, start_cpu = time.perf_counter(), time.process_time()
    if method == "dio":
        f0, time_axis = pyworld.dio(signal, rate, frame_period=FRAME_PERIOD)
        f0 = pyworld.stonemask(signal, f0, time_axis, rate)
    else:
        f0, time_axis = pyworld.harvest(signal, rate, frame_period=FRAME_PERIOD)
    spectrogram = pyworld.cheaptrick(signal, f0, time_axis, rate)
    aperiodicity = pyworld.d4c(signal, f0, time_axis, rate)
    output = pyworld.synthesize(f0 * PITCH, formant_warp(spectrogram, FORMANT), aperiodicity, rate, FRAME_PERIOD)
    wall, cpu = time.perf_counter() - start, time.process_time() - start_cpu
    assert len(output) >= len(signal) - rate * FRAME_PERIOD / 1000
    return wall, cpu


def convert_command(koe, speech, method, threads, target):
    return [str(part) for part in (koe, "convert", speech.wav, target, "--pitch", PITCH, "--formant", FORMANT, "--quiet",
                                   "--f0-method", method, "--threads", threads)]


def koe_convert(koe, speech, method, threads):
    return run_timed(convert_command(koe, speech, method, threads, speech.scratch / f"koe_{method}_{threads}.wav"))


def koe_side_by_side(koe, speech, method):
    """Two 1-thread conversions at once, as processes of their own: (wall-clock seconds until both end, their
    mean CPU seconds). Nothing is shared between them, so twice a lone run's time over this is what two cores of
    this machine give at that moment: the ceiling for the 2-thread figure."""
    start = time.perf_counter()
    processes = [subprocess.Popen(convert_command(koe, speech, method, 1, speech.scratch / f"koe_{method}_side_{copy}.wav"),
                                  stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL) for copy in (1, 2)]
    seconds = []
    for process in processes:
        _, status, usage = os.wait4(process.pid, 0)
        if os.waitstatus_to_exitcode(status) != 0:
            sys.exit(f"{' '.join(process.args)} failed")
        seconds.append(usage.ru_utime + usage.ru_stime)
    return time.perf_counter() - start, statistics.mean(seconds)


def rubberband(speech):
    target = speech.scratch / "rubberband.wav"
    return run_timed(["rubberband", "-3", "-F", "-f", str(PITCH), speech.wav, target])


def koe_live(koe, speech):
    """koe convert in live mode on one thread, file to file: (wall, CPU) seconds."""
    return run_timed([koe, "convert", speech.wav, speech.scratch / "koe_live.wav", "--live", "--pitch", str(PITCH),
                      "--formant", str(FORMANT), "--quiet", "--threads", "1"])


def koe_pipe(koe, speech):
    """koe in pipe mode, raw PCM from a file on stdin to /dev/null: (wall, CPU) seconds."""
    with open(speech.pcm16, "rb") as source:
        return run_timed([koe, "-", "-", *raw_options(speech.rate), "--pitch", str(PITCH), "--formant", str(FORMANT),
                          "--threads", "1"], stdin=source)


def world_convert(binary, speech, method):
    """The WORLD C++ anchor doing koe convert's work, file to file: (wall, CPU) seconds."""
    return run_timed([binary, speech.wav, speech.scratch / f"world_{method}.wav", method])


def bench_conversion(koe, world, speech, pairs, anchor_only):
    """Rounds of every contender in turn (with `anchor_only`, koe on 1 thread and the WORLD C++ anchor alone);
    medians and each run's (wall, CPU) seconds."""
    contenders = {}
    for method in METHODS:
        contenders[f"koe {method} 1t"] = lambda method=method: koe_convert(koe, speech, method, 1)
        contenders[f"world-cpp {method}"] = lambda method=method: world_convert(world, speech, method)
        if anchor_only:
            continue
        contenders[f"koe {method} 2t"] = lambda method=method: koe_convert(koe, speech, method, 2)
        if speech.rate == BAR_RATE:
            contenders[f"koe {method} 1t x2"] = lambda method=method: koe_side_by_side(koe, speech, method)
        contenders[f"pyworld {method}"] = lambda method=method: pyworld_convert(speech, method)
    if not anchor_only:
        contenders["rubberband"] = lambda: rubberband(speech)
    if speech.rate == PIPE_RATE and not anchor_only:
        contenders["koe pipe 1t"] = lambda: koe_pipe(koe, speech)
        contenders["koe live 1t"] = lambda: koe_live(koe, speech)
    runs = {name: [] for name in contenders}
    for pair in range(pairs):
        for name, run in contenders.items():
            runs[name].append(run())
        print(f"  {speech.rate} Hz conversion, round {pair + 1}/{pairs}: "
              + ", ".join(f"{name} {timings[-1][0]:.2f} s" for name, timings in runs.items()),
              file=sys.stderr, flush=True)
    return {name: {"wall": statistics.median(wall for wall, _ in timings),
                   "cpu": statistics.median(cpu for _, cpu in timings),
                   "wall_runs": [wall for wall, _ in timings], "cpu_runs": [cpu for _, cpu in timings]}
            for name, timings in runs.items()}


# MARK: Reporting

def ratio(reference, value):
    return reference / value if value > 0 else float("inf")


def paired_ratio(references, values):
    """The median over rounds of each round's ratio. The runs of one round follow one another, so they share the
    machine's speed of the moment; a slow spell on a shared machine then moves both sides of one ratio, where a
    ratio of medians can take one side from a slow round and the other from a fast one."""
    return statistics.median(ratio(reference, value) for reference, value in zip(references, values))


def print_stages(speech, pairs, table):
    print(f"\n{speech.rate} Hz, {speech.seconds:.1f} s of speech, median of {pairs} alternating rounds (ratios: the "
          "median of each round's ratio); stages, koe on 1 thread (ratio above 1: koe is faster)")
    print(f"{'stage':<12} {'koe s':>8} {'pyworld s':>10} {'pyworld/koe':>12} {'koe cpu s':>10} {'pyworld cpu s':>14} "
          f"{'cpu ratio':>10}")
    for stage, row in table.items():
        print(f"{stage:<12} {row['koe_wall']:8.3f} {row['pyworld_wall']:10.3f} {row['ratio']:12.2f} "
              f"{row['koe_cpu']:10.3f} {row['pyworld_cpu']:14.3f} {row['cpu_ratio']:10.2f}")


# A conversion row's ratios: (reference, value), each a key of the row's timings.
CONVERSION_RATIOS = {"pyworld_over_koe": ("pyworld", "koe_1t"), "world_cpp_over_koe": ("world_cpp", "koe_1t"),
                     "rubberband_over_koe": ("rubberband", "koe_1t"), "koe_1t_over_2t": ("koe_1t", "koe_2t")}


def conversion_rows(speech, conversion):
    """Per F0 path: each contender's median wall seconds and the ratios between those that ran."""
    rows = {}
    for method in METHODS:
        names = {"koe_1t": f"koe {method} 1t", "koe_2t": f"koe {method} 2t", "pyworld": f"pyworld {method}",
                 "world_cpp": f"world-cpp {method}", "rubberband": "rubberband"}
        names = {key: name for key, name in names.items() if name in conversion}
        row = {key: conversion[name]["wall"] for key, name in names.items()}
        runs = {key: conversion[name]["wall_runs"] for key, name in names.items()}
        for key, (reference, value) in CONVERSION_RATIOS.items():
            if reference in row and value in row:
                row[key] = paired_ratio(runs[reference], runs[value])
                row[f"{key}_of_medians"] = ratio(row[reference], row[value])
        # Both are whole processes: their CPU seconds compare too.
        row["world_cpp_over_koe_cpu"] = paired_ratio(conversion[names["world_cpp"]]["cpu_runs"],
                                                     conversion[names["koe_1t"]]["cpu_runs"])
        row["koe_rtf_1t"] = row["koe_1t"] / speech.seconds
        side_by_side = conversion.get(f"koe {method} 1t x2")
        if side_by_side:
            row["two_core_ceiling"] = 2 * paired_ratio(runs["koe_1t"], side_by_side["wall_runs"])
        rows[method] = row
    return rows


def print_conversion(speech, rows, conversion):
    print(f"\n{speech.rate} Hz whole conversion, pitch x{PITCH}, formants x{FORMANT} (wall-clock seconds, medians; "
          "ratios: the median of each round's ratio; koe, WORLD C++ and Rubber Band whole processes, pyworld "
          "compute only)")
    columns = [(key, header, decimals) for key, header, decimals in (
        ("koe_1t", "koe 1t", 3), ("koe_2t", "koe 2t", 3), ("world_cpp", "WORLD C++", 3), ("pyworld", "pyworld", 3),
        ("rubberband", "rubberband", 3), ("world_cpp_over_koe", "C++/koe", 2),
        ("world_cpp_over_koe_cpu", "C++/koe cpu", 2), ("pyworld_over_koe", "pyworld/koe", 2),
        ("rubberband_over_koe", "rubberband/koe", 2), ("koe_1t_over_2t", "1t/2t", 2), ("koe_rtf_1t", "koe RTF", 4))
        if key in rows["dio"]]
    print(f"{'F0 path':<8} " + " ".join(f"{header:>{max(len(header), 8)}}" for _, header, _ in columns))
    for method, row in rows.items():
        print(f"{method:<8} " + " ".join(f"{row[key]:{max(len(header), 8)}.{decimals}f}"
                                         for key, header, decimals in columns))
    for method, row in rows.items():
        if "two_core_ceiling" in row:
            print(f"{method} path, two 1-thread conversions at once as processes: {row['two_core_ceiling']:.2f}x the "
                  "work of one in its time (this machine's 2-core ceiling for 1t/2t)")
    for method, row in rows.items():
        print(f"{method} path, ratios of the medians instead: " + ", ".join(
            f"{reference}/{value} {row[f'{key}_of_medians']:.2f}" for key, (reference, value) in CONVERSION_RATIOS.items()
            if f"{key}_of_medians" in row))
    if "koe pipe 1t" in conversion:
        wall = conversion["koe pipe 1t"]["wall"]
        print(f"pipe mode, 1 thread: {wall:.3f} s for {speech.seconds:.1f} s of audio = "
              f"{speech.seconds / wall:.1f}x real time")
    if "koe live 1t" in conversion:
        wall = conversion["koe live 1t"]["wall"]
        print(f"live mode (--live), 1 thread: {wall:.3f} s for {speech.seconds:.1f} s of audio = "
              f"{speech.seconds / wall:.1f}x real time")


def times(value):
    """A ratio cut (not rounded) to three decimals, so a figure just under its bar never prints as meeting it."""
    return f"{math.floor(value * 1000) / 1000:.3f}x"


def evaluate_bars(results):
    """The bars of issues 4, 24 and 38 whose parts ran, as (description, figure, needed, passed)."""
    bars = []

    def bar(description, figure, needed, passed):
        bars.append({"bar": description, "figure": figure, "needed": needed, "passed": bool(passed)})

    def at_least(description, ratio, least):
        bar(description, times(ratio), f">= {least:g}x", ratio >= least)

    def real_time(description, part, least):
        value = results[part]["real_time_factor"]
        bar(description, f"{value:.1f}x real time", f">= {least:g}x", value >= least)

    at = str(BAR_RATE)
    khz = BAR_RATE // 1000
    rows = results["conversion"][at]["rows"] if at in results["conversion"] else None
    # The whole conversion part ran (not --only anchor).
    full_conversion = rows is not None and "pyworld_over_koe" in rows["dio"]
    if full_conversion:
        for method, least in (("dio", 4.0), ("harvest", 3.0)):
            at_least(f"whole conversion, {method} path, {khz} kHz, 1 thread: pyworld / koe",
                     rows[method]["pyworld_over_koe"], least)
        for method in METHODS:
            value = rows[method]["rubberband_over_koe"]
            bar(f"whole conversion, {method} path, {khz} kHz, 1 thread: rubberband -3 -F / koe", times(value),
                "> 1x", value > 1.0)
        for method in METHODS:
            at_least(f"whole conversion, {method} path, {khz} kHz: koe 1 thread / 2 threads",
                     rows[method]["koe_1t_over_2t"], 1.7)
    for rate, table in results["stages"].items():
        for stage in STAGES:
            at_least(f"stage {stage}, {int(rate) // 1000} kHz, 1 thread: pyworld / koe", table[stage]["ratio"], 2.0)
    if results.get("pipe"):
        real_time(f"pipe mode, raw PCM {PIPE_RATE // 1000} kHz, 1 thread", "pipe", 25.0)
    # Issue 24: one core at 6-7x WORLD C++, and live mode at 35x real time on one thread.
    if full_conversion:
        for method, least in (("dio", 6.0), ("harvest", 7.3)):
            at_least(f"issue 24: whole conversion, {method} path, {khz} kHz, 1 thread: pyworld / koe",
                     rows[method]["pyworld_over_koe"], least)
        runs = results["conversion"][at]["runs"]
        for method, least in (("dio", 10.0), ("harvest", 12.0)):
            # The default, all cores, is the 2-thread run on a 2-core machine.
            at_least(f"issue 24: whole conversion, {method} path, {khz} kHz, 2 threads: pyworld / koe",
                     paired_ratio(runs[f"pyworld {method}"]["wall_runs"], runs[f"koe {method} 2t"]["wall_runs"]), least)
    if results.get("live"):
        real_time(f"issue 24: --live, {PIPE_RATE // 1000} kHz, 1 thread", "live", 35.0)
    # Issue 38: one thread against WORLD's own C++ built for the same CPU, whole processes file to file.
    if rows is not None:
        march = results["settings"]["world_march"]
        for method, least in (("dio", 4.0), ("harvest", 5.5)):
            at_least(f"issue 38: whole conversion, {method} path, {khz} kHz, 1 thread: WORLD C++ "
                     f"(-march={march}) / koe", rows[method]["world_cpp_over_koe"], least)
    return bars


def print_bars(bars):
    print("\nIssue 4, 24 and 38 bars")
    width = max(len(entry["bar"]) for entry in bars)
    for entry in bars:
        print(f"{'PASS' if entry['passed'] else 'FAIL'}  {entry['bar']:<{width}}  {entry['figure']:>18}  "
              f"(needed {entry['needed']})")


def parse_arguments():
    parser = argparse.ArgumentParser(description="koe against WORLD's C++ (pyworld and a driver of ours) and Rubber "
                                                 "Band: the speed bars of issues 4, 24 and 38.")
    parser.add_argument("--koe", type=Path, default=DEFAULT_KOE, help="koe binary (default .build/release/koe)")
    parser.add_argument("--pairs", type=int, default=5, help="alternating rounds per measure (default 5)")
    parser.add_argument("--seconds", type=float, default=60.0, help="least length of speech (default 60)")
    parser.add_argument("--rates", type=lambda text: [int(rate) for rate in text.split(",")],
                        default=[48000, 16000], help="comma-separated rates (default 48000,16000)")
    parser.add_argument("--corpus", type=Path, default=default_corpus(),
                        help="folder of real speech wavs (default: ../shared/corpus beside the repository)")
    parser.add_argument("--koe-bench", type=Path, help="use this koe-bench binary instead of building one")
    parser.add_argument("--only", choices=PARTS,
                        help="run one part: stages, conversion, or anchor (koe 1 thread and WORLD C++ alone)")
    parser.add_argument("--world-march", default="native",
                        help="g++ -march of the WORLD C++ anchor (default native; x86-64-v3 for an AVX2 CPU's)")
    parser.add_argument("--json", type=Path, default=REPO / ".build" / "bench" / "results.json",
                        help="where to write every figure (default .build/bench/results.json)")
    return parser.parse_args()


def main():
    arguments = parse_arguments()
    require_koe(arguments.koe)
    parts = [arguments.only] if arguments.only else PARTS
    binary = (arguments.koe_bench or build_koe_bench()) if "stages" in parts else None
    world = build_world_anchor(arguments.world_march) if parts != ["stages"] else None
    clips, origin = speech_clips(arguments.corpus)
    load_before = os.getloadavg()
    print(f"speech from {origin}; {os.cpu_count()} cores, load average {load_before[0]:.2f} (1 min) "
          f"{load_before[1]:.2f} (5 min)", flush=True)
    results = {"machine": {"cores": os.cpu_count(), "platform": platform.platform(), "load_before": load_before},
               "settings": {"pairs": arguments.pairs, "pitch": PITCH, "formant": FORMANT, "koe": str(arguments.koe),
                            "parts": list(parts), "world_march": arguments.world_march,
                            "world_sdist": {"url": WORLD_SDIST_URL, "sha256": WORLD_SDIST_SHA256}},
               "inputs": {}, "stages": {}, "conversion": {}, "pipe": None, "live": None}
    with tempfile.TemporaryDirectory(prefix="koe-bench-") as scratch:
        for rate in arguments.rates:
            speech = Speech(clips, rate, arguments.seconds, Path(scratch))
            results["inputs"][str(rate)] = {"seconds": speech.seconds, "samples": len(speech.signal)}
            if "stages" in parts:
                stages = bench_stages(binary, speech, arguments.pairs)
                results["stages"][str(rate)] = stages
                print_stages(speech, arguments.pairs, stages)
            if parts == ["stages"]:
                continue
            conversion = bench_conversion(arguments.koe, world, speech, arguments.pairs, parts == ["anchor"])
            rows = conversion_rows(speech, conversion)
            results["conversion"][str(rate)] = {"rows": rows, "runs": conversion}
            print_conversion(speech, rows, conversion)
            if "koe pipe 1t" in conversion:
                wall = conversion["koe pipe 1t"]["wall"]
                results["pipe"] = {"rate": rate, "audio_seconds": speech.seconds, "wall": wall,
                                   "real_time_factor": speech.seconds / wall}
            if "koe live 1t" in conversion:
                wall = conversion["koe live 1t"]["wall"]
                results["live"] = {"rate": rate, "audio_seconds": speech.seconds, "wall": wall,
                                   "real_time_factor": speech.seconds / wall}
            sys.stdout.flush()
    results["machine"]["load_after"] = os.getloadavg()
    results["bars"] = evaluate_bars(results)
    print_bars(results["bars"])
    print(f"load average after: {results['machine']['load_after'][0]:.2f} (1 min) on {os.cpu_count()} cores")
    arguments.json.parent.mkdir(parents=True, exist_ok=True)
    arguments.json.write_text(json.dumps(results, indent=2) + "\n")
    print(f"figures: {arguments.json}")
    sys.exit(0 if all(entry["passed"] for entry in results["bars"]) else 1)


if __name__ == "__main__":
    main()
