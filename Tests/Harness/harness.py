"""What the suites that start servers of their own share (Tests/Plugins, Tests/VirtualMic, Tests/Panel, Tests/Cluster):
a check that fails with one line, the programs a suite starts (each writing to a log of its own, stopped by PID
however the suite ends), one PASS or FAIL line a check with the closing count, and what the audio suites play and
ask koe. Beside it, measures.py (what they measure on audio), terminal.py (koe live on a pseudo-terminal) and
pipewire.py (a private PipeWire session)."""

import argparse
import contextlib
import json
import shutil
import signal
import subprocess
import tempfile
import time
from pathlib import Path

import numpy as np
import soundfile

REPOSITORY = Path(__file__).resolve().parents[2]
CORPUS = REPOSITORY.parent / "shared" / "corpus"
GAP_SECONDS = 0.5          # silence before and between the clips `speech` plays
STOP_SECONDS = 5           # a child's time to end after SIGTERM, before SIGKILL


class Failure(Exception):
    """A check that failed: its message is the one line the suite prints."""


def check(condition, message):
    if not condition:
        raise Failure(message)


def run(argv, **options):
    """Runs a command to completion and returns its output; fails with its last line of output when it exits
    non-zero."""
    argv = [str(part) for part in argv]
    result = subprocess.run(argv, capture_output=True, text=True, **options)
    if result.returncode != 0:
        detail = (result.stderr or result.stdout).strip().splitlines()
        shown = " ".join(argv[:3]) + (" ..." if len(argv) > 3 else "")
        raise Failure(f"{shown} exited {result.returncode}: {detail[-1] if detail else ''}")
    return result.stdout


def option_parser(doc):
    """A suite's options, described by the first line of its `doc`: --koe and --keep, to which a suite adds its own."""
    parser = argparse.ArgumentParser(description=doc.splitlines()[0])
    parser.add_argument("--koe", type=Path, default=REPOSITORY / ".build/release/koe", help="the koe binary tested")
    parser.add_argument("--keep", action="store_true", help="keep the temporary folder (it is kept on failure)")
    return parser


def missing_tools(tools):
    return [tool for tool in tools if shutil.which(tool) is None]


class Children:
    """The programs a suite starts, each writing its output to NAME.log in `folder`, and stopped by PID, newest
    first, when the suite ends: SIGTERM, then SIGKILL after `stop_seconds`."""

    def __init__(self, folder, environment, stop_seconds=STOP_SECONDS):
        self.folder = folder
        self.environment = environment
        self.stop_seconds = stop_seconds
        self.processes = []   # (name, Popen), in start order
        folder.mkdir(parents=True, exist_ok=True)

    def start(self, name, argv, extra=None, stdout=None, **options):
        """Starts `argv` in the environment with `extra` added; its stdout (unless `stdout` says where) and stderr
        go to its log."""
        with open(self.folder / f"{name}.log", "w") as log:
            process = subprocess.Popen([str(part) for part in argv], stdin=subprocess.DEVNULL,
                                       stdout=log if stdout is None else stdout, stderr=log,
                                       env=dict(self.environment, **(extra or {})), **options)
        self.processes.append((name, process))
        return process

    def log(self, name):
        return (self.folder / f"{name}.log").read_text(errors="replace")

    def wait_for(self, condition, what, seconds=30):
        """Returns once `condition()` holds; fails naming `what` when it has not after `seconds`."""
        deadline = time.monotonic() + seconds
        while not condition():
            check(time.monotonic() < deadline, f"no {what} after {seconds} s")
            time.sleep(0.1)

    @property
    def pids(self):
        return ", ".join(str(process.pid) for _, process in self.processes)

    def stop(self, process, how=signal.SIGTERM):
        if process.poll() is None:
            process.send_signal(how)
            try:
                process.wait(self.stop_seconds)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()

    def stop_all(self):
        for _, process in reversed(self.processes):
            self.stop(process)
        self.processes = []


