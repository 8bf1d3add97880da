#!/usr/bin/env python3
"""Issues 12 and 23's bars for `--live`, except the paced pipe's delay (bench/latency.py) and the voicing bars
(bench/Micro's live-voicing), which `make bench-live` runs too.

Speech: the shared corpus resampled to 16 and 48 kHz, samples/*.wav as they are, and the real male voices of
Debian's codec2-examples (kristoff, cq_ref, g3plx: 8 kHz signed 16-bit raw) resampled to 16 and 48 kHz; float32
WAV in and out. Praat measures F0 as bench/quality.py does (the speaker's range in two passes).

Bars:
 (a) `--live --pitch R`, R in 0.7, 1.25, 1.6: median F0 ratio over frames voiced in input and output within
     1 % of R, on every file.
 (b) `--live --pitch 1 --vocoder`: wideband PESQ against pyworld's whole-file analysis-synthesis: the mean over
     files no worse than pyworld's - 0.10, every file no worse than pyworld's - 0.30. koe without --live is
     printed alongside, and WORLD's own causal figure: pyworld's analysis-synthesis with the F0 WORLD decides on
     the signal so far (see `world_so_far`).
 (c) Stretch, reported and not a bar: V/UV agreement with whole-file DIO, koe's live F0 (`koe analyze --live`)
     against pyworld.dio's frame by frame, >= 97 % pooled over the files; per file, the F0 error on jointly
     voiced frames (against dio refined by stonemask, as koe refines it) and WORLD's own agreement on the signal
     so far alongside.
 (d) Throughput: `koe convert --live --pitch 1.25 --formant 1.1 --threads 1` at 48 kHz on the 48 kHz files
     joined and repeated to a minute (so that starting the process is not what is timed), input seconds per
     second of wall clock, >= 20x real time; without --live printed alongside.
 (e) Equivalence: `--live --pitch 1.25 --formant 1.1` gives the same samples (bit for bit) with chunks of 1,
     17 and 4096 frames, on 2 threads, and through a raw float32 pipe, as the default run.

Usage: python3 bench/live.py [--koe .build/release/koe] [--corpus DIR]
Exit status 1 if a bar fails.
"""

import subprocess
import sys
import tempfile
import time
from pathlib import Path

from common import REPO, corpus_parser, ensure_debian_files, parse_with_koe
from quality import Results, Speech, Workspace, f0_at, median_ratio, pyworld_resynthesis, wideband_pesq

import numpy  # noqa: E402  (quality installs it)
import pyworld  # noqa: E402
import soundfile  # noqa: E402

LIVE = ["--live"]
PITCH_RATIOS = [0.7, 1.25, 1.6]
CHANGE = ["--pitch", "1.25", "--formant", "1.1"]
BAR_PITCH = "(a) --live --pitch R: F0 ratio within 1 % of R"
BAR_PESQ = "(b) --live --vocoder: PESQ-WB mean >= pyworld's - 0.10, every file >= pyworld's - 0.30"
BAR_SPEED = "(d) --live, one thread, 48 kHz: >= 20x real time"
BAR_EQUAL = "(e) --live: chunk sizes, threads and pipe give the same samples"
# koe --live's F0 look-ahead, in ms: 30, or the spectral windows' reach (31.7 ms) if longer.
SO_FAR_LOOK_AHEAD = 31.8
# Real male voices (8 kHz signed 16-bit raw), from Debian's codec2-examples.
CODEC2_RAW = Path("/usr/share/codec2/raw")
CODEC2_VOICES = ["kristoff", "cq_ref", "g3plx"]


def prepare_inputs(corpus, folder):
    """(name, float32 WAV path) for each speech file: corpus files at 16 and 48 kHz, samples as they are."""
    inputs = []
    for path in sorted(corpus.glob("*.wav")) if corpus else []:
        for rate in (16000, 48000):
            target = folder / f"input-{path.stem}-{rate // 1000}k.wav"
            subprocess.run(["sox", "-V1", str(path), "-e", "floating-point", "-b", "32", str(target),
                            "rate", "-v", str(rate)], check=True)
            inputs.append((f"{path.stem}@{rate // 1000}k", target))
    for path in sorted((REPO / "samples").glob("*.wav")):
        target = folder / f"input-{path.stem}.wav"
        subprocess.run(["sox", "-V1", str(path), "-e", "floating-point", "-b", "32", str(target)], check=True)
        inputs.append((path.stem, target))
    for voice in CODEC2_VOICES:
        for rate in (16000, 48000):
            target = folder / f"input-{voice}-{rate // 1000}k.wav"
            subprocess.run(["sox", "-V1", "-t", "raw", "-r", "8000", "-e", "signed", "-b", "16", "-c", "1",
                            str(CODEC2_RAW / f"{voice}.raw"), "-e", "floating-point", "-b", "32", str(target),
                            "rate", "-v", str(rate)], check=True)
            inputs.append((f"{voice}@{rate // 1000}k", target))
    return inputs


