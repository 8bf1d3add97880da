#!/bin/sh
# Makes the project's sample clips: short speech from espeak-ng in several voices and pitches,
# resampled by sox to 16 kHz and 48 kHz, 16-bit mono WAV. Peaks sit at -6 dBFS: WORLD resynthesis
# can overshoot its input by 2 dB or so, and the demo should not clip.
# Run from anywhere: ./samples/make_samples.sh  (needs espeak-ng and sox)
set -eu

here=$(cd "$(dirname "$0")" && pwd)
for tool in espeak-ng sox; do
    command -v "$tool" >/dev/null 2>&1 || { echo "make_samples.sh: $tool is not installed" >&2; exit 1; }
done
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT

# clip NAME RATE VOICE PITCH(0-99) WORDS-PER-MINUTE TEXT
clip() {
    espeak-ng -v "$3" -p "$4" -s "$5" -w "$scratch/$1.wav" "$6"
    # -D: no dither, so the same espeak-ng output always gives the same file.
    sox -D "$scratch/$1.wav" -b 16 -c 1 "$here/$1.wav" rate -v "$2" norm -6
    echo "$1.wav: $(soxi -D "$here/$1.wav") s at $(soxi -r "$here/$1.wav") Hz"
}

clip en-f-48k 48000 en-us+f3 70 150 "The quick brown fox jumps over the lazy dog."
clip en-m-16k 16000 en+m3 25 140 "She sells sea shells by the sea shore."
clip ja-f-16k 16000 ja+f2 80 130 "こんにちは、わたしのこえをきいてください。"
clip de-m-48k 48000 de+m1 40 150 "Guten Morgen, wie geht es Ihnen heute?"
