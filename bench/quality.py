#!/usr/bin/env python3
"""Voice-quality bars of issue 3, measured on real speech with tools independent of koe.

Speech: the shared corpus (resampled to 16 kHz) and samples/*.wav (as they are), float32 WAV in and out.

F0 is Praat's (parselmouth `to_pitch`, autocorrelation, 10 ms steps) in the speaker's range found in two
passes as De Looze and Hirst advise: a first pass at 50-800 Hz, then floor 0.72 x the 35th percentile and
ceiling 1.9 x the 65th; an output whose F0 was scaled by R is tracked in the range scaled by R. Formants
are Praat's Burg formants (5 formants, 25 ms window) with the ceiling Praat's manual advises for the
speaker: 5000 Hz when the median F0 is below 160 Hz, else 5500 Hz; the ceiling of an output whose formants
were scaled by R is scaled by R too, as one would analyse a shorter vocal tract.

Bars:
 (a) --pitch R, R in 0.7, 1.25, 1.6: median over frames voiced in input and output of F0 out / F0 in,
     within 1 % of R, on every file.
 (b) --formant 1.2: median F1, F2, F3 ratios over frames voiced in both, within 1.2 +- 3 %, on every file.
     For diagnosis it also prints the ratios of pyworld's own whole-file resynthesis with the envelope's
     frequency axis scaled by 1.2, and of plain resynthesis (which shows the vocoder's own F1 bias).
 (c) --pitch R keeps the envelope: mel-cepstral distortion (MCD) between input and output, averaged over
     the files, no worse than `rubberband -3 -F -f R`. MCD = 10/ln 10 * sqrt(2 * sum_{d=1..12} (c_d - c'_d)^2)
     in dB, averaged over frames voiced in both, where c_d is the mel cepstrum of the log amplitude
     spectrum computed here with numpy: 25 ms Hann frames every 10 ms, power in 40 triangular mel bands up
     to the recording's real bandwidth (4 kHz for the 8 kHz corpus, else 8 kHz), floored 80 dB below the
     input's loudest band, c_d = 1/(2*40) * sum_n ln(P_n) cos(pi d (n + 1/2) / 40). Neither WORLD nor
     Rubber Band measures itself. For information the same distance is printed between CheapTrick
     envelopes (pyworld dio + stonemask + cheaptrick, F0 floor 50 Hz) pooled into the same mel bands.
 (d) --tempo R, R in 0.8, 1.25: output length round(n / R) exactly (halves away from zero, as koe
     documents), and the median F0 ratio of output frame t against the input at t * R within 1 % of 1.
 (e) --pitch-range 0: standard deviation of output F0 over its voiced frames < 1 Hz. Also printed: a
     robust spread (1.4826 x median absolute deviation), the spread over interior frames (Praat's whole
     analysis window voiced, so no frame straddles a voicing boundary), and for calibration these figures for
     pyworld's resynthesis with every voiced frame at the median F0 (Praat's own scatter on a monotone voice).
 (f) --pitch 1 --formant 1 --vocoder: wideband PESQ (16 kHz) against the input no lower than that of
     pyworld's own whole-file analysis-synthesis (dio, stonemask, cheaptrick, d4c, synthesize) minus 0.05,
     on every file, at the default look-ahead. For diagnosis it also prints koe at `--look-ahead 300` and
     `koe analyze` + `koe synth` (koe's whole-file path).

Usage: python3 bench/quality.py [--koe .build/release/koe] [--corpus DIR]
Prints a table per file, then PASS/FAIL per bar with its figures; exit status 1 if a bar fails.
"""

import math
import subprocess
import sys
import tempfile
from pathlib import Path

from common import REPO, corpus_parser, ensure_debian_packages, ensure_python_packages, parse_with_koe

PITCH_RATIOS = [0.7, 1.25, 1.6]
FORMANT_RATIO = 1.2
TEMPO_RATIOS = [0.8, 1.25]
MEL_BANDS = 40
CEPSTRA = 13
PYTHON_PACKAGES = [("numpy", "numpy"), ("soundfile", "soundfile"), ("pyworld", "pyworld"),
                   ("parselmouth", "praat-parselmouth"), ("pesq", "pesq")]
