"""A private, headless PipeWire session as a desktop has it, for the suites that run `koe live --virtual-mic`
(Tests/VirtualMic, Tests/Panel): `dbus-daemon --session`, `pipewire`, `wireplumber` and `pipewire-pulse` on a
temporary XDG_RUNTIME_DIR (with XDG_CONFIG_HOME and XDG_STATE_HOME there too, so nothing of the user's is read or
written), each a child process stopped by PID when the suite ends. A null sink `koe_test_in` (pactl load-module
module-null-sink) is the default source through its monitor; speech is played into it with pw-play. The recorder
is one pw-record stream of two channels, linked with pw-link to the null sink's monitor (what koe hears) and to the
"koe voice" source (what koe offers): both are recorded in the same graph cycles, so the delay between the two
channels is koe's, end to end through PipeWire."""

import os
import signal
import subprocess
import time

import soundfile

from harness import REPOSITORY, Children, Failure, check, run

NAME = "koe voice"
NODE = "koe_voice"
SINK = "koe_test_in"
RATE = 48000               # the session's clock.rate (PipeWire's default)
# Frames the recorder and the player ask the graph for, which sets its quantum: PipeWire's default. (At 128 frames
# koe missed cycles here: a 2-core machine shared with builds and with other jobs' audio stacks.)
RECORDER_LATENCY = "1024"
WAIT_SECONDS = 30
# The programs the session needs, for a suite's check that they are there.
TOOLS = ("dbus-daemon", "pipewire", "wireplumber", "pipewire-pulse", "pw-play", "pw-record", "pw-link", "pactl")
# Counts the heap and lock calls within koe live's PipeWire process step (LD_PRELOAD; it says how itself).
COUNTER_SOURCE = REPOSITORY / "Tests" / "VirtualMic" / "stream_call_counter.c"
COUNTER_TOOLS = ("cc", "pkg-config")


class Session(Children):
    """The private desktop session and the programs run in it, each a child process stopped by PID."""

    def __init__(self, root):
        runtime = root / "run"
        runtime.mkdir(mode=0o700)
        for folder in ("config", "state", "data"):
            (root / folder).mkdir()
        environment = {name: value for name, value in os.environ.items()
                       if name not in ("PIPEWIRE_REMOTE", "PIPEWIRE_RUNTIME_DIR", "PULSE_SERVER", "PULSE_RUNTIME_PATH",
                                       "DBUS_SESSION_BUS_ADDRESS", "LD_PRELOAD")}
        environment.update(XDG_RUNTIME_DIR=str(runtime), XDG_CONFIG_HOME=str(root / "config"),
                           XDG_STATE_HOME=str(root / "state"), XDG_DATA_HOME=str(root / "data"))
        super().__init__(root, environment)

    def run(self, argv, timeout=WAIT_SECONDS, extra=None):
        return subprocess.run([str(part) for part in argv], capture_output=True, text=True, timeout=timeout,
                              env=dict(self.environment, **(extra or {})))

    def up(self):
        """dbus, pipewire, wireplumber, pipewire-pulse; returns once pulse answers and the null sink is the
        default source's device."""
        bus = self.start("dbus", ["dbus-daemon", "--session", "--nofork", "--print-address=1"], stdout=subprocess.PIPE)
        address = bus.stdout.readline().decode().strip()
        check(address.startswith("unix:"), f"dbus-daemon gave no address: {self.log('dbus')[-200:]!r}")
        self.environment["DBUS_SESSION_BUS_ADDRESS"] = address
        self.start("pipewire", ["pipewire"])
        self.wait_for(lambda: (self.folder / "run" / "pipewire-0").exists(), "pipewire's socket")
        self.start("wireplumber", ["wireplumber"])
        self.start("pipewire-pulse", ["pipewire-pulse"])
        self.wait_for(lambda: self.run(["pactl", "info"], timeout=5).returncode == 0, "pipewire-pulse answering")
        loaded = self.run(["pactl", "load-module", "module-null-sink", f"sink_name={SINK}",
                           "sink_properties=device.description=koe-test-input"])
        check(loaded.returncode == 0, f"pactl load-module module-null-sink: {loaded.stderr.strip()}")
        # The null sink's monitor appears a moment after load-module returns; made the default before, it is refused.
        self.wait_for(lambda: f"{SINK}.monitor" in self.run(["pactl", "list", "short", "sources"]).stdout,
                      f"{SINK}.monitor among the sources")
        # pipewire-pulse answers "Not supported" until wireplumber has made the default-nodes metadata.
        deadline = time.monotonic() + WAIT_SECONDS
        while (made_default := self.run(["pactl", "set-default-source", f"{SINK}.monitor"])).returncode != 0:
            check(time.monotonic() < deadline,
                  f"set-default-source failed for {WAIT_SECONDS} s: {made_default.stderr.strip()}")
            time.sleep(0.1)
        self.wait_for(lambda: f"Default Source: {SINK}.monitor" in self.run(["pactl", "info"]).stdout,
                      f"{SINK}.monitor as the default source")

    def sources(self):
        return self.run(["pactl", "list", "sources"], timeout=10).stdout

    def source_block(self):
        """`pactl list sources`'s entry for the virtual microphone, or None."""
        for block in self.sources().split("\n\n"):
            if f"Description: {NAME}" in block:
                return block
        return None


