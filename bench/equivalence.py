#!/usr/bin/env python3
"""Equivalence bar of issue 3: chunk size and pipe mode must not change what `koe convert` produces.

For every speech file (the shared corpus resampled to 16 and 48 kHz, and samples/*.wav) and each conversion
(--pitch 1.2 --formant 1.1, and --vocoder alone), koe runs with the default chunk size, with --chunk-size
1, 17 and 4096, and as a raw float32 pipe (stdin -> stdout). Each output is compared with the default
run: exact length, SNR over the whole file (bar: >= 30 dB), and whether it is bit-identical.

It also compares `--vocoder` with pyworld's own whole-file analysis and resynthesis (dio, stonemask,
cheaptrick, d4c, synthesize). That SNR is low even when the analysis agrees closely, and it is not a bar:
WORLD places each excitation pulse by accumulating the F0 phase from the start of the signal, so a
difference in the F0 of a single frame shifts every later pulse. The script shows this on pyworld alone
by nudging the F0 of one voiced frame by 0.1 % and measuring the SNR before and after that frame.

Usage: python3 bench/equivalence.py [--koe .build/release/koe] [--corpus DIR]
Exit status 1 if any run breaks the bar.
"""

import math
import subprocess
import sys
import tempfile
from pathlib import Path

from common import (REPO, corpus_parser, ensure_debian_packages, ensure_python_packages, parse_with_koe,
                    raw_options)

SNR_BAR_DB = 30.0
CONVERSIONS = {
    "pitch1.2+formant1.1": ["--pitch", "1.2", "--formant", "1.1"],
    "vocoder": ["--vocoder"],
}
CHUNK_SIZES = [1, 17, 4096]


# Installs what is missing: sox from Debian; numpy, soundfile, pyworld from PyPI.
ensure_debian_packages([("sox", "sox")])
ensure_python_packages([("numpy", "numpy"), ("soundfile", "soundfile"), ("pyworld", "pyworld")])
import numpy  # noqa: E402  (installed above when missing)
import pyworld  # noqa: E402
import soundfile  # noqa: E402


def prepare_inputs(corpus, folder):
    """Float32 WAVs, so that the comparison sees every difference koe makes rather than 16-bit steps."""
    inputs = []
    corpus_files = sorted(corpus.glob("*.wav")) if corpus else []
    sources = [(path, rate) for path in corpus_files for rate in (16000, 48000)]
    sources += [(path, None) for path in sorted((REPO / "samples").glob("*.wav"))]
    for path, rate in sources:
        suffix = f"-{rate // 1000}k" if rate else ""
        target = folder / f"{path.stem}{suffix}.wav"
        command = ["sox", str(path), "-e", "floating-point", "-b", "32", str(target)]
        if rate:
            command += ["rate", "-v", str(rate)]
        subprocess.run(command, check=True)
        inputs.append(target)
    return inputs


def run_koe(koe, arguments, stdin=None):
    result = subprocess.run([str(koe), *arguments], input=stdin, capture_output=True)
    if result.returncode != 0:
        raise RuntimeError(f"koe {' '.join(arguments)} failed: {result.stderr.decode().strip()}")
    return result.stdout


def convert_file(koe, source, target, options):
    run_koe(koe, [str(source), str(target), "--quiet", *options])
    samples, _ = soundfile.read(str(target), dtype="float64")
    return samples


def convert_pipe(koe, source, options):
    samples, rate = soundfile.read(str(source), dtype="float32")
    raw = raw_options(rate, encoding="float", bits=32)
    output = run_koe(koe, ["-", "-", *raw, *options], stdin=samples.astype("<f4").tobytes())
    return numpy.frombuffer(output, dtype="<f4").astype(numpy.float64)


def snr_db(reference, other):
    length = min(len(reference), len(other))
    noise = numpy.sum((reference[:length] - other[:length]) ** 2)
    signal = numpy.sum(reference[:length] ** 2)
    if noise == 0:
        return math.inf
    return 10 * math.log10(signal / noise)


def pyworld_resynthesis(samples, rate):
    f0, time = pyworld.dio(samples, rate)
    f0 = pyworld.stonemask(samples, f0, time, rate)
    spectrogram = pyworld.cheaptrick(samples, f0, time, rate)
    aperiodicity = pyworld.d4c(samples, f0, time, rate)
    return f0, spectrogram, aperiodicity, pyworld.synthesize(f0, spectrogram, aperiodicity, rate)


