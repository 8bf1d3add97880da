"""Shared inputs of the Python suite: real speech at 8 to 48 kHz, the koe binary, pyworld's reference measures.

Run by `make test-python` in a fresh venv where the wheel is installed; KOE_BINARY names the release koe the
library is compared with. Speech: ../shared/corpus/*.wav beside the repository (skipped with a message when
absent), samples/*.wav, 8 kHz speech from Debian's codec2-examples (/usr/share/codec2/raw), and one corpus
file resampled by sox to 16, 44.1 and 48 kHz.
"""

import os
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import soundfile

REPOSITORY = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPOSITORY / "Tests" / "Conformance"))
from spectral_measures import aperiodicity_difference, log_spectral_distance  # noqa: E402,F401 (the tests import them from here)
from zeroed_heap import restart_with_zeroed_heap  # noqa: E402

CORPUS = REPOSITORY.parent / "shared" / "corpus"
CODEC2_RAW = Path("/usr/share/codec2/raw")
CODEC2_FILES = ("big_dog.raw", "cross.raw", "kristoff.raw")
RESAMPLED_RATES = (16000, 44100, 48000)


def speech_files():
    """(name, path) of every real speech file at its own rate."""
    files = [(f"samples/{path.name}", path) for path in sorted((REPOSITORY / "samples").glob("*.wav"))]
    if CORPUS.is_dir():
        files += [(f"corpus/{path.name}", path) for path in sorted(CORPUS.glob("*.wav"))]
    else:
        print(f"corpus not found at {CORPUS}: its files are skipped")
    files += [(f"codec2/{name}", CODEC2_RAW / name) for name in CODEC2_FILES if (CODEC2_RAW / name).exists()]
    return files


def read_speech(path):
    """A mono float64 signal and its rate; codec2's raw files are 8 kHz signed 16-bit."""
    if path.suffix == ".raw":
        return np.fromfile(path, dtype="<i2").astype(np.float64) / 32768.0, 8000
    signal, rate = soundfile.read(str(path), dtype="float64", always_2d=True)
    return signal[:, 0].copy(), rate


def pytest_configure(config):
    """pyworld's D4C is a reference at 8 kHz only on a zeroed heap (Tests/Conformance/zeroed_heap.py)."""
    restart_with_zeroed_heap()


@pytest.fixture(scope="session")
def scratch(tmp_path_factory):
    return tmp_path_factory.mktemp("koe-python")


@pytest.fixture(scope="session")
def speech(scratch):
    """name -> (signal, rate) for every speech input, the resampled ones included."""
    inputs = {name: read_speech(path) for name, path in speech_files()}
    source = CORPUS / "hts1a.wav"
    if source.exists() and shutil.which("sox"):
        for rate in RESAMPLED_RATES:
            output = scratch / f"hts1a-{rate}.wav"
            subprocess.run(["sox", str(source), "-r", str(rate), str(output)], check=True)
            inputs[f"corpus/hts1a@{rate}"] = read_speech(output)
    return inputs


@pytest.fixture(scope="session")
def koe_binary():
    path = os.environ.get("KOE_BINARY", str(REPOSITORY / ".build/release/koe"))
    if not Path(path).exists():
        pytest.fail(f"no koe binary at {path}: run `make release` or set KOE_BINARY")
    return path


# pyworld's bars: the envelope and aperiodicity measures are Tests/Conformance's (imported above).


def snr(signal, reference):
    """10 log10 of the reference's energy over the difference's, in dB (infinite when equal)."""
    noise = np.sum((signal - reference) ** 2)
    return float("inf") if noise == 0 else float(10 * np.log10(np.sum(reference ** 2) / noise))


def f0_relative_error(f0, reference):
    """The largest |f0 - reference| / reference over frames the reference calls voiced."""
    voiced = reference > 0
    return float(np.max(np.abs(f0[voiced] - reference[voiced]) / reference[voiced])) if voiced.any() else 0.0
