#!/usr/bin/env python3
"""koe as a Swift library, from outside: a package that depends on koe by path and imports only `Koe`.

Builds, in one scratch package, the Swift blocks of README.md and of docs/swift.md (so they cannot rot; each file's
blocks as one program), soak.swift (run by bench/soak.py) and client.swift, which streams speech through a VoiceChanger in 480-frame blocks with pitch 1.2 / formant 1.1 and
switches to pitch 0.8 halfway, once as it is made by default and once live (`VoiceChanger.Options.live`). Then
checks, for each:
- block in = block out (the client checks each block) and out ++ finish() = input + latency, the first
  `latency` samples silent;
- before the switch, the output equals `koe convert --pitch 1.2 --formant 1.1` of the same file (SNR >= 30 dB),
  `--live` added for the live changer;
- live only: the latency is at most 50 ms (2,400 frames);
- F0 ratios 1.2 then 0.8 within 2 % (praat, median over jointly voiced frames away from the switch);
- no click at the switch: the largest first difference in 5 ms windows near the switch is no larger than the
  largest anywhere else in the output (a click is a jump no speech sample pair makes).
Prints one line per check and `N passed, N failed`; exits 1 on any failure.
"""
import argparse
import json
import os
import re
import subprocess
import sys
import tempfile

import numpy as np
import parselmouth
import soundfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
RATE, BLOCK = 48000, 480
PITCH, FORMANT, PITCH_AFTER = 1.2, 1.1, 0.8

PACKAGE = """// swift-tools-version:6.0
import PackageDescription

let package = Package(
    name: "koe-library-client",
    dependencies: [.package(path: "{root}")],
    targets: [
        .executableTarget(name: "koe-library-client", dependencies: [.product(name: "Koe", package: "{identity}")]),
        .executableTarget(name: "readme-example", dependencies: [.product(name: "Koe", package: "{identity}")]),
        .executableTarget(name: "docs-swift-example", dependencies: [.product(name: "Koe", package: "{identity}")]),
        .executableTarget(name: "koe-soak", dependencies: [.product(name: "Koe", package: "{identity}")]),
    ]
)
"""


def swift_blocks(page):
    """The swift blocks of a Markdown page of the repository, in order."""
    blocks = re.findall(r"^```swift\n(.*?)^```", open(os.path.join(ROOT, page)).read(), re.S | re.M)
    if not blocks:
        sys.exit(f"library_test: {page} has no swift code block")
    return blocks


def build(folder, scratch):
    """Builds the client package in `folder` (release, products under `scratch`); returns the products' folder."""
    os.makedirs(folder)
    with open(os.path.join(folder, "Package.swift"), "w") as f:
        # A package depended on by path is known by its folder's name, whatever the clone is called.
        f.write(PACKAGE.format(root=ROOT, identity=os.path.basename(ROOT).lower()))
    here = os.path.join(ROOT, "Tests/Library")
    sources = {"koe-library-client": open(os.path.join(here, "client.swift")).read(),
               "koe-soak": open(os.path.join(here, "soak.swift")).read(),
               "readme-example": "\n".join(swift_blocks("README.md")),
               "docs-swift-example": "\n".join(swift_blocks("docs/swift.md"))}
    for target, source in sources.items():
        os.makedirs(os.path.join(folder, "Sources", target))
        with open(os.path.join(folder, "Sources", target, "main.swift"), "w") as f:
            f.write(source)
    run = subprocess.run(["swift", "build", "-c", "release", "--package-path", folder, "--scratch-path", scratch],
                         capture_output=True, text=True)
    if run.returncode != 0:
        sys.exit(f"library_test: the client package does not build:\n{run.stdout}{run.stderr}")
    return os.path.join(scratch, "release")


def praat_f0(signal, rate):
    pitch = parselmouth.Sound(signal.astype(np.float64), rate).to_pitch(time_step=0.01, pitch_floor=70, pitch_ceiling=800)
    return pitch.xs(), pitch.selected_array["frequency"]


def f0_ratio(reference, changed, rate, start, end):
    times, f0_in = praat_f0(reference, rate)
    _, f0_out = praat_f0(changed, rate)
    count = min(len(f0_in), len(f0_out))
    times, f0_in, f0_out = times[:count], f0_in[:count], f0_out[:count]
    both = (f0_in > 0) & (f0_out > 0) & (times >= start) & (times < end)
    return float(np.median(f0_out[both] / f0_in[both])), int(both.sum())