DEBIAN_PACKAGES = [("sox", "sox"), ("rubberband", "rubberband-cli")]


# Installs what is missing: Python packages with pip, Debian packages with apt-get.
ensure_python_packages(PYTHON_PACKAGES)
ensure_debian_packages(DEBIAN_PACKAGES)
import numpy  # noqa: E402  (installed above when missing)
import parselmouth  # noqa: E402
import pesq  # noqa: E402
import pyworld  # noqa: E402
import soundfile  # noqa: E402


# MARK: Running the converters

class Workspace:
    """A scratch folder with the converters wired to it; signals come back as float64 arrays."""

    def __init__(self, koe, folder):
        self.koe = koe
        self.folder = folder
        self.count = 0

    def path(self, stem, suffix=".wav"):
        self.count += 1
        return self.folder / f"{stem}-{self.count}{suffix}"

    def write(self, samples, rate):
        path = self.path("signal")
        soundfile.write(str(path), samples, rate, subtype="FLOAT")
        return path

    def run_koe(self, arguments):
        result = subprocess.run([str(self.koe), *arguments], capture_output=True, text=True)
        if result.returncode != 0:
            raise RuntimeError(f"koe {' '.join(arguments)}: {result.stderr.strip()}")

    def koe_convert(self, source, options):
        target = self.path("koe")
        self.run_koe([str(source), str(target), "--quiet", *options])
        return soundfile.read(str(target), dtype="float64")[0]

    def koe_analysis_synthesis(self, source):
        parameters, target = self.path("parameters", suffix=""), self.path("koe-synth")
        self.run_koe(["analyze", str(source), "--output-dir", str(parameters)])
        self.run_koe(["synth", str(parameters), str(target)])
        return soundfile.read(str(target), dtype="float64")[0]

    def rubberband(self, source, ratio):
        target = self.path("rubberband")
        subprocess.run(["rubberband", "-3", "-F", "-q", "-f", str(ratio), str(source), str(target)], check=True,
                       capture_output=True)
        return soundfile.read(str(target), dtype="float64")[0]

    def resample(self, samples, rate, new_rate):
        if rate == new_rate:
            return samples
        source, target = self.write(samples, rate), self.path("resampled")
        subprocess.run(["sox", "-V1", str(source), "-e", "floating-point", "-b", "32", str(target), "rate", "-v",
                        str(new_rate)], check=True)
        return soundfile.read(str(target), dtype="float64")[0]


def prepare_inputs(corpus, folder):
    """(name, float32 WAV path, bandwidth in Hz) for each speech file: corpus files resampled to 16 kHz,
    samples as they are; the bandwidth is what the original recording holds, at most 8 kHz."""
    inputs = []
    corpus_files = sorted(corpus.glob("*.wav")) if corpus else []
    for path in corpus_files + sorted((REPO / "samples").glob("*.wav")):
        target = folder / f"input-{path.stem}.wav"
        command = ["sox", "-V1", str(path), "-e", "floating-point", "-b", "32", str(target)]
        if path in corpus_files:
            command += ["rate", "-v", "16000"]
        subprocess.run(command, check=True)
        original_rate = soundfile.info(str(path)).samplerate
        inputs.append((path.stem, target, min(original_rate, 16000) / 2))
    return inputs


# MARK: Praat

def praat_pitch(samples, rate, floor, ceiling):
    """Praat's F0 every 10 ms: (frame times, F0 with 0 where unvoiced)."""
    pitch = parselmouth.Sound(samples, sampling_frequency=rate).to_pitch(
        time_step=0.01, pitch_floor=floor, pitch_ceiling=ceiling)
    return pitch.xs(), pitch.selected_array["frequency"]


def speaker_range(samples, rate):
    """Praat pitch floor and ceiling for this speaker, in two passes (De Looze and Hirst)."""
    _, f0 = praat_pitch(samples, rate, 50, 800)
    voiced = f0[f0 > 0]
    return 0.72 * numpy.percentile(voiced, 35), 1.9 * numpy.percentile(voiced, 65)


def praat_formants(samples, rate, ceiling, times):
    """Praat's Burg F1, F2, F3 at the given times: an array of frames x 3, NaN where none."""
    formant = parselmouth.Sound(samples, sampling_frequency=rate).to_formant_burg(
        time_step=0.01, max_number_of_formants=5, maximum_formant=ceiling, window_length=0.025)
    return numpy.array([[formant.get_value_at_time(number, time) for number in (1, 2, 3)] for time in times])


