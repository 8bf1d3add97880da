#!/usr/bin/env python3
"""koe profile and the presets' aim against Praat (parselmouth), per voice, worst first.

    python3 bench/profile.py profile [--koe .build/release/koe] [--rates 16000 44100 48000]
    python3 bench/profile.py aim     [--koe ...] [--presets female kawaii male]
    python3 bench/profile.py live    [--koe ...] [--presets kawaii female male]

Voices: Debian codec2-examples' speech of 3 s or more (/usr/share/codec2/raw, 8 kHz, resampled by sox), the
corpus beside the repository (../shared/corpus) and samples/*.wav (espeak: synthetic, weak evidence), each at
every rate asked. Praat's figures: `Sound.to_pitch()` at its defaults and its median ("Get quantile" 0.5, Hertz);
its formants `to_formant_burg()` at the voiced frames, the vocal-tract length from the median F1 to F4 (F1 to F3
for telephone-band audio, as koe does) by the same uniform-tube fit, c = 350 m/s. `aim` converts each voice with
`koe convert --preset NAME --json` and reports Praat's median of the output against the preset's target. `live`
does the same with `koe convert --live`, whose voice aims from the profile it estimates as it runs, on the output
after its first `--skip` seconds (3), beside the same measure of Praat's "Change gender" of the input to that
target (the anchor: Praat sets its ratio from the whole recording's median, which live mode cannot know; its output
differs from one run to the next, so its figure moves between runs, most on a short tail); with the
koe wheel importable (`make python-venv`, or `--python` naming a Python that has it) it also plays each voice
through `koe.VoiceChanger(live=True)` in 5 ms blocks and reports when the aim began (input seconds) and the largest
change of the applied pitch or formant ratio within any 50 ms.
Needs parselmouth, numpy, soundfile and sox.
"""
import argparse
import glob
import json
import os
import subprocess
import sys
import tempfile

import numpy as np
import parselmouth
from parselmouth.praat import call

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CODEC2 = "/usr/share/codec2/raw"
CODEC2_SPEECH = ["big_dog", "cq_ref", "cross", "g3plx", "hts", "hts1", "hts1a", "hts2", "hts2a", "kristoff", "mmt1",
                 "ve9qrp_10s", "vk5qi"]
# Not looked at while the profile's and the presets' design was chosen (see the note in the issue): reported apart.
HELD_OUT = {"kristoff", "vk5qi", "hts2a", "speech_orig_16k"}
# Two speakers taking turns: a median of the file is no one's.
DIALOGUES = {"speech_orig_16k", "hts"}


def voices(folder, rates, extra=None):
    """(name, rate, path) of every voice at every rate, made with sox into `folder`; `extra`, a folder of more .wav
    voices, reported apart as held out."""
    sources = [(name, os.path.join(CODEC2, name + ".raw")) for name in CODEC2_SPEECH if os.path.exists(os.path.join(CODEC2, name + ".raw"))]
    sources += [(os.path.basename(p)[:-4], p) for p in sorted(glob.glob(os.path.join(CODEC2, "*.wav")))]
    sources += [(os.path.basename(p)[:-4], p) for p in sorted(glob.glob(os.path.join(ROOT, "..", "shared", "corpus", "*.wav")))]
    sources += [(os.path.basename(p)[:-4], p) for p in sorted(glob.glob(os.path.join(ROOT, "samples", "*.wav")))]
    if extra:
        found_extra = sorted(glob.glob(os.path.join(extra, "*.wav")))
        HELD_OUT.update(os.path.basename(p)[:-4] for p in found_extra)
        sources += [(os.path.basename(p)[:-4], p) for p in found_extra]
    found, seen = [], set()
    for name, path in sources:
        if name in seen:  # the corpus holds some of codec2-examples' voices too
            continue
        seen.add(name)
        for rate in rates:
            out = os.path.join(folder, f"{name}-{rate}.wav")
            source = ["-t", "raw", "-r", "8000", "-e", "signed", "-b", "16", "-c", "1", path] if path.endswith(".raw") else [path]
            subprocess.run(["sox", "-R", *source, "-r", str(rate), out], check=True, stderr=subprocess.DEVNULL)
            if parselmouth.Sound(out).duration >= 3:
                found.append((name, rate, out))
    return found


