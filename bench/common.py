"""Helpers the bench scripts share: installing their tools, finding koe and the speech corpus, making long
speech inputs, describing raw PCM to koe, and timing a process."""

import argparse
import os
import shutil
import subprocess
import sys
import time
from itertools import cycle
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
SUDO = [] if os.geteuid() == 0 else ["sudo"]
DEFAULT_KOE = REPO / ".build" / "release" / "koe"


def ensure_python_packages(modules_and_packages):
    """pip-installs the packages whose module does not import: [(module, PyPI package)]."""
    missing = []
    for module, package in modules_and_packages:
        try:
            __import__(module)
        except ImportError:
            missing.append(package)
    if missing:
        subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", *missing], check=True)


def ensure_debian_packages(commands_and_packages, required=True):
    """apt-installs the packages whose command is not on PATH: [(command, Debian package)]. With required
    False, a failed install is left for the caller to notice (the command stays missing)."""
    packages = [package for command, package in commands_and_packages if shutil.which(command) is None]
    if packages:
        subprocess.run([*SUDO, "apt-get", "update", "-qq"], check=required)
        subprocess.run([*SUDO, "apt-get", "install", "-y", "-qq", *packages], check=required)


def ensure_debian_files(paths_and_packages):
    """apt-installs the packages whose file is missing: [(path, Debian package)]."""
    packages = sorted({package for path, package in paths_and_packages if not Path(path).exists()})
    if packages:
        subprocess.run([*SUDO, "apt-get", "update", "-qq"], check=True)
        subprocess.run([*SUDO, "apt-get", "install", "-y", "-qq", *packages], check=True)


def default_corpus():
    """The shared speech corpus beside the repository, or None."""
    for candidate in [REPO.parent / "shared" / "corpus", Path("/work/shared/corpus")]:
        if candidate.is_dir():
            return candidate
    return None


def add_koe_argument(parser):
    parser.add_argument("--koe", type=Path, default=DEFAULT_KOE)


def require_koe(path):
    """Exits with a hint when the koe binary is missing."""
    if not path.is_file():
        sys.exit(f"{path} not found: build it with `swift build -c release --product koe`")


def corpus_parser(description):
    """A bench script's arguments over the corpus, --koe and --corpus; add its own, then `parse_with_koe`."""
    parser = argparse.ArgumentParser(description=description)
    add_koe_argument(parser)
    parser.add_argument("--corpus", type=Path, default=default_corpus())
    return parser


def parse_with_koe(parser):
    """The parsed arguments, exiting with a hint when the koe binary is missing."""
    arguments = parser.parse_args()
    require_koe(arguments.koe)
    return arguments


def raw_options(rate, encoding="signed", bits=16, channels=1):
    """koe's description of a raw PCM stream, in sox's names."""
    return ["--type", "raw", "--rate", str(rate), "--encoding", encoding, "--bits", str(bits),
            "--channels", str(channels)]


def speech_clips(corpus):
    """(wav files, where they come from): the corpus, or the repository's samples when there is none."""
    clips = sorted(corpus.glob("*.wav")) if corpus and corpus.is_dir() else []
    if clips:
        return clips, f"corpus {corpus}"
    clips = sorted((REPO / "samples").glob("*.wav"))
    if clips:
        return clips, f"samples (corpus not found at {corpus})"
    sys.exit(f"bench: no speech found (neither {corpus} nor {REPO / 'samples'} holds wav files)")


def make_speech(clips, rate, seconds, folder):
    """A 16-bit mono WAV of at least `seconds` of speech at `rate`: the clips resampled, then concatenated in
    turn until long enough. Returns its path."""
    resampled = []
    for index, clip in enumerate(clips):
        path = folder / f"clip{index}_{rate}.wav"
        subprocess.run(["sox", "-D", str(clip), "-r", str(rate), "-c", "1", "-b", "16", str(path)], check=True)
        frames = int(subprocess.run(["soxi", "-s", str(path)], check=True, capture_output=True, text=True).stdout)
        resampled.append((path, frames))
    chosen, total = [], 0
    for path, frames in cycle(resampled):
        if total >= seconds * rate:
            break
        chosen.append(str(path))
        total += frames
    speech = folder / f"speech_{rate}.wav"
    subprocess.run(["sox", "-D", *chosen, str(speech)], check=True)
    return speech


def run_timed(command, stdin=None, stdout=subprocess.DEVNULL):
    """Runs `command` to the end; returns (wall-clock seconds, CPU seconds of the process, all its threads).
    Exits with its error output if it fails."""
    start = time.perf_counter()
    process = subprocess.Popen([str(part) for part in command], stdin=stdin, stdout=stdout, stderr=subprocess.PIPE)
    errors = process.stderr.read()
    _, status, usage = os.wait4(process.pid, 0)
    wall = time.perf_counter() - start
    process.returncode = os.waitstatus_to_exitcode(status)
    if process.returncode != 0:
        sys.exit(f"{' '.join(map(str, command))} failed: {errors.decode(errors='replace').strip()}")
    return wall, usage.ru_utime + usage.ru_stime

