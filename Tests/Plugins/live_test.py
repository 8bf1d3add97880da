#!/usr/bin/env python3
"""`koe live` on a headless JACK server that the test starts: speech played into it, its output recorded.

Usage: python3 Tests/Plugins/live_test.py --koe .build/release/koe
(`make test-plugins` installs jackd2 and the JACK-Client Python package and runs it.)

The server is the issue's: `jackd --name NAME --realtime -d dummy --rate 48000 --period 512 --wait 10667
--capture 1 --playback 1`, its clients pointed at it with JACK_DEFAULT_SERVER=NAME; it and koe are child
processes, stopped by PID when the test ends, however it ends. koe reaches it through PortAudio's JACK host API
(device `system`). The test is a JACK client too: its output port feeds koe's input port and its input port
takes koe's output, so what it plays and what it records are counted in the same frames.

  devices    `koe live --list-devices` names the device `system`.
  session    `koe live --input system --output system --pitch 1.2` runs while the test plays at least 10 s of
             speech (samples/ and ../shared/corpus/ at 48 kHz) into it and records its output; then SIGINT, and
             koe exits 130 with its summary line.
  xruns      koe's summary line after the session: no refused block, no block in which koe waited, and no block on
             which its thread worked more than measures.WORK_SHARE of the period, so that koe never holds up a
             cycle. Xruns, the server's (the test's xrun callback) and koe's (its summary), and a busiest block over
             the bar are reported; with koe's own work that far inside its period they are the system's (its
             real-time thread woken late or preempted on a busy machine), as in the virtual microphone's test.
             Work over the bar is checked again on a second koe hearing the same speech, as the starts are.
  starts     20 starts in a row of `koe live --input system --output system --pitch 1.2`, each stopped by SIGINT
             after its first 5 s (issue 23): the same bar on each start's summary. Starts with an xrun are listed
             with the clients the server names as late and koe's busiest block, and told koe's or the system's.
             A start whose work is over the bar is started once more: every start hears the same silence, so koe's
             own work would be over it again, while the time the system takes on koe's thread comes and goes (on
             the virtual machines measured, a block's thread time also holds interrupts and the hypervisor's work:
             buffered disk writes put one block in three starts at 140 to 700 %); both figures are given.
  pitch      Praat's F0 of the recording over that of the speech played, the recording read the measured delay
             late: within 3 % of 1.2.
  terminal   `koe live` on a pseudo-terminal: its status line shows the meters, the pitch, the latency and the
             xruns; the up arrow raises the pitch a semitone (1.2 -> 1.27 on the line); q ends it with exit 0.
  delay      end to end, played to recorded, by cross-correlation of the 20 ms envelopes (see
             measures.envelope): within one period (512 frames) of the latency koe reports (its VoiceChanger's
             plus the devices' latency as PortAudio gives it; koe live runs the --live analysis), and within
             issue 13's 150 ms.
  anchor     the delay measured exactly: koe live at pitch 1, whose output is its input delayed (a shifted
             voice's envelopes differ from the input's, which biases the correlation by a few ms), beside
             Tests/Plugins/portaudio_copy.c, a PortAudio client opened as koe live opens its stream that copies
             its input to its output: the devices' round trip alone. koe live's delay less its VoiceChanger's
             bound (`koe convert --live --json`) is at most that round trip, and at most one period (the
             issue's bar: the live bound plus one period), +-1 ms.

One PASS or FAIL line per check; the last line reads `live: N passed, M failed`; exits 1 when a check fails.
"""

import collections
import os
import re
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "Harness"))
import measures  # noqa: E402
import terminal  # noqa: E402
from harness import (Children, Failure, Suite, cannot_run, changer_bound, check, missing_tools,  # noqa: E402
                     option_parser, run, speech)