def median_ratio(numerator, denominator):
    both = (numerator > 0) & (denominator > 0) & numpy.isfinite(numerator) & numpy.isfinite(denominator)
    return float(numpy.median(numerator[both] / denominator[both])) if both.any() else math.nan


def f0_at(times, pitch_times, f0):
    """Praat's F0 at the given times: the nearest Praat frame's, 0 where unvoiced."""
    after = numpy.clip(numpy.searchsorted(pitch_times, times), 1, len(pitch_times) - 1)
    nearest = numpy.where(times - pitch_times[after - 1] < pitch_times[after] - times, after - 1, after)
    return f0[nearest]


def voiced_at(times, pitch_times, f0):
    return f0_at(times, pitch_times, f0) > 0


class Speech:
    """One input: its samples, and what Praat says about it."""

    def __init__(self, name, path, bandwidth):
        self.name, self.path, self.bandwidth = name, path, bandwidth
        self.samples, self.rate = soundfile.read(str(path), dtype="float64")
        self.floor, self.ceiling = speaker_range(self.samples, self.rate)
        self.times, self.f0 = self.pitch(self.samples)
        self.median_f0 = float(numpy.median(self.f0[self.f0 > 0]))
        self.formant_ceiling = 5000.0 if self.median_f0 < 160 else 5500.0

    def pitch(self, samples, scale=1.0):
        """Praat's F0 of `samples` in this speaker's range, scaled by `scale`."""
        return praat_pitch(samples, self.rate, self.floor * scale, self.ceiling * scale)


# MARK: Envelopes

