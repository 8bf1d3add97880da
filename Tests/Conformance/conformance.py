#!/usr/bin/env python3
"""Conformance of the koe command line against pyworld (the WORLD reference).

Usage: python3 Tests/Conformance/conformance.py --koe .build/release/koe

Inputs: real speech from ../shared/corpus/*.wav (beside the repository; skipped with a
message when absent), each at 8, 16, 22.05, 44.1 and 48 kHz (sox resamples where the
native rate differs), plus the project's samples/*.wav at their native rate.

For every input and rate one line of figures is printed and these bars are checked:

  frames      koe's frame count and time axis equal pyworld's exactly (DIO, Harvest,
              CheapTrick and D4C outputs), and the spectra have pyworld's bin count.
  dio         koe's DIO + StoneMask F0 against pyworld.dio + pyworld.stonemask:
              voiced/unvoiced decisions agree on >= 99.5 % of frames, and on frames both
              call voiced the 99th percentile of |f0_koe - f0_py| / f0_py is <= 0.5 %.
  harvest     the same two bars for Harvest.
  cheaptrick  koe given pyworld's DIO + StoneMask F0 (--f0-file): for each frame the RMS
              over bins of 10 log10(sp_koe / sp_py), averaged over frames, is <= 0.1 dB.
  d4c         koe given the same F0: aperiodicity in dB, 20 log10(max(ap, 1e-3)) (floored
              at -60 dB), differs from pyworld's by <= 0.5 dB on average over frames and bins.
  synthesis   `koe synth` on pyworld's own f0/sp/ap against pyworld.synthesize, both
              written to the same sample format by libsndfile: log-spectral distance
              <= 0.5 dB over the frames pyworld's F0 calls voiced (see synthesis_distance).

pyworld runs on a zeroed heap (zeroed_heap.py): below 15.8 kHz WORLD's D4C reads memory it never wrote.

Exits non-zero when any bar is missed; the last line reads `conformance: N passed, M failed`
counting inputs (an input passes when it meets every bar).
"""

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pyworld
import soundfile

from spectral_measures import aperiodicity_difference, log_spectral_distance
from zeroed_heap import restart_with_zeroed_heap

REPOSITORY = Path(__file__).resolve().parents[2]
RATES = (8000, 16000, 22050, 44100, 48000)

FRAME_PERIOD = 5.0
F0_FLOOR = 71.0
F0_CEIL = 800.0

VOICING_AGREEMENT_MIN = 99.5      # % of frames
F0_ERROR_P99_MAX = 0.5            # % relative error, 99th percentile over jointly voiced frames
CHEAPTRICK_DISTANCE_MAX = 0.1     # dB, mean log-spectral distance
D4C_DIFFERENCE_MAX = 0.5          # dB, mean absolute aperiodicity difference
SYNTHESIS_DISTANCE_MAX = 0.5      # dB, mean log-spectral distance over voiced frames

SYNTHESIS_DYNAMIC_RANGE = 1e-12   # bins more than 120 dB below a frame's peak count as at that floor


@dataclass
class Case:
    name: str
    source: Path
    rate: int


@dataclass
class Outcome:
    case: Case
    figures: dict = field(default_factory=dict)
    failures: list = field(default_factory=list)
    error: str = ""
    seconds: float = 0.0

    @property
    def passed(self):
        return not self.failures and not self.error


class KoeFailed(Exception):
    pass


# Inputs

def discover_cases(corpus, rates):
    cases = []
    if corpus.is_dir() and sorted(corpus.glob("*.wav")):
        for path in sorted(corpus.glob("*.wav")):
            cases += [Case(path.stem, path, rate) for rate in rates]
    else:
        print(f"corpus not found at {corpus}: real-speech cases skipped")
    samples = sorted((REPOSITORY / "samples").glob("*.wav"))
    if not samples:
        print(f"no samples in {REPOSITORY / 'samples'}: sample cases skipped")
    cases += [Case(f"samples/{path.stem}", path, soundfile.info(str(path)).samplerate) for path in samples]
    return cases


