#!/usr/bin/env python3
"""`koe live --virtual-mic` in a private, headless PipeWire session that the test starts, as a desktop has it.

Usage: python3 Tests/VirtualMic/virtual_mic_test.py --koe .build/release/koe
(`make test-virtual-mic` installs pipewire, wireplumber, pipewire-pulse, pipewire-bin, pulseaudio-utils and dbus
and runs it.)

The session, the player and the two-channel recorder (what koe hears, what it offers) are Tests/Harness/pipewire.py's.

  appear     `koe live --virtual-mic "koe voice" --pitch 1.2` (under Tests/VirtualMic/stream_call_counter.c,
             LD_PRELOAD): `pactl list sources` shows `Description: koe voice`, mono at the graph's rate, within
             APPEAR_SECONDS of the start.
  pitch      speech played in, the source recorded: Praat's median F0 ratio on jointly voiced frames within 3 %
             of 1.2 (the output read at its measured delay); the recording finite, not silent.
  set        `koe live --set "koe voice" pitch=1.5 gain=-6` while speech plays: the ratio from one second after
             the command on is within 3 % of 1.5 (and before it, of 1.2), the answer echoes the gain, and the level
             against the input drops by 6 dB +- 1.5 from before the command to after it.
  xruns      koe's summary line: no refused block, no block in which koe waited, and no block on which its thread
             worked more than measures.WORK_SHARE of the block's duration, so that koe never holds up a graph cycle.
             Missed cycles, and a busiest block over the bar, are reported; with koe's own work that far inside its
             cycle they are the system's (its real-time thread woken late or preempted on a busy machine). Work over
             the bar is checked again on a second koe hearing the same speech: koe's own work would be over it again,
             while the time the system takes on koe's thread comes and goes (see measures.WORK_SHARE).
  realtime   the counter's report: no heap or lock call within the process step after the first block.
  vanish     SIGINT: koe exits 130 (or 0) and the source is gone from `pactl list sources` within 3 s.
  sigterm    the same for SIGTERM (in the delay's run), exit 0.
  delay      `koe live --virtual-mic "koe voice" --live` at pitch 1, whose output is its input delayed: the delay
             by cross-correlation of the two channels is at most koe's --live bound (`koe convert --live --json`)
             plus two quanta (the quantum koe reports), and koe's reported latency is the bound plus one quantum.
  errors     a NAME already taken, a capture device that is not there, and no PipeWire server: each a one-line
             error naming the problem and a non-zero exit, within ERROR_SECONDS.
  terminal   on a pseudo-terminal: the status line, the up arrow raises the pitch a semitone (1.2 -> 1.27), q
             ends it with exit 0.
  default    its own source made the default source while it runs, and configured so when it starts again: koe
             captures the null sink's monitor both times, never itself.

One PASS or FAIL line per check; the last line reads `virtual-mic: N passed, M failed`; exits 1 when one fails.
"""

import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "Harness"))
import measures  # noqa: E402
import terminal  # noqa: E402
from harness import Failure, Suite, cannot_run, changer_bound, check, missing_tools, option_parser, speech  # noqa: E402
from pipewire import (COUNTER_TOOLS, NAME, NODE, RATE, SINK, TOOLS, WAIT_SECONDS, Recorder, Session,  # noqa: E402
                      call_counter, counts, play, realtime_summary, record_playing, wait_done)

OTHER_SINK = "koe_test_other"   # a second device, named with --input
PITCH = 1.2
SET_PITCH = 1.5
SET_GAIN_DB = -6.0         # sent with the new pitch
GAIN_TOLERANCE_DB = 1.5    # the level change it makes, as heard (pitch 1.2 -> 1.5 alone moves it by about 0.2 dB)
F0_TOLERANCE = 0.03        # relative
SESSION_SECONDS = 10.0     # at least this much speech played for the pitch
APPEAR_SECONDS = 5.0       # "within a few seconds of the start"
VANISH_SECONDS = 3.0
SET_SECONDS = 1.0          # the new pitch heard within this of the command
ERROR_SECONDS = 15.0       # an error comes before this, never a hang
SILENT_DB = -30            # the output's level against the input's above this: not silent