RATE = 48000
PERIOD = 512
PITCH = 1.2
F0_TOLERANCE = 0.03        # relative
SESSION_SECONDS = 10.0     # at least this much speech played
TAIL_SECONDS = 1.0         # recorded after the speech ends, to hear it out of koe's latency
ISSUE_DELAY_BAR = 0.150    # s
ANCHOR_SECONDS = 4.0       # of the speech played through the copy program
DELAY_RESOLUTION = 0.001   # s, of the envelopes' cross-correlation on speech
COPY_SOURCE = Path(__file__).resolve().parent / "portaudio_copy.c"
WAIT_SECONDS = 20
STARTS = 20                # koe live started this many times in a row ...
START_SECONDS = 5.0        # ... each watched for xruns this long


def connect_client(server):
    import jack
    # libjack says on stderr that the server is not up yet, while the test waits for it to be.
    jack.set_error_function(lambda message: None)
    jack.set_info_function(lambda message: None)
    deadline = time.monotonic() + WAIT_SECONDS
    while True:
        try:
            return jack.Client("koe-live-test", no_start_server=True, servername=server)
        except jack.JackOpenError:
            check(time.monotonic() < deadline, f"no JACK server {server} after {WAIT_SECONDS} s")
            time.sleep(0.2)


def client_ports(client):
    """The input and output ports of the PortAudio client running (koe or the copy program): PortAudio connects
    them to the system device's."""
    deadline = time.monotonic() + WAIT_SECONDS
    while time.monotonic() < deadline:
        inputs = client.get_all_connections("system:capture_1")
        outputs = client.get_all_connections("system:playback_1")
        if inputs and outputs:
            return inputs[0], outputs[0]
        time.sleep(0.1)
    raise Failure(f"the client's ports never appeared on the server in {WAIT_SECONDS} s")


def play_and_record(client, stimulus, their_input, their_output):
    """Plays `stimulus` into a client's input and records its output as long plus TAIL_SECONDS; returns the
    recording and the xruns the server reported meanwhile."""
    total = len(stimulus) + int(TAIL_SECONDS * RATE)
    recording = np.zeros(total, dtype=np.float32)
    position = [0]
    xruns = [0]
    done = threading.Event()
    out_port = client.outports.register("out")
    in_port = client.inports.register("in")

    @client.set_xrun_callback
    def xrun(delay):
        xruns[0] += 1

    @client.set_process_callback
    def process(frames):
        start = position[0]
        out = out_port.get_array()
        out[:] = 0
        if start < len(stimulus):
            count = min(frames, len(stimulus) - start)
            out[:count] = stimulus[start:start + count]
        if start < total:
            count = min(frames, total - start)
            recording[start:start + count] = in_port.get_array()[:count]
        position[0] = start + frames
        if position[0] >= total:
            done.set()

    # Both connections are made before the first frame is played: position 0 is the first cycle after them.
    client.activate()
    client.connect(out_port, their_input)
    client.connect(their_output, in_port)
    position[0] = 0
    xruns[0] = 0
    check(done.wait(total / RATE + WAIT_SECONDS), "the server stopped calling the test's client")
    client.deactivate()
    client.outports.clear()
    client.inports.clear()
    return recording, xruns[0]


# One start of koe live: the xruns the server counted, koe's summary and the clients the server named as late.
Start = collections.namedtuple("Start", "number server summary late")


def clean_starts(server, koe, children):
    """Starts koe live STARTS times, each for START_SECONDS from its launch; returns a Start for each.
    The xruns are counted by a client of their own that processes nothing: a Python process callback waits for
    the interpreter's lock, which the test's own work (starting koe) holds, and makes xruns of its own."""
    import jack
    watcher = jack.Client("koe-live-starts", no_start_server=True, servername=server)
    xruns = [0]

    @watcher.set_xrun_callback
    def xrun(delay):
        xruns[0] += 1

    watcher.activate()

    def one(number):
        server_log = len(children.log("jackd"))
        xruns[0] = 0
        launched = time.monotonic()
        name = f"koe-start-{number}"
        process = children.start(name, [koe, "live", "--input", "system", "--output", "system", "--pitch", PITCH])
        client_ports(watcher)
        time.sleep(max(0.0, START_SECONDS - (time.monotonic() - launched)))
        server_xruns = xruns[0]
        process.send_signal(signal.SIGINT)
        process.wait(WAIT_SECONDS)
        summary = measures.live_summary(children.log(name))
        check(summary is not None, f"start {number}: no summary line in: {children.log(name).strip()[-200:]!r}")
        late = sorted(set(re.findall(r"client = (\S+) was not finished", children.log("jackd")[server_log:])))
        return Start(number, server_xruns, summary, late)

    try:
        starts = [one(number) for number in range(STARTS)]
        again = {start.number: one(f"{start.number}-again") for start in starts if measures.koe_late(start.summary)}
    finally:
        watcher.deactivate()
        watcher.close()
    return starts, again