def prepare_input(case, workdir):
    """The case's wav at its rate: the file itself, or a sox resampling of it (no dither, repeatable)."""
    if soundfile.info(str(case.source)).samplerate == case.rate:
        return case.source
    resampled = workdir / f"input_{case.rate}.wav"
    subprocess.run(["sox", "-D", str(case.source), "-r", str(case.rate), str(resampled)], check=True)
    return resampled


def read_mono(path):
    signal, rate = soundfile.read(str(path), dtype="float64", always_2d=True)
    return np.ascontiguousarray(signal[:, 0]), rate


# Reference (pyworld) and koe runs

def reference_analysis(signal, rate):
    f0, time_axis = pyworld.dio(signal, rate, f0_floor=F0_FLOOR, f0_ceil=F0_CEIL, frame_period=FRAME_PERIOD)
    dio_f0 = pyworld.stonemask(signal, f0, time_axis, rate)
    harvest_f0, harvest_time = pyworld.harvest(signal, rate, f0_floor=F0_FLOOR, f0_ceil=F0_CEIL,
                                               frame_period=FRAME_PERIOD)
    sp = pyworld.cheaptrick(signal, dio_f0, time_axis, rate, f0_floor=F0_FLOOR)
    ap = pyworld.d4c(signal, dio_f0, time_axis, rate)
    return dict(time=time_axis, dio_f0=dio_f0, harvest_time=harvest_time, harvest_f0=harvest_f0, sp=sp, ap=ap)


def run_koe(koe, arguments):
    result = subprocess.run([str(koe), *map(str, arguments)], capture_output=True, text=True)
    if result.returncode != 0:
        message = (result.stderr.strip() or result.stdout.strip() or "no message").splitlines()[-1]
        raise KoeFailed(f"koe {arguments[0]} exited {result.returncode}: {message}")


def koe_analyze(koe, wav, output, *extra):
    run_koe(koe, ["analyze", wav, "--output-dir", output, "--frame-period", FRAME_PERIOD,
                  "--f0-floor", F0_FLOOR, "--f0-ceil", F0_CEIL, *extra])
    return {name: np.load(output / f"{name}.npy") for name in ("f0", "time", "sp", "ap")}


def koe_synthesize(koe, rate, reference, folder, output):
    """Synthesis by koe from pyworld's own parameters, laid out as `koe analyze` writes them."""
    folder.mkdir()
    np.save(folder / "f0.npy", reference["dio_f0"])
    np.save(folder / "time.npy", reference["time"])
    np.save(folder / "sp.npy", reference["sp"])
    np.save(folder / "ap.npy", reference["ap"])
    fft_size = 2 * (reference["sp"].shape[1] - 1)
    (folder / "meta.json").write_text(json.dumps(
        {"sample_rate": rate, "frame_period": FRAME_PERIOD, "fft_size": fft_size, "f0_floor": F0_FLOOR}))
    run_koe(koe, ["synth", folder, output, "--encoding", "float64"])
    return output


def reference_synthesis(rate, reference):
    """pyworld's synthesis, unquantised: koe writes its own as 64-bit float, so nothing rounds either."""
    return pyworld.synthesize(reference["dio_f0"], reference["sp"], reference["ap"], rate, FRAME_PERIOD)


# Measures

def voicing_agreement(koe_f0, reference_f0):
    """Percentage of frames on which both call the frame voiced or both call it unvoiced."""
    return 100.0 * np.mean((koe_f0 > 0) == (reference_f0 > 0))


def f0_error_p99(koe_f0, reference_f0):
    """99th percentile of the relative F0 error in %, over frames both call voiced (0 if none)."""
    joint = (koe_f0 > 0) & (reference_f0 > 0)
    if not joint.any():
        return 0.0
    relative = np.abs(koe_f0[joint] - reference_f0[joint]) / reference_f0[joint]
    return 100.0 * np.percentile(relative, 99)