class Koe:
    """One `koe live --virtual-mic` run under the call counter."""

    def __init__(self, session, koe, counter, name, options):
        self.session = session
        self.name = name
        self.report = session.folder / f"counts-{name}"
        self.started = time.monotonic()
        self.process = session.start(name, [koe, "live", "--virtual-mic", NAME, *options],
                                     extra={"LD_PRELOAD": str(counter), "COUNT_OUTPUT": str(self.report)})

    def wait_listed(self):
        """Seconds from the start until pactl lists the source."""
        while self.session.source_block() is None:
            check(self.process.poll() is None, f"koe exited {self.process.returncode}: {self.log()[-300:]!r}")
            check(time.monotonic() - self.started < WAIT_SECONDS, f"no source '{NAME}' after {WAIT_SECONDS} s")
            time.sleep(0.05)
        return time.monotonic() - self.started

    def wait_ready(self):
        """The start line, which comes once the first cycle has run."""
        self.session.wait_for(lambda: "virtual mic" in self.log() or self.process.poll() is not None, "start line")
        check(self.process.poll() is None, f"koe exited {self.process.returncode}: {self.log()[-300:]!r}")

    def interrupt(self, how=signal.SIGINT):
        """A signal; the exit status and the seconds until the source left pactl's list."""
        sent = time.monotonic()
        self.process.send_signal(how)
        try:
            status = self.process.wait(WAIT_SECONDS)
        except subprocess.TimeoutExpired:
            status = None
        while self.session.source_block() is not None and time.monotonic() - sent < WAIT_SECONDS:
            time.sleep(0.05)
        return status, time.monotonic() - sent

    def log(self):
        return self.session.log(self.name)

    def summary(self):
        """koe's summary line (measures.Summary) and the quantum (frames) it gives."""
        summary = measures.live_summary(self.log())
        quantum = re.search(r"latency [\d.]+ ms \(koe [\d.]+ ms \+ quantum (\d+) frames\)", self.log())
        check(summary is not None and quantum is not None, f"no summary line from koe: {self.log()[-300:]!r}")
        return summary, int(quantum.group(1))

    def counts(self):
        return counts(self.report)


def pitch_between(played, recorded, delay, start, end):
    """The F0 ratio over recorded frames start..end (the input taken `delay` frames earlier)."""
    start, end = max(start, delay), min(end, len(recorded))
    ratio, frames = measures.f0_ratio(played[start - delay:end - delay], recorded[start:end], RATE, 0)
    return ratio, frames


def level_between(played, recorded, delay, start, end):
    """The recorded level against the played one over recorded frames start..end, in dB."""
    start, end = max(start, delay), min(end, len(recorded))
    return measures.level_db(played[start - delay:end - delay], recorded[start:end], 0)


def one_line_error(session, argv, extra, words):
    """A command that must fail at once: its exit status, its stderr, and whether it is one line naming `words`."""
    started = time.monotonic()
    try:
        result = session.run(argv, timeout=ERROR_SECONDS, extra=extra)
    except subprocess.TimeoutExpired:
        raise Failure(f"{' '.join(map(str, argv[1:]))}: still running after {ERROR_SECONDS:.0f} s")
    lines = result.stderr.strip().splitlines()
    good = (result.returncode != 0 and len(lines) == 1 and lines[0].startswith("koe: error: ")
            and all(word in lines[0] for word in words))
    return good, f"exit {result.returncode} in {time.monotonic() - started:.1f} s: {result.stderr.strip()!r}"


def capture_peers(session):
    """The nodes koe's capture stream is linked to."""
    listing = session.run(["pw-link", "-l"]).stdout.splitlines()
    peers = set()
    for line, following in zip(listing, listing[1:]):
        if line.startswith(f"{NODE}.capture:input_") and "|<-" in following:
            peers.add(following.split("|<-")[1].strip().split(":")[0])
    return peers