def main():
    arguments = option_parser(__doc__).parse_args()
    missing = missing_tools(("jackd", "sox")) + ([] if arguments.koe.is_file() else [str(arguments.koe)])
    try:
        import jack  # noqa: F401
    except (ImportError, OSError):
        missing.append("the JACK-Client Python package")
    if missing:
        return cannot_run("live", missing, "make test-plugins")

    suite = Suite("live", arguments.keep, 8)
    root = suite.root
    server = f"koe-live-test-{os.getpid()}"
    children = Children(root, dict(os.environ, JACK_DEFAULT_SERVER=server))
    with suite.running(children.stop_all):
        stimulus = speech(root, SESSION_SECONDS, RATE)
        children.start("jackd", ["jackd", "--name", server, "--realtime", "-d", "dummy", "--rate", RATE,
                                 "--period", PERIOD, "--wait", 10667, "--capture", 1, "--playback", 1])
        client = connect_client(server)
        print(f"live: jackd {server} up (PID {children.pids}), {len(stimulus) / RATE:.1f} s of speech, in {root}",
              flush=True)

        listing = subprocess.run([str(arguments.koe), "live", "--list-devices"], capture_output=True, text=True,
                                 env=children.environment, timeout=WAIT_SECONDS)
        names = [line.split("\t")[1] for line in listing.stdout.splitlines() if "\t" in line]
        suite.report("devices", listing.returncode == 0 and "system" in names,
                     f"exit {listing.returncode}, devices {names}")

        suite.attempt("terminal", lambda: terminal.terminal_session(
            [str(arguments.koe), "live", "--input", "system", "--output", "system", "--pitch", str(PITCH)],
            children.environment, WAIT_SECONDS))

        koe = children.start("koe", [arguments.koe, "live", "--input", "system", "--output", "system",
                                     "--pitch", PITCH])
        koe_input, koe_output = client_ports(client)
        recording, server_xruns = play_and_record(client, stimulus, koe_input, koe_output)
        koe.send_signal(signal.SIGINT)
        try:
            status = koe.wait(WAIT_SECONDS)
        except subprocess.TimeoutExpired:
            status = None
        log = children.log("koe")
        line = measures.SUMMARY.search(log)
        suite.report("session", status == 130 and line is not None,
                     f"{len(stimulus) / RATE:.1f} s played; SIGINT: exit {status}; "
                     + (f"summary: {line.group(0)}" if line else f"no summary line in: {log.strip()[-200:]!r}"))
        if line is None:
            raise Failure("no summary line from koe live")
        summary = measures.live_summary(log)
        reported = summary.latency
        said = (f"server {server_xruns}, koe {summary.xruns}, "
                f"{measures.lateness(summary, server_xruns or summary.xruns)}")
        def rerun(run):
            name = f"koe-run-{run}"
            again = children.start(name, [arguments.koe, "live", "--input", "system", "--output", "system",
                                          "--pitch", PITCH])
            again_input, again_output = client_ports(client)
            play_and_record(client, stimulus, again_input, again_output)
            again.send_signal(signal.SIGINT)
            again.wait(WAIT_SECONDS)
            repeated = measures.live_summary(children.log(name))
            check(repeated is not None, f"no summary line from koe run {run}: {children.log(name)[-200:]!r}")
            return repeated
        judged, said = measures.judged_over_runs(summary, said, rerun)
        suite.report("xruns", not measures.koe_late(judged), f"{said}, over {len(recording) / RATE:.1f} s")

        delay = measures.envelope_delay(stimulus, recording, RATE, RATE)
        ratio, frames = measures.f0_ratio(stimulus, recording, RATE, delay)
        suite.report("pitch", frames >= measures.MIN_VOICED_FRAMES and abs(ratio / PITCH - 1) <= F0_TOLERANCE,
                     f"F0 ratio {ratio:.4f} over {frames} frames (bar: within 3 % of {PITCH})")
        suite.report("delay", abs(delay / RATE - reported) <= PERIOD / RATE and delay / RATE <= ISSUE_DELAY_BAR,
                     f"measured {1000 * delay / RATE:.1f} ms end to end, koe reports {1000 * reported:.1f} ms, its "
                     f"VoiceChanger's live bound and the devices' latency (bar: within one period, "
                     f"{1000 * PERIOD / RATE:.1f} ms, and at most {1000 * ISSUE_DELAY_BAR:.0f} ms)")

        starts, again = clean_starts(server, arguments.koe, children)
        koes = [start for start in starts
                if measures.koe_late(start.summary) and measures.koe_late(again[start.number].summary)]
        listed = [start for start in starts if start.server or start.summary.xruns or start.number in again]

        def lateness(start):
            said = measures.lateness(start.summary, True)
            if start.number not in again:
                return said
            return (said.removesuffix(": koe's") + f"; started again, its most work "
                    f"{100 * again[start.number].summary.work:.1f} %: "
                    + ("koe's" if start in koes else "the first was the system's"))

        busiest = max(starts, key=lambda start: start.summary.busiest).summary
        most = max(starts, key=lambda start: start.summary.work).summary
        suite.report("starts", not koes,
                     f"{STARTS - len(koes)} of {STARTS} starts within the bar (none refused or waited, work at most "
                     f"{100 * measures.WORK_SHARE:.0f} %; the busiest block {100 * busiest.busiest:.1f} % of its time, "
                     f"{busiest.at:.2f} s in; the most work {100 * most.work:.1f} %), "
                     f"{sum(1 for start in starts if not start.server and not start.summary.xruns)} without an xrun in "
                     f"their first {START_SECONDS:.0f} s"
                     + "".join(f"; start {start.number}: server {start.server}, koe {start.summary.xruns}, late: "
                               f"{', '.join(start.late) or '-'}, {lateness(start)}" for start in listed))

        excerpt = stimulus[:int(ANCHOR_SECONDS * RATE)]

        def round_trip(name, argv):
            process = children.start(name, argv)
            their_input, their_output = client_ports(client)
            recorded, _ = play_and_record(client, excerpt, their_input, their_output)
            process.send_signal(signal.SIGINT)
            process.wait(WAIT_SECONDS)
            return measures.envelope_delay(excerpt, recorded, RATE, RATE) / RATE

        copy_program = root / "portaudio_copy"
        run(["cc", "-O2", "-Wall", "-Wextra", "-Werror", "-o", copy_program, COPY_SOURCE, "-lportaudio"])
        devices = round_trip("copy", [copy_program, "system"])
        unshifted = round_trip("koe-unshifted", [arguments.koe, "live", "--input", "system", "--output", "system"])
        client.close()
        bound = changer_bound(arguments.koe, root, PITCH, RATE)
        beyond = unshifted - bound
        suite.report("anchor", beyond <= min(devices, PERIOD / RATE) + DELAY_RESOLUTION,
                     f"koe live at pitch 1: {1000 * unshifted:.1f} ms = its VoiceChanger's bound "
                     f"{1000 * bound:.1f} ms + {1000 * beyond:.1f} ms; the copy program's round trip "
                     f"{1000 * devices:.1f} ms, one period {1000 * PERIOD / RATE:.1f} ms (bar: the bound + at most "
                     f"both, +-{1000 * DELAY_RESOLUTION:.0f} ms)")

    return suite.finish("jackd.log, koe.log")


if __name__ == "__main__":
    sys.exit(main())