class Suite:
    """One run of a suite: its temporary folder, one PASS or FAIL line a check, and the closing lines."""

    def __init__(self, name, keep, width, **folder):
        self.name = name
        self.keep = keep
        self.width = width          # of the checks' names, so that the summaries line up
        self.root = Path(tempfile.mkdtemp(prefix=f"koe-{name}-", **folder))
        self.outcomes = []
        self.started = time.monotonic()

    def report(self, name, passed, summary, seconds=None):
        took = "" if seconds is None else f"{seconds:5.1f} s  "
        print(f"{'PASS' if passed else 'FAIL'} {name:{self.width}} {took}{summary}", flush=True)
        self.outcomes.append(passed)

    def attempt(self, name, body):
        """Runs one check, `body`, which returns its summary or raises: PASS or FAIL, with the time it took."""
        started = time.monotonic()
        try:
            summary, passed = body(), True
        except Failure as failure:
            summary, passed = str(failure), False
        except (subprocess.SubprocessError, OSError, ValueError, StopIteration, RuntimeError) as error:
            summary, passed = f"{type(error).__name__}: {error}", False
        self.report(name, passed, summary, time.monotonic() - started)

    @contextlib.contextmanager
    def running(self, stop=lambda: None):
        """The suite's body: SIGTERM and SIGHUP end it as an interruption, a failure outside any check fails the
        `setup` check, and `stop` ends what it started, however it ends."""
        def interrupt(signum, frame):
            raise KeyboardInterrupt(f"signal {signum}")
        signal.signal(signal.SIGTERM, interrupt)
        signal.signal(signal.SIGHUP, interrupt)
        try:
            yield
        except Failure as failure:
            self.report("setup", False, str(failure))
        except KeyboardInterrupt as interruption:
            self.report("setup", False, f"interrupted: {interruption}")
        finally:
            stop()

    def finish(self, kept):
        """The closing lines: the folder kept on failure or --keep (`kept` says what it holds) or removed, the time
        taken, the count; returns the exit status."""
        failed = self.outcomes.count(False)
        if failed or self.keep:
            print(f"{self.name}: kept {self.root} ({kept})")
        else:
            shutil.rmtree(self.root, ignore_errors=True)
        print(f"{self.name}: done in {time.monotonic() - self.started:.0f} s")
        print(f"{self.name}: {len(self.outcomes) - failed} passed, {failed} failed")
        return 1 if failed else 0


def cannot_run(name, missing, installer):
    """The lines of a suite that lacks what it needs; `installer` is the make target that brings it."""
    print(f"{name}: cannot run: missing {', '.join(missing)} (`{installer}` installs them)")
    print(f"{name}: 0 passed, 1 failed")
    return 1


def speech(folder, seconds, rate, sources=None):
    """The clips of samples/ and ../shared/corpus/ (or those of `sources`) at `rate`, mono float, with gaps,
    repeated to at least `seconds`."""
    if sources is None:
        sources = sorted((REPOSITORY / "samples").glob("*.wav"))
        if CORPUS.is_dir():
            sources += sorted(CORPUS.glob("*.wav"))
    gap = np.zeros(int(GAP_SECONDS * rate), dtype=np.float32)
    clips = []
    for source in sources:
        converted = folder / f"{source.stem}-{rate}.wav"
        if not converted.exists():
            run(["sox", source, "-r", rate, "-c", 1, "-e", "floating-point", "-b", 32, converted])
        clips.append(soundfile.read(str(converted), dtype="float32")[0])
    parts = [gap]
    while sum(len(part) for part in parts) < seconds * rate:
        parts += [clips[(len(parts) // 2) % len(clips)], gap]
    return np.concatenate(parts)


def changer_bound(koe, folder, pitch, rate):
    """The live VoiceChanger's fixed delay in seconds, whatever its voice: `koe convert --live --json` reports it
    (on stderr, stdout being for audio) for a voice that runs the vocoder."""
    tone = folder / "bound-tone.wav"
    soundfile.write(str(tone), 0.1 * np.sin(2 * np.pi * 200 * np.arange(rate) / rate), rate)
    result = subprocess.run([str(koe), "convert", str(tone), str(folder / "bound-out.wav"), "--live", "--json",
                             "--pitch", str(pitch)], capture_output=True, text=True, timeout=60)
    check(result.returncode == 0, f"koe convert --live --json failed: {result.stderr.strip()}")
    return json.loads(result.stderr)["latency_bound_ms"] / 1000