def praat_median(path):
    pitch = parselmouth.Sound(path).to_pitch()
    return call(pitch, "Get quantile", 0, 0, 0.5, "Hertz"), pitch


def praat_tract(path, pitch, formants):
    sound = parselmouth.Sound(path)
    burg = sound.to_formant_burg()
    f0 = pitch.selected_array["frequency"]
    times = [pitch.get_time_from_frame_number(i + 1) for i in range(len(f0)) if f0[i] > 0]
    medians = [np.nanmedian([burg.get_value_at_time(k, t) for t in times]) for k in range(1, formants + 1)]
    positions = np.array([(2 * k - 1) / 2 for k in range(1, formants + 1)])
    spacing = np.sum(np.array(medians) * positions) / np.sum(positions ** 2)
    return 35000 / (2 * spacing), medians


def koe_json(koe, *arguments):
    run = subprocess.run([koe, *arguments], capture_output=True, text=True)
    if run.returncode != 0:
        raise RuntimeError(run.stderr.strip())
    return run


def profile(args, found):
    rows = []
    for name, rate, path in found:
        median, pitch = praat_median(path)
        mine = json.loads(koe_json(args.koe, "profile", "--json", path).stdout)
        narrow = name in CODEC2_SPEECH
        tract, medians = praat_tract(path, pitch, 3 if narrow else 4)
        rows.append(dict(name=name, rate=rate, praat=median, koe=mine["f0_median_hz"],
                         error=100 * (mine["f0_median_hz"] / median - 1), praat_vtl=tract,
                         koe_vtl=mine["vocal_tract_length_cm"], voiced=mine["voiced_seconds"]))
    for title, group in tables(rows):
        print(f"\n{title}\n| voice | rate | Praat median | koe median | error | VTL koe | VTL Praat | voiced s |\n|---|---|---|---|---|---|---|---|")
        for r in sorted(group, key=lambda r: -abs(r["error"])):
            print(f"| {r['name']} | {r['rate']} | {r['praat']:.1f} | {r['koe']:.1f} | {r['error']:+.2f} % | "
                  f"{r['koe_vtl']:.2f} | {r['praat_vtl']:.2f} | {r['voiced']:.2f} |")
        errors = np.abs([r["error"] for r in group])
        print(f"worst {errors.max():.2f} %, median {np.median(errors):.2f} % over {len(group)}")
    for label, chosen in (("koe", "koe_vtl"), ("Praat", "praat_vtl")):
        male = [r[chosen] for r in rows if r["praat"] < 150 and r["name"] not in DIALOGUES]
        female = [r[chosen] for r in rows if r["praat"] > 165 and r["name"] not in DIALOGUES]
        print(f"{label} VTL: male voices (median < 150 Hz) mean {np.mean(male):.2f} cm over {len(male)}, "
              f"female (> 165 Hz) {np.mean(female):.2f} cm over {len(female)}")


def tables(rows):
    yield "tuned on (single voices)", [r for r in rows if r["name"] not in HELD_OUT | DIALOGUES]
    yield "held out", [r for r in rows if r["name"] in HELD_OUT - DIALOGUES]
    yield "dialogues (two speakers)", [r for r in rows if r["name"] in DIALOGUES]