def session_checks(check, signal, output, converted, latency, switch):
    """The checks of one streamed session: its output, the `koe convert` of the same file, the changer's latency."""
    check("length", len(output) == len(signal) + latency,
          f"{len(output)} samples out for {len(signal)} in, latency {latency} ({latency / RATE * 1000:.1f} ms)")
    check("leading silence", not np.any(output[:latency]), f"the first {latency} samples are zero")
    aligned = output[latency:].astype(np.float64)

    # A change reaches the frames the next block completes, which the output plays up to `latency` later than
    # their input: compare up to there.
    before = slice(0, switch - latency)
    error = aligned[before] - converted[before]
    snr = 10 * np.log10(np.sum(converted[before] ** 2) / max(np.sum(error ** 2), 1e-30))
    check("equals koe convert before the switch", snr >= 30, f"SNR {snr:.1f} dB over {switch - latency} samples (>= 30)")

    margin = 0.15
    first, frames_first = f0_ratio(signal, aligned, RATE, 0, (switch - latency) / RATE - margin)
    second, frames_second = f0_ratio(signal, aligned, RATE, switch / RATE + margin, len(signal) / RATE)
    check("F0 ratio before", abs(first / PITCH - 1) <= 0.02, f"{first:.4f} over {frames_first} frames (1.2 +- 2 %)")
    check("F0 ratio after", abs(second / PITCH_AFTER - 1) <= 0.02, f"{second:.4f} over {frames_second} frames (0.8 +- 2 %)")

    window = RATE // 200
    jumps = np.abs(np.diff(aligned))
    peaks = np.array([jumps[i:i + window].max() for i in range(0, len(jumps) - window, window)])
    near = np.zeros(len(peaks), dtype=bool)
    lo, hi = (switch - latency - RATE // 10) // window, (switch + RATE // 10) // window
    near[max(0, lo):hi] = True
    check("no click at the switch", peaks[near].max() <= peaks[~near].max(),
          f"largest 5 ms jump near the switch {peaks[near].max():.4f}, elsewhere {peaks[~near].max():.4f}")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--koe", default=os.path.join(ROOT, ".build/release/koe"))
    parser.add_argument("--input", default=os.path.join(ROOT, "samples/en-f-48k.wav"))
    args = parser.parse_args()

    results = []

    def check(name, ok, detail):
        results.append(ok)
        print(f"{'PASS' if ok else 'FAIL'} {name}: {detail}")

    signal, rate = soundfile.read(args.input, dtype="float32")
    assert rate == RATE and signal.ndim == 1, "the test speech is 48 kHz mono"
    switch = (len(signal) // 2) // BLOCK * BLOCK

    with tempfile.TemporaryDirectory() as folder:
        products = build(os.path.join(folder, "package"), os.path.join(ROOT, ".build/library-client"))
        check("README and docs/swift.md blocks compile", True, "readme-example and docs-swift-example built")
        soundfile.write(os.path.join(folder, "float.wav"), signal, RATE, subtype="FLOAT")
        for live in (False, True):
            run = subprocess.run(
                [os.path.join(products, "koe-library-client"), str(RATE), str(BLOCK), str(switch), str(PITCH),
                 str(FORMANT), str(PITCH_AFTER), "1" if live else "0"], input=signal.tobytes(), capture_output=True)
            if run.returncode != 0:
                sys.exit(f"library_test: the client failed: {run.stderr.decode().strip()}")
            latency = json.loads(run.stderr.decode().strip().splitlines()[-1])["latency"]
            output = np.frombuffer(run.stdout, dtype=np.float32)
            float_reference = os.path.join(folder, "convert-float.wav")
            subprocess.run([args.koe, "convert", os.path.join(folder, "float.wav"), float_reference, "--pitch",
                            str(PITCH), "--formant", str(FORMANT)] + (["--live"] if live else []), check=True)
            converted, _ = soundfile.read(float_reference, dtype="float64")
            session_checks(lambda name, ok, detail: check(("live " if live else "") + name, ok, detail),
                           signal, output, converted, latency, switch)
            if live:
                check("live latency", latency <= RATE // 20,
                      f"{latency} frames = {latency / RATE * 1000:.1f} ms (bar: 2400 frames, 50 ms)")

    failed = results.count(False)
    print(f"library: {len(results) - failed} passed, {failed} failed")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