def synthesis_distance(koe_wave, reference_wave, rate, reference_f0, fft_size):
    """Log-spectral distance between two syntheses over pyworld's voiced frames, in dB.

    Frame i is centred on sample round(i * frame_period * rate / 1000), the analysis frame
    positions; only frames with reference F0 > 0 count. Each frame is a Hann window
    (numpy.hanning) of fft_size samples, zero beyond the signal's ends; its power spectrum
    |rfft|^2 over all fft_size/2+1 bins is floored, for both signals, at 120 dB below the
    reference frame's peak bin (and at 1e-30 for digital silence). The distance is the
    RMS over bins of 10 log10(P_koe / P_py), averaged over the voiced frames.
    """
    length = max(len(koe_wave), len(reference_wave))
    half = fft_size // 2
    padded = [np.pad(wave, (half, length - len(wave) + fft_size)) for wave in (koe_wave, reference_wave)]
    window = np.hanning(fft_size)
    voiced = np.flatnonzero(reference_f0 > 0)
    if voiced.size == 0:
        return 0.0
    centres = np.round(voiced * FRAME_PERIOD * rate / 1000.0).astype(int)
    centres = centres[centres < length]
    if centres.size == 0:
        return 0.0

    def power(wave):
        frames = np.stack([wave[centre:centre + fft_size] for centre in centres]) * window
        return np.abs(np.fft.rfft(frames, axis=1)) ** 2

    koe_power, reference_power = power(padded[0]), power(padded[1])
    floor = np.maximum(reference_power.max(axis=1, keepdims=True) * SYNTHESIS_DYNAMIC_RANGE, 1e-30)
    return log_spectral_distance(np.maximum(koe_power, floor), np.maximum(reference_power, floor))


# One input at one rate

def check_axes(label, koe_result, reference_time, bins, failures):
    frames = len(reference_time)
    same = (koe_result["f0"].shape == (frames,) and koe_result["time"].shape == (frames,)
            and np.array_equal(koe_result["time"], reference_time))
    if bins is not None:
        same = same and koe_result["sp"].shape == (frames, bins) and koe_result["ap"].shape == (frames, bins)
    if not same:
        failures.append(f"frames({label}: koe {koe_result['f0'].shape[0]}, pyworld {frames})")
    return same


def check_f0(label, koe_f0, reference_f0, figures, failures):
    agreement = voicing_agreement(koe_f0, reference_f0)
    error = f0_error_p99(koe_f0, reference_f0)
    figures[f"{label}_vuv"] = agreement
    figures[f"{label}_p99"] = error
    if not agreement >= VOICING_AGREEMENT_MIN:
        failures.append(f"{label} V/UV {agreement:.2f}% < {VOICING_AGREEMENT_MIN}%")
    if not error <= F0_ERROR_P99_MAX:
        failures.append(f"{label} F0 p99 {error:.3f}% > {F0_ERROR_P99_MAX}%")


def check_bar(name, value, limit, figures, failures):
    figures[name] = value
    if not value <= limit:
        failures.append(f"{name} {value:.4f} dB > {limit} dB")


def evaluate(case, koe, scratch):
    outcome = Outcome(case)
    started = time.perf_counter()
    workdir = Path(tempfile.mkdtemp(prefix="case-", dir=scratch))
    try:
        measure(case, koe, workdir, outcome)
    except KoeFailed as failure:
        outcome.error = str(failure)
    except Exception as failure:  # a crash in one case must not hide the others' figures
        outcome.error = f"{type(failure).__name__}: {failure}"
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    outcome.seconds = time.perf_counter() - started
    return outcome