def main():
    arguments = option_parser(__doc__).parse_args()
    koe = arguments.koe.resolve()
    tools = TOOLS + COUNTER_TOOLS + ("sox",)
    missing = missing_tools(tools) + ([] if koe.is_file() else [str(koe)])
    if missing:
        return cannot_run("virtual-mic", missing, "make test-virtual-mic")

    suite = Suite("virtual-mic", arguments.keep, 8)
    root = suite.root
    session = Session(root)
    with suite.running(session.stop_all):
        counter = call_counter(root)
        stimulus = speech(root, SESSION_SECONDS, RATE)
        session.up()
        print(f"virtual-mic: session up in {root} (dbus, pipewire, wireplumber, pipewire-pulse: PIDs "
              f"{session.pids}); {len(stimulus) / RATE:.1f} s of speech", flush=True)

        # The shifted voice: appear, pitch, set, xruns, realtime, vanish.
        shifted = Koe(session, koe, counter, "koe-shifted", ["--pitch", PITCH])

        def appear():
            seconds = shifted.wait_listed()
            block = session.source_block()
            spec = re.search(r"Sample Specification: (.*)", block)
            check(spec and spec.group(1).strip() == f"float32le 1ch {RATE}Hz",
                  f"the source is {spec.group(1) if spec else '?'}, not mono at {RATE} Hz")
            check(seconds <= APPEAR_SECONDS, f"listed after {seconds:.2f} s (bar {APPEAR_SECONDS:.0f} s)")
            return f"'Description: {NAME}' in pactl list sources {seconds:.2f} s after the start; {spec.group(1)}"
        suite.attempt("appear", appear)
        shifted.wait_ready()

        # Two recordings: the speech at --pitch 1.2, then the same speech with the pitch changed from outside
        # halfway through. Each holds one playing, so the channels' delay and where the speech starts are unique.
        recorder = Recorder(session, "shifted")
        wait_done(play(session, stimulus, "pitch"), stimulus)
        time.sleep(1.0)
        played, recorded = recorder.finish()

        def pitch():
            check(np.all(np.isfinite(recorded)), "the recording holds non-finite samples")
            delay = measures.envelope_delay(played, recorded, RATE, RATE // 2)
            ratio, frames = measures.f0_ratio(played, recorded, RATE, delay)
            level = measures.level_db(played, recorded, delay)
            check(frames >= measures.MIN_VOICED_FRAMES and abs(ratio / PITCH - 1) <= F0_TOLERANCE and level > SILENT_DB,
                  f"F0 ratio {ratio:.4f} over {frames} frames, level {level:.1f} dB (bar: within 3 % of {PITCH}, "
                  f"above {SILENT_DB} dB)")
            return (f"F0 ratio {ratio:.4f} over {frames} jointly voiced frames (bar: {PITCH} +- 3 %), level "
                    f"{level:+.1f} dB against the input, finite; delay {1000 * delay / RATE:.1f} ms by the envelopes")
        suite.attempt("pitch", pitch)

        recorder, player, played_at = record_playing(session, stimulus, "set")
        time.sleep(len(stimulus) / 2 / RATE)
        set_at = time.monotonic() - played_at
        answer = session.run([koe, "live", "--set", NAME, f"pitch={SET_PITCH}", f"gain={SET_GAIN_DB}"])
        wait_done(player, stimulus)
        time.sleep(1.0)
        set_played, set_recorded = recorder.finish()

        def set_pitch():
            check(answer.returncode == 0, f"koe live --set: exit {answer.returncode}: {answer.stderr.strip()}")
            delay = measures.envelope_delay(set_played, set_recorded, RATE, RATE // 2)
            # The command's time on the recording, counted from where the speech starts on the input channel
            # (its only playing): pw-play's own start makes it at most a few milliseconds early.
            start = measures.envelope_delay(stimulus, set_played, RATE, len(set_played))
            command = start + int(set_at * RATE)
            before, before_frames = pitch_between(set_played, set_recorded, delay, start, command)
            after, after_frames = pitch_between(set_played, set_recorded, delay, command + int(SET_SECONDS * RATE),
                                                start + len(stimulus) + delay)
            check(after_frames >= measures.MIN_VOICED_FRAMES and abs(after / SET_PITCH - 1) <= F0_TOLERANCE
                  and abs(before / PITCH - 1) <= F0_TOLERANCE,
                  f"F0 ratio {before:.4f} before, {after:.4f} from {SET_SECONDS:.0f} s after the command over "
                  f"{after_frames} frames (bar: {PITCH} then {SET_PITCH}, +- 3 %)")
            check(f"gain {SET_GAIN_DB}" in answer.stdout, f"the answer does not echo the gain: {answer.stdout.strip()!r}")
            level_before = level_between(set_played, set_recorded, delay, start, command)
            level_after = level_between(set_played, set_recorded, delay, command + int(SET_SECONDS * RATE),
                                        start + len(stimulus) + delay)
            change = level_after - level_before
            check(abs(change - SET_GAIN_DB) <= GAIN_TOLERANCE_DB,
                  f"level {change:+.1f} dB from before the command to after it (bar: {SET_GAIN_DB:+.0f} +- "
                  f"{GAIN_TOLERANCE_DB} dB)")
            return (f"koe live --set '{NAME}' pitch={SET_PITCH} gain={SET_GAIN_DB} answered {answer.stdout.strip()!r}; "
                    f"F0 ratio {before:.4f} before ({before_frames} frames), {after:.4f} from {SET_SECONDS:.0f} s after "
                    f"it ({after_frames} frames); level {change:+.1f} dB")
        suite.attempt("set", set_pitch)

        def taken():
            good, said = one_line_error(session, [koe, "live", "--virtual-mic", NAME], None, [NAME])
            check(good, f"a second koe live --virtual-mic '{NAME}': {said}")
            return f"a second '{NAME}': {said}"
        suite.attempt("taken", taken)

        status, vanished = shifted.interrupt()

        def vanish():
            check(status in (0, 130) and vanished <= VANISH_SECONDS,
                  f"SIGINT: exit {status}, the source gone after {vanished:.2f} s (bar {VANISH_SECONDS:.0f} s)")
            return f"SIGINT: exit {status}, the source gone from pactl list sources {vanished:.2f} s later"
        suite.attempt("vanish", vanish)

        def xruns():
            summary, _ = shifted.summary()
            said = f"xruns {summary.xruns}, {measures.lateness(summary, summary.xruns)}"

            def rerun(run):
                again = Koe(session, koe, counter, f"koe-run-{run}", ["--pitch", PITCH])
                again.wait_ready()
                wait_done(play(session, stimulus, f"run-{run}"), stimulus)
                again.interrupt()
                return again.summary()[0]
            summary, said = measures.judged_over_runs(summary, said, rerun)
            check(not measures.koe_late(summary), said)
            return f"{said}, over {(len(recorded) + len(set_recorded)) / RATE:.1f} s recorded"
        suite.attempt("xruns", xruns)

        def realtime():
            summary, clean = realtime_summary(shifted.counts(), RATE)
            check(clean, f"{summary}: a heap or lock call after the first block")
            return summary
        suite.attempt("realtime", realtime)

        # Pitch 1, --live: the delay.
        def delay():
            bound = changer_bound(koe, root, PITCH, RATE)
            unshifted = Koe(session, koe, counter, "koe-unshifted", ["--live"])
            unshifted.wait_ready()
            recorder = Recorder(session, "unshifted")
            excerpt = stimulus[:int(4 * RATE)]
            wait_done(play(session, excerpt, "delay"), excerpt)
            time.sleep(0.5)
            # koe stops first, so that its summary gives the quantum the recording ran at; SIGTERM, as a service
            # manager stops it.
            status, vanished = unshifted.interrupt(signal.SIGTERM)
            played, recorded = recorder.finish()
            suite.report("sigterm", status == 0 and vanished <= VANISH_SECONDS,
                         f"SIGTERM: exit {status}, the source gone from pactl list sources {vanished:.2f} s later "
                         f"(bar: exit 0, {VANISH_SECONDS:.0f} s)")
            summary, quantum = unshifted.summary()
            reported = summary.latency
            lag, correlation = measures.lag(played, recorded, RATE // 2)
            measured = lag / RATE
            bar = bound + 2 * quantum / RATE
            expected = bound + quantum / RATE
            summary = (f"measured {1000 * measured:.2f} ms end to end at pitch 1 (correlation {correlation:.3f}); koe "
                       f"reports {1000 * reported:.1f} ms, to be its --live bound {1000 * bound:.1f} ms + one quantum "
                       f"({quantum} frames); bar: bound + 2 quanta = {1000 * bar:.1f} ms")
            check(correlation > 0.9 and measured <= bar + 1 / RATE and abs(reported - expected) < 0.0002, summary)
            return summary
        suite.attempt("delay", delay)

        def errors():
            said = []
            good, text = one_line_error(session, [koe, "live", "--virtual-mic", "koe other", "--input", "no such mic"],
                                        None, ["no such mic"])
            check(good, f"a missing capture device: {text}")
            said.append(f"missing device: {text}")
            empty = root / "empty-runtime"
            empty.mkdir(mode=0o700)
            good, text = one_line_error(session, [koe, "live", "--virtual-mic", "koe other"],
                                        {"XDG_RUNTIME_DIR": str(empty)}, ["PipeWire"])
            check(good, f"no PipeWire server: {text}")
            said.append(f"no server: {text}")
            return "; ".join(said)
        suite.attempt("errors", errors)

        def own_default():
            """Its own source made the default, koe keeps capturing the source it started with; started again
            with its own source configured as the default (and so absent), it takes the fallback: never itself."""
            said = []
            for moment in ("running", "restarted"):
                mic = Koe(session, koe, counter, f"koe-default-{moment}", [])
                mic.wait_ready()
                if moment == "running":
                    check(session.run(["pactl", "set-default-source", NODE]).returncode == 0, "set-default-source failed")
                    time.sleep(1.0)
                peers = capture_peers(session)
                default = re.search(r"Default Source: (.*)", session.run(["pactl", "info"]).stdout)
                mic.interrupt()
                check(peers == {SINK}, f"{moment}, the default source {default.group(1) if default else '?'}: koe "
                      f"captures from {sorted(peers)}, not {SINK}")
                said.append(f"{moment}: captures {SINK} while the default source is {default.group(1) if default else '?'}")
            return "; ".join(said)
        suite.attempt("default", own_default)

        def chosen_input():
            """--input DEV captures that device, not the default source; with voice, EQ and analysis options beside."""
            loaded = session.run(["pactl", "load-module", "module-null-sink", f"sink_name={OTHER_SINK}"])
            check(loaded.returncode == 0, f"pactl load-module module-null-sink: {loaded.stderr.strip()}")
            mic = Koe(session, koe, counter, "koe-input", ["--input", OTHER_SINK, "--formant", "1.1", "--eq", "peak:1000:3:1.4",
                                                          "--f0-floor", "60", "--frame-period", "5"])
            mic.wait_ready()
            peers = capture_peers(session)
            mic.interrupt()
            check(peers == {OTHER_SINK}, f"--input {OTHER_SINK}: koe captures from {sorted(peers)}")
            return f"--input {OTHER_SINK}: captures {OTHER_SINK} while the default source is {SINK}.monitor"
        suite.attempt("input", chosen_input)
        suite.attempt("terminal", lambda: terminal.terminal_session(
            [str(koe), "live", "--virtual-mic", NAME, "--pitch", str(PITCH)], session.environment, WAIT_SECONDS))

    return suite.finish("the daemons' and koe's logs, the recordings")


if __name__ == "__main__":
    sys.exit(main())
