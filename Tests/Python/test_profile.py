"""koe.profile measures what `koe profile --json` measures, through koe.h's koe_profile; bad input raises
ValueError or TypeError as the rest of the module does."""

import json
import subprocess

import numpy as np
import pytest
import soundfile

import koe
from conftest import REPOSITORY

KEYS = {"f0_median_hz", "f0_spread_semitones", "vocal_tract_length_cm", "voiced_seconds"}


@pytest.mark.parametrize("name", ["en-f-48k.wav", "en-m-16k.wav"])
def test_equals_the_command(koe_binary, name):
    path = REPOSITORY / "samples" / name
    x, fs = soundfile.read(path)
    mine = koe.profile(x, fs)
    theirs = json.loads(subprocess.run([koe_binary, "profile", "--json", str(path)], capture_output=True, text=True,
                                       check=True).stdout)
    assert set(mine) == KEYS and KEYS <= set(theirs)
    for key in KEYS:
        assert mine[key] == pytest.approx(theirs[key], abs=0.006), key


def test_a_female_voice_is_higher_and_shorter_than_a_male_one():
    female = koe.profile(*soundfile.read(REPOSITORY / "samples/en-f-48k.wav"))
    male = koe.profile(*soundfile.read(REPOSITORY / "samples/en-m-16k.wav"))
    assert 200 < female["f0_median_hz"] < 300 and 70 < male["f0_median_hz"] < 110
    assert female["vocal_tract_length_cm"] < male["vocal_tract_length_cm"]
    assert 0 < female["voiced_seconds"] < 3.5 and female["f0_spread_semitones"] > 0


def test_float32_is_taken():
    x, fs = soundfile.read(REPOSITORY / "samples/en-m-16k.wav", dtype="float32")
    assert koe.profile(x, fs) == koe.profile(x.astype(np.float64), fs)


@pytest.mark.parametrize("x, fs, error", [
    (np.zeros((2, 16000)), 16000, ValueError),
    (np.zeros(16000), 16000, ValueError),
    (np.zeros(10), 16000, ValueError),
    (np.full(16000, np.nan), 16000, ValueError),
    (np.zeros(16000), 4000, ValueError),
    (np.zeros(16000, dtype=np.int16), 16000, TypeError),
    (np.zeros(16000), "16000", TypeError),
    ("speech", 16000, TypeError),
], ids=["2-D", "silence", "too short", "NaN", "rate", "int16", "fs as str", "not an array"])
def test_bad_input_raises(x, fs, error):
    with pytest.raises(error):
        koe.profile(x, fs)