def conversions(args, found, scratch, *flags):
    """Each voice whose Praat median is 80 to 260 Hz through `koe convert --preset NAME --json` and `flags`, for each
    preset asked: (name, rate, path, preset, Praat's median in, the output's path, the statistics, the target)."""
    targets = json.loads(koe_json(args.koe, "presets", "--json").stdout)
    for name, rate, path in found:
        before, _ = praat_median(path)
        if not 80 <= before <= 260:
            continue
        for preset in args.presets:
            out = os.path.join(scratch, "out.wav")
            run = koe_json(args.koe, "convert", path, out, *flags, "--preset", preset, "--json", "--quiet")
            stats = json.loads(run.stderr.strip().splitlines()[-1])
            yield name, rate, path, preset, before, out, stats, targets[preset]["f0_median_hz"]


def aim(args, found):
    rows = []
    with tempfile.TemporaryDirectory() as scratch:
        for name, rate, _, preset, before, out, stats, target in conversions(args, found, scratch):
            after, _ = praat_median(out)
            rows.append(dict(name=name, rate=rate, preset=preset, before=before, after=after, target=target,
                             error=100 * (after / target - 1), pitch=stats["pitch_ratio"],
                             formant=stats["formant_ratio"], clamped=stats["clamped"],
                             vtl=(stats["profile"] or {}).get("vocal_tract_length_cm")))
    for title, group in tables(rows):
        print(f"\n{title}\n| voice | rate | preset | Praat in | Praat out | target | error | pitch ratio | formant ratio | clamped |\n|---|---|---|---|---|---|---|---|---|---|")
        for r in sorted(group, key=lambda r: -abs(r["error"])):
            print(f"| {r['name']} | {r['rate']} | {r['preset']} | {r['before']:.1f} | {r['after']:.1f} | {r['target']:.0f} | "
                  f"{r['error']:+.2f} % | {r['pitch']:.3f} | {r['formant']:.3f} | {r['clamped']} |")
        unclamped = np.abs([r["error"] for r in group if not r["clamped"]])
        if len(unclamped):
            print(f"unclamped: worst {unclamped.max():.2f} %, median {np.median(unclamped):.2f} % over {len(unclamped)}")


def praat_median_after(sound, skip):
    """Praat's median F0 of `sound` (a parselmouth Sound) after its first `skip` seconds (None when nothing is
    voiced there)."""
    if sound.duration <= skip + 0.1:
        return None
    pitch = sound.extract_part(from_time=skip, to_time=sound.duration).to_pitch()
    median = call(pitch, "Get quantile", 0, 0, 0.5, "Hertz")
    return None if np.isnan(median) else median


TRACE = """
import json, sys
import numpy as np, soundfile, koe
samples, rate = soundfile.read(sys.argv[1], dtype="float32")
changer = koe.VoiceChanger(rate, live=True)
changer.preset = sys.argv[2]
block = rate // 200
trace = []
for start in range(0, len(samples), block):
    changer.process(samples[start:start + block])
    pitch, formant = changer.ratios
    trace.append((min(start + block, len(samples)) / rate, pitch, formant, changer.profile is not None))
print(json.dumps(trace))
"""


def ratio_trace(python, path, preset):
    """(seconds of input, pitch ratio, formant ratio, profile known) after each 5 ms block of a live changer."""
    run = subprocess.run([python, "-c", TRACE, path, preset], capture_output=True, text=True)
    return json.loads(run.stdout) if run.returncode == 0 else None


def largest_step(trace, window=0.05):
    """The largest change, in semitones, of the pitch or the formant ratio within any `window` seconds."""
    times = np.array([t for t, *_ in trace])
    largest = 0.0
    for column in (1, 2):
        ratios = 12 * np.log2([row[column] for row in trace])
        for index in range(len(trace)):
            inside = ratios[index:np.searchsorted(times, times[index] + window, side="right")]
            largest = max(largest, float(inside.max() - inside.min()))
    return largest


def praat_change_gender(path, target, formant):
    """The anchor of the live aim: Praat's "Change gender" of the whole recording to a pitch median of `target`
    Hz and formants times `formant` (Praat's median of the whole file sets its ratio, which live mode cannot know)."""
    return call(parselmouth.Sound(path), "Change gender", 75, 600, formant, target, 1.0, 1.0)