def mel_filterbank(rate, size, top):
    """MEL_BANDS triangular bands on the mel scale from 0 to `top` Hz, over the bins of a `size`-point FFT."""
    def mel(hertz):
        return 2595 * numpy.log10(1 + hertz / 700)

    def hertz(mels):
        return 700 * (10 ** (mels / 2595) - 1)

    edges = hertz(numpy.linspace(0, mel(top), MEL_BANDS + 2))
    bins = numpy.arange(size // 2 + 1) * rate / size
    filters = numpy.zeros((MEL_BANDS, len(bins)))
    for band in range(MEL_BANDS):
        low, centre, high = edges[band:band + 3]
        filters[band] = numpy.maximum(0, numpy.minimum((bins - low) / (centre - low), (high - bins) / (high - centre)))
    return filters


def cepstra_of_bands(energies, floor):
    """Mel cepstra c_0..c_{CEPSTRA-1} of the log amplitude spectrum, from band powers floored at `floor`."""
    logs = numpy.log(numpy.maximum(energies, floor))
    quefrencies = numpy.arange(CEPSTRA)[:, None]
    basis = numpy.cos(numpy.pi / MEL_BANDS * (numpy.arange(MEL_BANDS) + 0.5)[None, :] * quefrencies) / (2 * MEL_BANDS)
    return logs @ basis.T


def short_time_bands(samples, rate, top):
    """Power in the mel bands of 25 ms Hann frames every 10 ms: (frame centre times, frames x bands)."""
    frame, hop = int(0.025 * rate), int(0.010 * rate)
    size = 1 << (frame - 1).bit_length()
    starts = numpy.arange(0, max(1, len(samples) - frame + 1), hop)
    window = numpy.hanning(frame)
    frames = numpy.stack([samples[start:start + frame] * window for start in starts])
    power = numpy.abs(numpy.fft.rfft(frames, size)) ** 2
    return (starts + frame / 2) / rate, power @ mel_filterbank(rate, size, top).T


def cepstral_distortion(first, second, frames):
    """Mean MCD in dB over the selected frames, c_0 left out."""
    difference = first[frames, 1:] - second[frames, 1:]
    return float(numpy.mean(10 / numpy.log(10) * numpy.sqrt(2 * numpy.sum(difference ** 2, axis=1))))


def spectral_mcd(speech, output, scale):
    """MCD of short-time mel cepstra between the input and an output whose F0 was scaled by `scale`."""
    length = min(len(speech.samples), len(output))
    times, reference = short_time_bands(speech.samples[:length], speech.rate, speech.bandwidth)
    _, other = short_time_bands(output[:length], speech.rate, speech.bandwidth)
    floor = 1e-8 * reference.max()
    voiced = voiced_at(times, *speech.pitch(speech.samples[:length])) & voiced_at(times, *speech.pitch(output[:length], scale))
    return cepstral_distortion(cepstra_of_bands(reference, floor), cepstra_of_bands(other, floor), voiced)


def envelope_bands(samples, rate, top):
    """CheapTrick envelope pooled into the mel bands, and WORLD's F0, every 5 ms."""
    f0, times = pyworld.dio(samples, rate, f0_floor=50)
    f0 = pyworld.stonemask(samples, f0, times, rate)
    envelope = pyworld.cheaptrick(samples, f0, times, rate, f0_floor=50)
    size = 2 * (envelope.shape[1] - 1)
    return f0, envelope @ mel_filterbank(rate, size, top).T


def envelope_mcd(speech, output):
    length = min(len(speech.samples), len(output))
    f0_in, reference = envelope_bands(speech.samples[:length], speech.rate, speech.bandwidth)
    f0_out, other = envelope_bands(output[:length], speech.rate, speech.bandwidth)
    floor = 1e-8 * reference.max()
    return cepstral_distortion(cepstra_of_bands(reference, floor), cepstra_of_bands(other, floor), (f0_in > 0) & (f0_out > 0))


# MARK: Reference resynthesis

def world_parameters(samples, rate):
    f0, times = pyworld.dio(samples, rate)
    f0 = pyworld.stonemask(samples, f0, times, rate)
    return f0, pyworld.cheaptrick(samples, f0, times, rate), pyworld.d4c(samples, f0, times, rate)


def pyworld_resynthesis(samples, rate, formant=1.0, monotone=False):
    """pyworld's whole-file analysis-synthesis; optionally the envelope's frequency axis scaled by `formant`
    or every voiced frame at the median F0."""
    f0, envelope, aperiodicity = world_parameters(samples, rate)
    if formant != 1.0:
        bins = numpy.arange(envelope.shape[1])
        envelope = numpy.array([numpy.interp(bins / formant, bins, row) for row in envelope])
    if monotone:
        f0 = numpy.where(f0 > 0, numpy.median(f0[f0 > 0]), 0.0)
    return pyworld.synthesize(f0, numpy.ascontiguousarray(envelope), aperiodicity, rate)[:len(samples)]


def wideband_pesq(workspace, speech, degraded):
    reference = workspace.resample(speech.samples, speech.rate, 16000)
    degraded = workspace.resample(degraded, speech.rate, 16000)
    length = min(len(reference), len(degraded))
    return float(pesq.pesq(16000, reference[:length], degraded[:length], "wb"))


# MARK: The bars

BAR_PITCH = "(a) --pitch R: F0 ratio within 1 % of R"
BAR_FORMANT = f"(b) --formant {FORMANT_RATIO}: F1, F2, F3 ratios within {FORMANT_RATIO} +- 3 %"
BAR_ENVELOPE = "(c) --pitch R: mean envelope MCD <= rubberband -3 -F's"
BAR_TEMPO = "(d) --tempo R: length round(n / R), F0 within 1 %"
BAR_MONOTONE = "(e) --pitch-range 0: F0 std < 1 Hz"
BAR_PESQ = "(f) --vocoder: PESQ-WB >= pyworld's - 0.05"


class Results:
    """Figures per bar, each with its verdict."""

    def __init__(self):
        self.rows = {}

    def add(self, bar, where, figure, passed):
        self.rows.setdefault(bar, []).append((where, figure, passed))

    def summary(self):
        failed = 0
        for bar, rows in sorted(self.rows.items()):
            bad = [f"{where} {figure}" for where, figure, passed in rows if not passed]
            failed += bool(bad)
            detail = "; ".join(bad) if bad else "; ".join(f"{where} {figure}" for where, figure, _ in rows[:4])
            if not bad and len(rows) > 4:
                detail += f"; ... ({len(rows)} in all)"
            print(f"{'FAIL' if bad else 'PASS'}  {bar}: {detail}")
        return failed


def measure_pitch(workspace, speech, results, envelopes):
    for ratio in PITCH_RATIOS:
        ours = workspace.koe_convert(speech.path, ["--pitch", str(ratio)])
        theirs = workspace.rubberband(speech.path, ratio)
        measured = median_ratio(f0_at(speech.times, *speech.pitch(ours, ratio)), speech.f0)
        error = measured / ratio - 1
        results.add(BAR_PITCH, f"{speech.name} x{ratio}:", f"{measured:.4f} ({100 * error:+.2f} %)", abs(error) <= 0.01)
        ours_mcd, theirs_mcd = spectral_mcd(speech, ours, ratio), spectral_mcd(speech, theirs, ratio)
        envelopes.setdefault(ratio, []).append((ours_mcd, theirs_mcd))
        print(f"  --pitch {ratio:<4}  F0 ratio {measured:.4f} ({100 * error:+.2f} %)   MCD koe {ours_mcd:4.2f} dB, "
              f"rubberband -3 -F {theirs_mcd:4.2f} dB   [CheapTrick-envelope MCD koe {envelope_mcd(speech, ours):4.2f} dB, "
              f"rubberband {envelope_mcd(speech, theirs):4.2f} dB]")


def formant_ratios(speech, output, times):
    before = praat_formants(speech.samples, speech.rate, speech.formant_ceiling, times)
    after = praat_formants(output, speech.rate, speech.formant_ceiling * FORMANT_RATIO, times)
    return [median_ratio(after[:, index], before[:, index]) for index in range(3)]


def measure_formant(workspace, speech, results):
    ours = workspace.koe_convert(speech.path, ["--formant", str(FORMANT_RATIO)])
    both = (speech.f0 > 0) & voiced_at(speech.times, *speech.pitch(ours))
    ratios = formant_ratios(speech, ours, speech.times[both])
    reference = formant_ratios(speech, pyworld_resynthesis(speech.samples, speech.rate, formant=FORMANT_RATIO),
                               speech.times[both])
    plain = pyworld_resynthesis(speech.samples, speech.rate)
    before = praat_formants(speech.samples, speech.rate, speech.formant_ceiling, speech.times[both])
    after = praat_formants(plain, speech.rate, speech.formant_ceiling, speech.times[both])
    bias = [median_ratio(after[:, index], before[:, index]) for index in range(3)]
    within = all(abs(value / FORMANT_RATIO - 1) <= 0.03 for value in ratios)
    listed = ", ".join(f"{value:.3f}" for value in ratios)
    results.add(BAR_FORMANT, f"{speech.name}:", listed, within)
    print(f"  --formant {FORMANT_RATIO}  F1, F2, F3 ratios {listed} over {int(both.sum())} frames   "
          f"[pyworld, envelope scaled: {', '.join(f'{value:.3f}' for value in reference)}; "
          f"pyworld, plain resynthesis: {', '.join(f'{value:.3f}' for value in bias)}]")


def measure_tempo(workspace, speech, results):
    for tempo in TEMPO_RATIOS:
        ours = workspace.koe_convert(speech.path, ["--tempo", str(tempo)])
        expected = math.floor(len(speech.samples) / tempo + 0.5)
        out_times, out_f0 = speech.pitch(ours)
        source_times = out_times * tempo
        mapped = numpy.interp(source_times, speech.times, speech.f0, left=0, right=0)
        mapped[~voiced_at(source_times, speech.times, speech.f0)] = 0
        measured = median_ratio(out_f0, mapped)
        exact = len(ours) == expected
        results.add(BAR_TEMPO, f"{speech.name} x{tempo}:", f"{len(ours)} frames (expected {expected}), F0 ratio {measured:.4f}",
                    exact and abs(measured - 1) <= 0.01)
        print(f"  --tempo {tempo:<5} length {len(ours)} (expected {expected}, {'exact' if exact else 'WRONG'})   "
              f"F0 ratio {measured:.4f} ({100 * (measured - 1):+.2f} %)")


def spread(speech, output):
    """Output F0 over Praat's voiced frames: the values, their standard deviation, 1.4826 x their median
    absolute deviation (the standard deviation that outliers cannot sway), and the standard deviation over the
    interior frames, whose whole analysis window (3 periods of Praat's floor) Praat finds voiced."""
    f0 = speech.pitch(output)[1]
    voiced = f0[f0 > 0]
    robust = 1.4826 * float(numpy.median(numpy.abs(voiced - numpy.median(voiced))))
    reach = math.ceil(1.5 / speech.floor / 0.01)
    padded = numpy.concatenate([numpy.zeros(reach), f0 > 0, numpy.zeros(reach)])
    interior = numpy.array([padded[i:i + 2 * reach + 1].all() for i in range(len(f0))])
    inner = float(numpy.std(f0[interior])) if interior.any() else math.nan
    return voiced, float(numpy.std(voiced)), robust, inner, int(interior.sum())


def measure_monotone(workspace, speech, results):
    voiced, deviation, robust, inner, inner_count = spread(speech, workspace.koe_convert(speech.path, ["--pitch-range", "0"]))
    _, reference, reference_robust, reference_inner, _ = spread(
        speech, pyworld_resynthesis(speech.samples, speech.rate, monotone=True))
    results.add(BAR_MONOTONE, f"{speech.name}:", f"std {deviation:.2f} Hz", deviation < 1.0)
    print(f"  --pitch-range 0  F0 std {deviation:.2f} Hz, robust {robust:.2f} Hz over {len(voiced)} voiced frames "
          f"(5-50-95 %: {' '.join(f'{value:.1f}' for value in numpy.percentile(voiced, [5, 50, 95]))} Hz), "
          f"std {inner:.2f} Hz over the {inner_count} interior ones   [pyworld at a constant median F0: std "
          f"{reference:.2f} Hz, robust {reference_robust:.2f} Hz, interior {reference_inner:.2f} Hz]")


def measure_vocoder(workspace, speech, results):
    resynthesis = ["--pitch", "1", "--formant", "1", "--vocoder"]
    ours = wideband_pesq(workspace, speech, workspace.koe_convert(speech.path, resynthesis))
    patient = wideband_pesq(workspace, speech, workspace.koe_convert(speech.path, resynthesis + ["--look-ahead", "300"]))
    theirs = wideband_pesq(workspace, speech, pyworld_resynthesis(speech.samples, speech.rate))
    whole = wideband_pesq(workspace, speech, workspace.koe_analysis_synthesis(speech.path))
    results.add(BAR_PESQ, f"{speech.name}:", f"koe {ours:.3f} vs pyworld {theirs:.3f}", ours >= theirs - 0.05)
    print(f"  --vocoder  PESQ-WB koe {ours:.3f}, pyworld analysis-synthesis {theirs:.3f} ({ours - theirs:+.3f})   "
          f"[koe --look-ahead 300: {patient:.3f}; koe analyze + synth: {whole:.3f}]")


def main():
    arguments = parse_with_koe(corpus_parser(__doc__.split("\n\n")[0]))
    results, envelopes = Results(), {}
    with tempfile.TemporaryDirectory(prefix="koe-quality-") as scratch:
        folder = Path(scratch)
        workspace = Workspace(arguments.koe, folder)
        for name, path, bandwidth in prepare_inputs(arguments.corpus, folder):
            speech = Speech(name, path, bandwidth)
            print(f"== {name}: {speech.rate} Hz, {len(speech.samples) / speech.rate:.2f} s, Praat median F0 "
                  f"{speech.median_f0:.1f} Hz (range {speech.floor:.0f}-{speech.ceiling:.0f} Hz), "
                  f"formant ceiling {speech.formant_ceiling:.0f} Hz, mel bands to {bandwidth:.0f} Hz")
            measure_pitch(workspace, speech, results, envelopes)
            measure_formant(workspace, speech, results)
            measure_tempo(workspace, speech, results)
            measure_monotone(workspace, speech, results)
            measure_vocoder(workspace, speech, results)
    print()
    for ratio, pairs in envelopes.items():
        ours, theirs = numpy.mean(pairs, axis=0)
        worse = sum(mine > other for mine, other in pairs)
        results.add(BAR_ENVELOPE, f"x{ratio}:", f"koe {ours:.2f} dB vs rubberband {theirs:.2f} dB "
                    f"(koe worse on {worse} of {len(pairs)} files)", ours <= theirs)
    sys.exit(1 if results.summary() else 0)


if __name__ == "__main__":
    main()