def measure(case, koe, workdir, outcome):
    figures, failures = outcome.figures, outcome.failures
    wav = prepare_input(case, workdir)
    signal, rate = read_mono(wav)
    reference = reference_analysis(signal, rate)
    bins = reference["sp"].shape[1]
    figures["frames"] = len(reference["time"])

    dio = koe_analyze(koe, wav, workdir / "dio", "--f0-method", "dio")
    if check_axes("dio", dio, reference["time"], bins, failures):
        check_f0("dio", dio["f0"], reference["dio_f0"], figures, failures)

    harvest = koe_analyze(koe, wav, workdir / "harvest", "--f0-method", "harvest")
    if check_axes("harvest", harvest, reference["harvest_time"], bins, failures):
        check_f0("harvest", harvest["f0"], reference["harvest_f0"], figures, failures)

    np.save(workdir / "reference_f0.npy", reference["dio_f0"])
    given = koe_analyze(koe, wav, workdir / "given", "--f0-file", workdir / "reference_f0.npy")
    if check_axes("given F0", given, reference["time"], bins, failures):
        check_bar("cheaptrick", log_spectral_distance(given["sp"], reference["sp"]),
                  CHEAPTRICK_DISTANCE_MAX, figures, failures)
        check_bar("d4c", aperiodicity_difference(given["ap"], reference["ap"]),
                  D4C_DIFFERENCE_MAX, figures, failures)

    koe_wav = koe_synthesize(koe, rate, reference, workdir / "parameters", workdir / "koe.wav")
    koe_wave, koe_rate = read_mono(koe_wav)
    if koe_rate != rate:
        failures.append(f"synthesis rate {koe_rate} != {rate}")
        return
    reference_wave = reference_synthesis(rate, reference)
    figures["synth_samples"] = (len(koe_wave), len(reference_wave))
    check_bar("synthesis", synthesis_distance(koe_wave, reference_wave, rate, reference["dio_f0"], 2 * (bins - 1)),
              SYNTHESIS_DISTANCE_MAX, figures, failures)


def batch_analysis(koe, corpus, scratch):
    """`koe batch --analyze` over a tree of real files (the corpus at 16 kHz in subfolders, and the samples):
    each folder against pyworld's DIO + StoneMask, CheapTrick and D4C, bar by bar. Returns (lines, passed, failed)."""
    root = Path(scratch) / "batch"
    tree, feats = root / "tree", root / "feats"
    inputs = {}
    for path in sorted(corpus.glob("*.wav")) if corpus.is_dir() else []:
        target = tree / "corpus" / path.stem[:1] / path.name
        target.parent.mkdir(parents=True, exist_ok=True)
        subprocess.run(["sox", "-D", str(path), "-r", "16000", str(target)], check=True)
        inputs[target] = feats / target.relative_to(tree).with_suffix("")
    for path in sorted((REPOSITORY / "samples").glob("*.wav")):
        target = tree / "samples" / path.name
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(path, target)
        inputs[target] = feats / target.relative_to(tree).with_suffix("")
    try:
        run_koe(koe, ["batch", "--analyze", "-o", feats, "-r", tree, "--quiet", "--frame-period", FRAME_PERIOD,
                      "--f0-floor", F0_FLOOR, "--f0-ceil", F0_CEIL])
    except KoeFailed as failure:
        return [f"batch --analyze: {failure}"], 0, len(inputs)
    lines, failed = [], 0
    for wav, folder in inputs.items():
        figures, failures = {}, []
        signal, rate = read_mono(wav)
        reference = reference_analysis(signal, rate)
        koe_result = {name: np.load(folder / f"{name}.npy") for name in ("f0", "time", "sp", "ap")}
        if check_axes("batch", koe_result, reference["time"], reference["sp"].shape[1], failures):
            check_f0("dio", koe_result["f0"], reference["dio_f0"], figures, failures)
            check_bar("cheaptrick", log_spectral_distance(koe_result["sp"], reference["sp"]),
                      CHEAPTRICK_DISTANCE_MAX, figures, failures)
            check_bar("d4c", aperiodicity_difference(koe_result["ap"], reference["ap"]),
                      D4C_DIFFERENCE_MAX, figures, failures)
        line = (f"batch {str(wav.relative_to(tree)):<26} | dio vuv {figures.get('dio_vuv', float('nan')):6.2f}% "
                f"p99 {figures.get('dio_p99', float('nan')):.3g}% | cheaptrick {figures.get('cheaptrick', float('nan')):.3g} dB"
                f" | d4c {figures.get('d4c', float('nan')):.3g} dB | {'FAIL' if failures else 'PASS'}")
        lines.append(line + "".join(f"\n    missed: {failure}" for failure in failures))
        failed += bool(failures)
    return lines, len(inputs) - failed, failed


