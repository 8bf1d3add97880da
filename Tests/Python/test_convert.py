"""koe.convert writes the file `koe convert` writes, byte for byte, for several option sets; errors raise
ValueError, OSError or TypeError with the CLI's message."""

import json
import subprocess

import pytest

import koe
from conftest import REPOSITORY

SOURCE = REPOSITORY / "samples/en-m-16k.wav"

# (keyword options, the same as command-line flags)
OPTION_SETS = [
    ({"pitch": 1.2, "formant": 1.1}, ["--pitch", "1.2", "--formant", "1.1"]),
    ({"semitones": -4, "eq": ["peak:1000:6:1.4", "lowshelf:200:-3"], "gain": -3},
     ["--semitones", "-4", "--eq", "peak:1000:6:1.4", "--eq", "lowshelf:200:-3", "--gain", "-3"]),
    ({"preset": "kawaii", "formant": 1.05}, ["--preset", "kawaii", "--formant", "1.05"]),
    ({"tempo": 1.5, "f0_method": "harvest"}, ["--tempo", "1.5", "--f0-method", "harvest"]),
    ({"live": True, "pitch": 0.8, "no_limit": True}, ["--live", "--pitch", "0.8", "--no-limit"]),
    ({"snap": "A:minor", "vibrato": "5.5:50", "pitch_range": 0.5}, ["--snap", "A:minor", "--vibrato", "5.5:50", "--pitch-range", "0.5"]),
    ({"eq": "highpass:100"}, ["--eq", "highpass:100"]),
]


@pytest.mark.parametrize("options, flags", OPTION_SETS, ids=[" ".join(flags) for _, flags in OPTION_SETS])
def test_equals_the_cli_byte_for_byte(koe_binary, scratch, options, flags):
    source = SOURCE
    mine, theirs = scratch / "python.wav", scratch / "cli.wav"
    koe.convert(source, mine, **options)
    subprocess.run([koe_binary, "convert", str(source), str(theirs), *flags], check=True)
    assert mine.read_bytes() == theirs.read_bytes()


def test_options_are_the_settings_table(koe_binary):
    table = json.loads(subprocess.run([koe_binary, "settings", "--json"], capture_output=True, text=True, check=True).stdout)
    assert koe.CONVERT_OPTIONS == set(table)


@pytest.mark.parametrize("name, flag", [("pitch", "--pitch"), ("formant", "--formant"), ("gain", "--gain"),
                                        ("tempo", "--tempo"), ("pitch_range", "--pitch-range")])
def test_refuses_beyond_the_table_as_the_cli_does(koe_binary, scratch, name, flag):
    table = json.loads(subprocess.run([koe_binary, "settings", "--json"], capture_output=True, text=True, check=True).stdout)
    beyond = table[name]["maximum"] * 2 + 1
    with pytest.raises(ValueError) as raised:
        koe.convert(SOURCE, scratch / "out.wav", **{name: beyond})
    message = cli_error(koe_binary, SOURCE, scratch / "out.wav", flag, beyond)
    bounds = f"between {table[name]['minimum']:g} and {table[name]['maximum']:g}"
    assert bounds in str(raised.value) and bounds in message
    assert str(raised.value).removeprefix(name) == message.removeprefix(flag)
    assert not (scratch / "out.wav").exists()


def cli_error(koe_binary, *arguments):
    result = subprocess.run([koe_binary, "convert", *map(str, arguments)], capture_output=True, text=True)
    assert result.returncode != 0
    return result.stderr.strip().removeprefix("koe: error: ")


def test_errors(koe_binary, scratch):
    source = SOURCE
    missing = scratch / "missing.wav"
    with pytest.raises(OSError) as raised:
        koe.convert(missing, scratch / "out.wav", pitch=1.2)
    assert str(raised.value) == cli_error(koe_binary, missing, scratch / "out.wav", "--pitch", "1.2")
    with pytest.raises(ValueError, match="unknown preset 'nope'"):
        koe.convert(source, scratch / "out.wav", preset="nope")
    with pytest.raises(ValueError) as raised:
        koe.convert(source, scratch / "out.wav", eq=["peak:90000:6"])
    assert str(raised.value) in cli_error(koe_binary, source, scratch / "out.wav", "--eq", "peak:90000:6")
    with pytest.raises(ValueError, match="pitch"):
        koe.convert(source, scratch / "out.wav", pitch=100)
    with pytest.raises(ValueError, match="same file"):
        koe.convert(source, source, pitch=1.2)
    with pytest.raises(TypeError, match="unexpected option 'pich'"):
        koe.convert(source, scratch / "out.wav", pich=1.2)
    with pytest.raises(ValueError, match="f0_method"):
        koe.convert(source, scratch / "out.wav", f0_method="yin")
    with pytest.raises(OSError):
        koe.convert(source, scratch / "no-such-folder" / "out.wav", pitch=1.2)
    assert not (scratch / "out.wav").exists(), "a refused conversion leaves nothing behind"