def measure_pitch(workspace, speech, results):
    for ratio in PITCH_RATIOS:
        ours = workspace.koe_convert(speech.path, LIVE + ["--pitch", str(ratio)])
        measured = median_ratio(f0_at(speech.times, *speech.pitch(ours, ratio)), speech.f0)
        error = measured / ratio - 1
        results.add(BAR_PITCH, f"{speech.name} x{ratio}:", f"{measured:.4f} ({100 * error:+.2f} %)", abs(error) <= 0.01)
        print(f"  --live --pitch {ratio:<4}  F0 ratio {measured:.4f} ({100 * error:+.2f} %)")


def world_so_far(samples, rate):
    """WORLD's own causal decision: each frame's pyworld.dio F0 on the signal cut where koe's live DIO settles that
    frame (SO_FAR_LOOK_AHEAD past its centre, then the end of its 5 ms block), as if the signal ended there."""
    block = rate // 200
    look_ahead = int(numpy.ceil(SO_FAR_LOOK_AHEAD * rate / 1000))
    whole, times = pyworld.dio(samples, rate)
    decided, cuts = numpy.zeros_like(whole), {}
    for frame, time in enumerate(times):
        end = min(len(samples), -(-(int(round(time * rate)) + look_ahead + 1) // block) * block)
        if end not in cuts:
            cuts[end] = pyworld.dio(samples[:end], rate)[0]
        decided[frame] = cuts[end][frame] if frame < len(cuts[end]) else 0.0
    return decided, times


def measure_vocoder(workspace, speech, so_far, pesqs):
    resynthesis = ["--pitch", "1", "--formant", "1", "--vocoder"]
    live = wideband_pesq(workspace, speech, workspace.koe_convert(speech.path, LIVE + resynthesis))
    default = wideband_pesq(workspace, speech, workspace.koe_convert(speech.path, resynthesis))
    theirs = wideband_pesq(workspace, speech, pyworld_resynthesis(speech.samples, speech.rate))
    decided, times = so_far
    refined = pyworld.stonemask(speech.samples, decided, times, speech.rate)
    world_causal = wideband_pesq(workspace, speech, pyworld.synthesize(
        refined, pyworld.cheaptrick(speech.samples, refined, times, speech.rate),
        pyworld.d4c(speech.samples, refined, times, speech.rate), speech.rate))
    pesqs.append((speech.name, live, theirs, world_causal))
    print(f"  --vocoder  PESQ-WB koe --live {live:.3f}, pyworld analysis-synthesis {theirs:.3f} ({live - theirs:+.3f})"
          f"   [koe without --live {default:.3f}; WORLD on the signal so far {world_causal:.3f}]")


def measure_voicing(workspace, speech, so_far, agreements):
    folder = workspace.path("live-parameters", suffix="")
    workspace.run_koe(["analyze", str(speech.path), "--output-dir", str(folder), "--live"])
    ours = numpy.load(folder / "f0.npy")
    theirs, times = pyworld.dio(speech.samples, speech.rate)
    refined = pyworld.stonemask(speech.samples, theirs, times, speech.rate)
    count = min(len(ours), len(theirs))
    ours, theirs, refined = ours[:count], theirs[:count], refined[:count]
    agreement = float(numpy.mean((ours > 0) == (theirs > 0)))
    both = (ours > 0) & (refined > 0)
    errors = numpy.abs(ours[both] / refined[both] - 1)
    decided = so_far[0][:count]
    world_causal = float(numpy.mean((decided > 0) == (theirs > 0)))
    agreements.append((count, agreement, world_causal))
    print(f"  --live F0 vs whole-file DIO: V/UV agreement {100 * agreement:.2f} % of {count} frames; on {int(both.sum())} "
          f"jointly voiced frames F0 error median {100 * numpy.median(errors):.2f} %, "
          f"> 5 % on {100 * numpy.mean(errors > 0.05):.2f} %   [WORLD on the signal so far {100 * world_causal:.2f} %]")


def joined(workspace, paths, seconds=60):
    """The files one after another, repeated to at least `seconds`, as one file."""
    pieces = [soundfile.read(str(path), dtype="float64")[0] for path in paths]
    one = numpy.concatenate(pieces)
    rate = soundfile.info(str(paths[0])).samplerate
    return workspace.write(numpy.tile(one, int(numpy.ceil(seconds * rate / len(one)))), rate)


def throughput(workspace, path, options):
    """Input seconds converted per wall-clock second, one thread, best of three runs."""
    seconds = soundfile.info(str(path)).duration
    spent = []
    for _ in range(3):
        start = time.perf_counter()
        workspace.koe_convert(path, options + ["--threads", "1"])
        spent.append(time.perf_counter() - start)
    return seconds / min(spent)


def same_samples(workspace, speech):
    """Which ways of running --live differ from the default run (bit for bit)."""
    reference = workspace.koe_convert(speech.path, LIVE + CHANGE)
    runs = {f"--chunk-size {size}": ["--chunk-size", str(size)] for size in (1, 17, 4096)}
    runs["--threads 2"] = ["--threads", "2"]
    differing = [name for name, extra in runs.items()
                 if not numpy.array_equal(workspace.koe_convert(speech.path, LIVE + CHANGE + extra), reference)]
    raw = ["--type", "raw", "--rate", str(speech.rate), "--channels", "1", "--encoding", "float", "--bits", "32"]
    piped = subprocess.run([str(workspace.koe), "-", "-", *raw, *LIVE, *CHANGE, "--quiet"],
                           input=speech.samples.astype("<f4").tobytes(), capture_output=True, check=True)
    if not numpy.array_equal(numpy.frombuffer(piped.stdout, dtype="<f4").astype(numpy.float64), reference):
        differing.append("pipe")
    return differing


def main():
    arguments = parse_with_koe(corpus_parser(__doc__.split("\n\n")[0]))
    ensure_debian_files([(CODEC2_RAW / f"{voice}.raw", "codec2-examples") for voice in CODEC2_VOICES])
    results, pesqs, agreements, fast_inputs = Results(), [], [], []
    with tempfile.TemporaryDirectory(prefix="koe-live-") as scratch:
        folder = Path(scratch)
        workspace = Workspace(arguments.koe, folder)
        for name, path in prepare_inputs(arguments.corpus, folder):
            speech = Speech(name, path, min(speech_rate(path), 16000) / 2)
            print(f"== {name}: {speech.rate} Hz, {len(speech.samples) / speech.rate:.2f} s, Praat median F0 "
                  f"{speech.median_f0:.1f} Hz")
            measure_pitch(workspace, speech, results)
            # WORLD on the signal so far runs pyworld.dio once per 5 ms block: worked out once per file.
            so_far = world_so_far(speech.samples, speech.rate)
            measure_vocoder(workspace, speech, so_far, pesqs)
            measure_voicing(workspace, speech, so_far, agreements)
            differing = same_samples(workspace, speech)
            results.add(BAR_EQUAL, f"{name}:", "differs: " + ", ".join(differing) if differing else "identical",
                        not differing)
            if speech.rate == 48000:
                fast_inputs.append(path)
        long_input = joined(workspace, fast_inputs)
        live_speed = throughput(workspace, long_input, LIVE + CHANGE)
        default_speed = throughput(workspace, long_input, CHANGE)
    print()
    for name, live, theirs, world_causal in pesqs:
        results.add(BAR_PESQ, f"{name}:", f"{live:.3f} vs {theirs:.3f} (WORLD on the signal so far {world_causal:.3f})",
                    live >= theirs - 0.30)
    mean_live, mean_theirs, mean_causal = (float(numpy.mean([row[index] for row in pesqs])) for index in (1, 2, 3))
    results.add(BAR_PESQ, "mean:", f"koe --live {mean_live:.3f} vs pyworld {mean_theirs:.3f}",
                mean_live >= mean_theirs - 0.10)
    print(f"PESQ-WB mean over {len(pesqs)} files: koe --live {mean_live:.3f}, pyworld {mean_theirs:.3f}, "
          f"WORLD on the signal so far {mean_causal:.3f}")
    frames = sum(count for count, _, _ in agreements)
    pooled = sum(count * agreement for count, agreement, _ in agreements) / frames
    pooled_causal = sum(count * causal for count, _, causal in agreements) / frames
    print(f"(c) stretch: V/UV agreement with whole-file DIO pooled over {len(agreements)} files {100 * pooled:.2f} % "
          f"(goal >= 97 %: {'met' if pooled >= 0.97 else 'missed'}); WORLD on the signal so far {100 * pooled_causal:.2f} %")
    results.add(BAR_SPEED, f"{len(fast_inputs)} files joined:",
                f"{live_speed:.1f}x real time (without --live {default_speed:.1f}x)", live_speed >= 20)
    sys.exit(1 if results.summary() else 0)


def speech_rate(path):
    return soundfile.info(str(path)).samplerate


if __name__ == "__main__":
    main()