class Recorder:
    """pw-record of two channels: the null sink's monitor (koe's input) and the virtual source (its output)."""

    def __init__(self, session, name):
        self.session = session
        self.path = session.folder / f"recording-{name}.wav"
        self.node = f"koe-test-recorder-{name}"
        self.process = session.start(name, ["pw-record", "--target", "0", "-P", f"node.name={self.node}",
                                            "--rate", RATE, "--channels", 2, "--channel-map", "FL,FR",
                                            "--format", "f32", "--latency", RECORDER_LATENCY, self.path])
        ports = lambda: self.session.run(["pw-link", "-i"]).stdout  # noqa: E731
        session.wait_for(lambda: f"{self.node}:input_FR" in ports(), "recorder's ports")
        for source, target in ((f"{SINK}:monitor_FL", "input_FL"), (f"{NODE}:capture_MONO", "input_FR")):
            linked = session.run(["pw-link", source, f"{self.node}:{target}"])
            check(linked.returncode == 0, f"pw-link {source}: {linked.stderr.strip()}")

    def finish(self):
        self.session.stop(self.process, signal.SIGINT)
        recording, rate = soundfile.read(str(self.path), dtype="float32")
        check(rate == RATE and recording.ndim == 2 and len(recording) > RATE, f"recorded {recording.shape} at {rate}")
        return recording[:, 0], recording[:, 1]


def play(session, samples, name):
    path = session.folder / f"{name}.wav"
    soundfile.write(str(path), samples, RATE, subtype="FLOAT")
    return session.start(f"play-{name}", ["pw-play", "--target", SINK, "--latency", RECORDER_LATENCY, path])


def record_playing(session, samples, name):
    """Starts a recording and the playing of `samples` into it, both called `name`; returns the recorder, the player
    and when the playing started (time.monotonic())."""
    recorder = Recorder(session, name)
    player = play(session, samples, name)
    return recorder, player, time.monotonic()


def wait_done(player, samples):
    """Waits for `player` to finish playing `samples`, allowing WAIT_SECONDS beyond their length."""
    seconds = len(samples) / RATE + WAIT_SECONDS
    try:
        return player.wait(seconds)
    except subprocess.TimeoutExpired:
        raise Failure(f"pw-play did not end in {seconds:.0f} s")


def call_counter(folder):
    """Builds the process step's call counter into `folder`; returns the library to preload."""
    counter = folder / "stream_call_counter.so"
    cflags = run(["pkg-config", "--cflags", "libpipewire-0.3"]).split()
    run(["cc", "-O2", "-shared", "-fPIC", "-Wall", "-Wextra", "-Werror", *cflags, "-o", counter, COUNTER_SOURCE, "-ldl"])
    return counter


def counts(report):
    """The counter's report for one koe run (its COUNT_OUTPUT file), as a dictionary."""
    check(report.exists(), "the call counter wrote nothing: was it preloaded?")
    found = {key: int(value) for key, value in (line.split() for line in report.read_text().splitlines())}
    check(found["runs"] > 0, "the counter saw no process step")
    return found


def realtime_summary(found, rate):
    """The counter's figures in words, and whether no heap or lock call came after the first block."""
    said = (f"{found['runs']} process steps over {found['frames'] / rate:.1f} s: {found['heap']} heap and "
            f"{found['lock']} lock calls within them"
            + (f", the last in the step ending at frame {found['last_frame']}" if found["last_frame"] else "")
            + f"; first block {found['first_frames']} frames")
    return said, found["last_frame"] <= found["first_frames"]