def live(args, found):
    has_wheel = os.path.exists(args.python) and subprocess.run([args.python, "-c", "import koe"], capture_output=True).returncode == 0
    if not has_wheel:
        print(f"({args.python} has no koe wheel: no aim times and steps)")
    rows = []
    with tempfile.TemporaryDirectory() as scratch:
        for name, rate, path, preset, before, out, stats, target in conversions(args, found, scratch, "--live"):
            after = praat_median_after(parselmouth.Sound(out), args.skip)
            anchor = praat_median_after(praat_change_gender(path, target, stats["formant_ratio"]), args.skip)
            trace = ratio_trace(args.python, path, preset) if has_wheel else None
            aimed = next((t for t, _, _, known in trace if known), None) if trace else None
            rows.append(dict(name=name, rate=rate, preset=preset, before=before, after=after, target=target,
                             error=None if after is None else 100 * (after / target - 1),
                             praat=None if anchor is None else 100 * (anchor / target - 1), pitch=stats["pitch_ratio"],
                             formant=stats["formant_ratio"], clamped=stats["clamped"], aimed=aimed,
                             step=largest_step(trace) if trace else None))
    f = lambda value, form: "–" if value is None else format(value, form)
    for title, group in tables(rows):
        print(f"\n{title}\n| voice | rate | preset | Praat in | Praat out after {args.skip:g} s | target | error | Praat's Change "
              f"gender: error | pitch ratio at end | formant ratio at end | clamped | aim from (s) | largest step in 50 ms (st) |"
              f"\n|---|---|---|---|---|---|---|---|---|---|---|---|---|")
        for r in sorted(group, key=lambda r: -abs(r["error"]) if r["error"] is not None else 1):
            print(f"| {r['name']} | {r['rate']} | {r['preset']} | {r['before']:.1f} | {f(r['after'], '.1f')} | {r['target']:.0f} | "
                  f"{f(r['error'], '+.2f')} % | {f(r['praat'], '+.2f')} % | {r['pitch']:.3f} | {r['formant']:.3f} | {r['clamped']} | {f(r['aimed'], '.2f')} | "
                  f"{f(r['step'], '.2f')} |")
        errors = np.abs([r["error"] for r in group if r["error"] is not None and not r["clamped"]])
        if len(errors):
            print(f"unclamped: worst {errors.max():.2f} %, median {np.median(errors):.2f} % over {len(errors)}; "
                  f"within 15 %: {np.sum(errors <= 15)} of {len(errors)}")
            anchors = np.abs([r["praat"] for r in group
                              if r["praat"] is not None and r["error"] is not None and not r["clamped"]])
            print(f"Praat's Change gender on the same measure: worst {anchors.max():.2f} %, median "
                  f"{np.median(anchors):.2f} %; within 15 %: {np.sum(anchors <= 15)} of {len(anchors)}")
        steps = [r["step"] for r in group if r["step"] is not None]
        if steps:
            print(f"largest step in 50 ms: {max(steps):.2f} semitones")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("what", choices=["profile", "aim", "live"])
    parser.add_argument("--koe", default=os.path.join(ROOT, ".build/release/koe"))
    parser.add_argument("--rates", type=int, nargs="+", default=[16000, 44100, 48000])
    parser.add_argument("--presets", nargs="+", default=["female", "kawaii", "male"])
    parser.add_argument("--skip", type=float, default=3.0, help="live: seconds of output left out of the median")
    parser.add_argument("--extra", help="a folder of more voices (.wav), reported with the held-out ones")
    parser.add_argument("--python", default=os.path.join(ROOT, ".build/python-venv/bin/python"),
                        help="live: a Python with the koe wheel, for the ratios' trace")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        found = voices(folder, args.rates, args.extra)
        {"profile": profile, "aim": aim, "live": live}[args.what](args, found)


if __name__ == "__main__":
    sys.exit(main())