# Report

def format_line(outcome):
    figures = outcome.figures
    label = f"{outcome.case.name}@{outcome.case.rate}"

    def number(key, pattern):
        return pattern.format(figures[key]) if key in figures else "-"

    parts = [
        f"{label:<22}",
        f"frames {figures.get('frames', '-'):>5}",
        f"dio vuv {number('dio_vuv', '{:6.2f}')}% p99 {number('dio_p99', '{:.3g}')}%",
        f"harvest vuv {number('harvest_vuv', '{:6.2f}')}% p99 {number('harvest_p99', '{:.3g}')}%",
        f"cheaptrick {number('cheaptrick', '{:.3g}')} dB",
        f"d4c {number('d4c', '{:.3g}')} dB",
        f"synth {number('synthesis', '{:.3g}')} dB",
        f"{outcome.seconds:5.1f}s",
        "PASS" if outcome.passed else "FAIL",
    ]
    line = " | ".join(parts)
    samples = figures.get("synth_samples")
    if samples and samples[0] != samples[1]:
        line += f"\n    note: synthesis length koe {samples[0]}, pyworld {samples[1]} samples"
    if outcome.error:
        line += f"\n    error: {outcome.error}"
    for failure in outcome.failures:
        line += f"\n    missed: {failure}"
    return line


def parse_arguments():
    parser = argparse.ArgumentParser(description="koe against pyworld, bar by bar.")
    parser.add_argument("--koe", type=Path, default=REPOSITORY / ".build" / "release" / "koe",
                        help="koe binary (default: .build/release/koe)")
    parser.add_argument("--corpus", type=Path, default=REPOSITORY.parent / "shared" / "corpus",
                        help="folder of real speech wavs (default: ../shared/corpus beside the repository)")
    parser.add_argument("--rates", type=lambda text: tuple(int(rate) for rate in text.split(",")), default=RATES,
                        help="comma-separated rates for corpus files (default: 8000,16000,22050,44100,48000)")
    parser.add_argument("--only", default="",
                        help="check only inputs whose name contains this text")
    parser.add_argument("--jobs", type=int, default=min(2, os.cpu_count() or 1),
                        help="inputs checked in parallel (default: 2)")
    return parser.parse_args()


def main():
    arguments = parse_arguments()
    restart_with_zeroed_heap()
    koe = arguments.koe.resolve()
    if not os.access(koe, os.X_OK):
        sys.exit(f"conformance: koe binary not found at {koe} (build it, or pass --koe)")
    if shutil.which("sox") is None:
        sys.exit("conformance: sox is needed to resample the corpus")
    cases = [case for case in discover_cases(arguments.corpus, arguments.rates) if arguments.only in case.name]
    passed = failed = 0
    with tempfile.TemporaryDirectory(prefix="koe-conformance-") as scratch, \
            ProcessPoolExecutor(max_workers=max(1, arguments.jobs)) as pool:
        for outcome in pool.map(evaluate, cases, [koe] * len(cases), [scratch] * len(cases)):
            print(format_line(outcome), flush=True)
            passed, failed = (passed + 1, failed) if outcome.passed else (passed, failed + 1)
        if not arguments.only:
            lines, batch_passed, batch_failed = batch_analysis(koe, arguments.corpus, scratch)
            print("\n".join(lines), flush=True)
            passed, failed = passed + batch_passed, failed + batch_failed
    print(f"conformance: {passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