def phase_sensitivity(rate, f0, spectrogram, aperiodicity, reference):
    """SNR of pyworld's resynthesis against itself before and after one voiced frame's F0 is nudged by 0.1 %.
    "Before" ends where the nudged frame's F0 starts to be interpolated, less half a pulse response."""
    voiced = numpy.flatnonzero(f0 > 0)
    if len(voiced) < 4:
        return None
    frame = int(voiced[len(voiced) // 4])
    nudged = f0.copy()
    nudged[frame] *= 1.001
    output = pyworld.synthesize(nudged, spectrogram, aperiodicity, rate)
    split = int((frame - 1) * 0.005 * rate) - pyworld.get_cheaptrick_fft_size(rate) // 2
    return frame * 5.0, snr_db(reference[:split], output[:split]), snr_db(reference[split:], output[split:])


def agreement_ms(reference, other, rate):
    """How long two signals agree from the start, to within 1e-4 of the reference's peak."""
    length = min(len(reference), len(other))
    apart = numpy.flatnonzero(numpy.abs(reference[:length] - other[:length]) > 1e-4 * numpy.max(numpy.abs(reference)))
    return 1000 * (apart[0] if len(apart) else length) / rate


def format_db(value):
    return "identical" if math.isinf(value) else f"{value:6.1f} dB"


def compare_chunking(koe, inputs, folder):
    failures = 0
    print(f"{'file':22} {'conversion':20} {'run':10} {'frames':>8} {'same length':>11} {'SNR vs default':>15} {'bit-identical':>13}")
    for source in inputs:
        for name, options in CONVERSIONS.items():
            reference = convert_file(koe, source, folder / "default.wav", options)
            runs = {f"chunk {size}": convert_file(koe, source, folder / f"chunk{size}.wav", [*options, "--chunk-size", str(size)])
                    for size in CHUNK_SIZES}
            runs["pipe"] = convert_pipe(koe, source, options)
            for run, output in runs.items():
                same_length = len(output) == len(reference)
                snr = snr_db(reference, output)
                identical = same_length and math.isinf(snr)
                passed = same_length and snr >= SNR_BAR_DB
                failures += not passed
                print(f"{source.stem:22} {name:20} {run:10} {len(output):8d} {str(same_length):>11} "
                      f"{format_db(snr):>15} {str(identical):>13}{'' if passed else '  FAIL'}")
    return failures


def compare_with_pyworld(koe, inputs, folder):
    print()
    print("koe --vocoder vs pyworld whole-file resynthesis (not a bar: WORLD's pulse phase accumulates from the")
    print("start, so one frame of F0 difference shifts all later pulses; the last columns show that on pyworld alone)")
    print(f"{'file':22} {'SNR koe vs pyworld':>18} {'agree until':>12} {'nudged frame at':>16} {'SNR before':>11} {'SNR after':>11}")
    for source in inputs:
        samples, rate = soundfile.read(str(source), dtype="float64")
        ours = convert_file(koe, source, folder / "vocoder.wav", ["--vocoder"])
        f0, spectrogram, aperiodicity, theirs = pyworld_resynthesis(samples, rate)
        # pyworld's output is a little longer (whole frames); koe keeps the input length.
        line = f"{source.stem:22} {format_db(snr_db(theirs[:len(ours)], ours)):>18} {agreement_ms(theirs, ours, rate):9.0f} ms"
        sensitivity = phase_sensitivity(rate, f0, spectrogram, aperiodicity, theirs)
        if sensitivity:
            at, before, after = sensitivity
            line += f" {at:13.0f} ms {format_db(before):>11} {format_db(after):>11}"
        print(line)


def main():
    arguments = parse_with_koe(corpus_parser(__doc__.split("\n\n")[0]))
    with tempfile.TemporaryDirectory(prefix="koe-equivalence-") as scratch:
        folder = Path(scratch)
        inputs = prepare_inputs(arguments.corpus, folder)
        failures = compare_chunking(arguments.koe, inputs, folder)
        compare_with_pyworld(arguments.koe, inputs, folder)
    print()
    verdict = "PASS" if failures == 0 else "FAIL"
    print(f"{verdict}  equivalence: every chunk size and the pipe within {SNR_BAR_DB:.0f} dB of the default run, same length"
          f" ({failures} run(s) outside)")
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
