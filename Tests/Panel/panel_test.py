#!/usr/bin/env python3
"""`koe live --panel` in a real browser: headless Chromium through WebDriver, on a voice in a private PipeWire session.

Usage: python3 Tests/Panel/panel_test.py --koe .build/release/koe
(`make test-panel` installs Debian's chromium and chromium-driver, selenium from PyPI and the session's packages,
and runs it.)

The session, the player and the two-channel recorder (what koe hears, what it offers) are Tests/Harness/pipewire.py's;
koe runs `koe live --virtual-mic "koe voice" --pitch 1.2 --panel` under the process step's call counter. Speech (one
deep male voice, samples/de-m-48k.wav, repeated) is played in and recorded while the test works the page as a person would, by setting a control's value and sending
the input and change events a moved slider sends.

  url        one line of standard output gives http://127.0.0.1:PORT/?token=T (T 64 hexadecimal digits); koe's PID
             listens on 127.0.0.1:PORT and on no other TCP port (ss -ltnp).
  page       Chromium loads that address: a control with data-setting="NAME" for every setting `koe settings
             --json` marks live (but vibrato, which vibrato_rate and vibrato_depth set) and for bypass, a button with
             data-preset="NAME" for every preset, no error in the browser's console.
  slider     the pitch slider set to 1.5 while speech plays: Praat's F0 ratio (recorded output over input) within
             3 % of 1.2 before, and of 1.5 from 1 s after; the page's chart shows koe's F0 out past 1.34 times its F0
             in within that second (the time, the whole round from the move to the chart, is given).
  preset     the chipmunk preset's button pressed: the ratio from 1 s after is within 3 % of that preset's pitch (as
             /api/settings gives it), and the page's pitch control shows it.
  aim        the female preset's button pressed (a voice preset: it aims at a median F0 from the speaker's profile,
             which koe estimates as the voice runs): Praat's F0 ratio from 1.5 s after within 5 % of the target over
             `koe profile`'s median of what koe heard until then, and the page's pitch control shows the ratio heard
             (within 3 % of Praat's) and its semitones, not the preset's typical ratio, with a note of the target.
  chart      the F0-out line of the chart (its data-hz) over those seconds: its median within 10 % of Praat's median
             F0 of the recorded output over the same seconds.
  meters     while speech plays, both meters above -30 dBFS at least once; after a second of silence, both at or
             below -60 dBFS.
  set        `koe live --set "koe voice" formant=1.1` while the page is open: its formant control shows 1.1 within 1 s.
  firefox    the same page in headless Firefox (Debian's firefox-esr, driven through Marionette by marionette_driver
             from PyPI, as Debian has no geckodriver): it connects, has every control and preset button; its formant
             slider moved to 1.25 is koe's state (/api/state) within 1 s, and `koe live --set gain=-3` shows on it
             within 1 s.
  refusals   over a continuous tone played and recorded: no token, a wrong token, a foreign Host, a foreign Origin on
             the WebSocket and on a change, a 10 MB body, and 500 malformed or random requests, each on its own
             connection: every one answered 4xx; the recorded voice has no gap (every 10 ms of it within 12 dB of
             its median level) and the panel's xrun count does not move.
  realtime   the counter's report: no heap or lock call within the process step after the first block, through
             every change the page made (pitch, a preset with its EQ band, the graphic EQ, an EQ band).
  taken      a second koe live --panel on the same port: a one-line error and a non-zero exit.
  no-panel   `koe live --virtual-mic` without --panel: its PID listens on no TCP port.
  open       `koe live --panel --open` with no desktop and $BROWSER naming headless Chromium: xdg-open hands it the
             address koe printed, token included, and it loads the panel with its controls.

A screenshot of the page with speech playing, the female preset aiming, is written to docs/panel.png (docs/live.md
shows it). One PASS or FAIL
line per check; the last line reads `panel: N passed, M failed`; exits 1 when one fails.
"""

import json
import random
import re
import signal
import socket
import sys
import time
from pathlib import Path

import numpy as np
import soundfile

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "Harness"))
import measures  # noqa: E402
from harness import REPOSITORY, Suite, cannot_run, check, missing_tools, option_parser, run, speech  # noqa: E402
from pipewire import (COUNTER_TOOLS, NAME, RATE, TOOLS, WAIT_SECONDS, Recorder, Session, call_counter,  # noqa: E402
                      counts, play, realtime_summary, record_playing, wait_done)

PITCH = 1.2
SLIDER_PITCH = 1.5
# An effect preset: its ratios are fixed, while a voice preset aims from the speaker (Tests/Python, bench/profile.py).
PRESET = "chipmunk"
VOICE_PRESET = "female"
# One speaker, a deep male voice (Praat's median about 89 Hz), as the seed's user: a voice preset aims from the
# speaker's median, which a recording of several speakers does not have.
SPEAKER = REPOSITORY / "samples" / "de-m-48k.wav"
AIM_TOLERANCE = 0.05       # relative, the ratio heard against the target over the speaker's median
AIM_SECONDS = 1.5          # an aimed ratio sweeps at 12 semitones a second from the ratio before
SET_FORMANT = 1.1
FIREFOX_FORMANT = 1.25
FIREFOX_GAIN = -3
F0_TOLERANCE = 0.03        # relative, Praat's ratio against the setting
CHART_TOLERANCE = 0.10     # relative, the chart's median F0 out against Praat's on the recording
SETTLE_SECONDS = 1.0       # a change is heard within this
PHASE_SECONDS = 6.0        # speech played at each setting
MALFORMED = 500
GAP_DB = 12.0              # a 10 ms stretch this far below the tone's median level is a gap
SCREENSHOT = REPOSITORY / "docs" / "panel.png"
URL = re.compile(r"koe live panel: (http://127\.0\.0\.1:(\d+)/\?token=([0-9a-f]+))")


def listening_ports(pid):
    """The TCP ports process `pid` listens on, as `ss -ltnp` shows them: (address, port) pairs."""
    found = []
    for line in run(["ss", "-Hltnp"]).splitlines():
        if f"pid={pid}," in line:
            address, port = line.split()[3].rsplit(":", 1)
            found.append((address, int(port)))
    return found


def status_of(raw):
    """The status code of an HTTP answer's first line, or None."""
    match = re.match(rb"HTTP/1\.[01] (\d{3}) ", raw)
    return int(match.group(1)) if match else None


def exchange(port, payload, half_close=True, seconds=10):
    """Sends `payload` on a new connection to the panel and returns the answer's bytes (all of them, up to the
    server's close)."""
    with socket.create_connection(("127.0.0.1", port), timeout=seconds) as connection:
        connection.sendall(payload)
        if half_close:
            connection.shutdown(socket.SHUT_WR)
        answer = b""
        try:
            while chunk := connection.recv(65536):
                answer += chunk
                if half_close is False and b"\r\n\r\n" in answer:
                    break
        except (ConnectionResetError, socket.timeout):
            pass
        return answer


def request(method, target, port, host=None, headers=(), body=b""):
    lines = [f"{method} {target} HTTP/1.1", f"Host: {host or f'127.0.0.1:{port}'}", *headers, "Connection: close"]
    if body:
        lines.append(f"Content-Length: {len(body)}")
    return ("\r\n".join(lines) + "\r\n\r\n").encode() + body


def websocket_upgrade(target, port, origin):
    return request("GET", target, port, headers=("Upgrade: websocket", "Connection: Upgrade", f"Origin: {origin}",
                                                "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==",
                                                "Sec-WebSocket-Version: 13"))


def malformed_requests(count, port, token):
    """`count` requests no server may take: random bytes, random text, and a valid request broken in each of the
    ways a head can be (seeded, so every run sends the same)."""
    generator = random.Random(41)
    good = f"GET /?token={token} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n\r\n"
    broken = [
        good.replace("GET", "G@T"), good.replace("GET /", "GET http://127.0.0.1/"), good.replace("HTTP/1.1", "HTTP/2.0"),
        good.replace("HTTP/1.1", "http/1.1"), good.replace("\r\n", "\n"), good.replace("Host:", "Host :"),
        good.replace("Host:", "Host"), good.replace("\r\n\r\n", "\r\nX-Bad: a\x00b\r\n\r\n"),
        good.replace("\r\n\r\n", f"\r\nHost: 127.0.0.1:{port}\r\n\r\n"),
        good.replace("\r\n\r\n", "\r\nContent-Length: 5\r\nContent-Length: 6\r\n\r\nhello"),
        good.replace("\r\n\r\n", "\r\nContent-Length: many\r\n\r\n"),
        good.replace("\r\n\r\n", "\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n"),
        good.replace("\r\n\r\n", "\r\nX-Long: " + "a" * 9000 + "\r\n\r\n"), "\r\n" + good, good.replace(" /", "  /"),
        good.replace("GET /", "GET"), good.replace("\r\n\r\n", "\r\n folded: value\r\n\r\n"), good[:25],
        good.replace("\r\n", "\r\r\n", 1), "GET /\r\n\r\n",
    ]
    requests = []
    for index in range(count):
        kind = index % 3
        if kind == 0:
            requests.append(bytes(generator.randrange(256) for _ in range(generator.randrange(1, 2000))))
        elif kind == 1:
            text = "".join(generator.choice("ABCDEFGHIJ /:?=\r\n\t0123456789abcdef") for _ in range(generator.randrange(1, 600)))
            requests.append(text.encode() + b"\r\n\r\n")
        else:
            requests.append(broken[(index // 3) % len(broken)].encode())
    return requests


def gaps(recorded, start, end):
    """10 ms stretches of `recorded[start:end]` more than GAP_DB below its median level, and that median (dBFS)."""
    width = RATE // 100
    stretches = recorded[start:end][: (end - start) // width * width].astype(np.float64).reshape(-1, width)
    levels = 10 * np.log10(np.maximum(np.mean(stretches ** 2, axis=1), 1e-20))
    median = float(np.median(levels))
    return int(np.sum(levels < median - GAP_DB)), median


class Firefox:
    """Headless Firefox (Debian's firefox-esr) driven through its own Marionette protocol with marionette_driver
    from PyPI (Debian has no geckodriver), on a profile of its own; started in the session and stopped by PID."""

    def __init__(self, session, folder):
        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            port = probe.getsockname()[1]
        profile = folder / "firefox"
        profile.mkdir()
        (profile / "user.js").write_text("".join(f'user_pref("{name}", {value});\n' for name, value in (
            ("marionette.port", port), ("browser.shell.checkDefaultBrowser", "false"),
            ("datareporting.policy.dataSubmissionEnabled", "false"), ("app.update.disabledForTesting", "true"))))
        self.session = session
        self.process = session.start("firefox", ["firefox-esr", "--headless", "--marionette", "--no-remote",
                                                 "--profile", profile, "--width", 1400, "--height", 1250])
        from marionette_driver.marionette import Marionette
        self.client = Marionette(host="127.0.0.1", port=port)
        self.client.start_session()

    def quit(self):
        try:
            self.client.delete_session()
        finally:
            self.session.stop(self.process)

    def script(self, body, *arguments):
        return self.client.execute_script(body, script_args=list(arguments), new_sandbox=False)

    # Marionette's scripts see the page's elements through Xray wrappers, which call the browser's own `value`
    # property; `wrappedJSObject` is the element as the page's scripts see it (a log slider's value in its units).
    def value(self, selector):
        return self.script("const control = document.querySelector(arguments[0]);"
                           "return control ? control.wrappedJSObject.value : null;", selector)

    def move(self, selector, value):
        self.script("const control = document.querySelector(arguments[0]); control.wrappedJSObject.value = arguments[1];"
                    "control.dispatchEvent(new Event('input', {bubbles: true}));"
                    "control.dispatchEvent(new Event('change', {bubbles: true}));", selector, str(value))


class Browser:
    """Headless Chromium driven through chromedriver (selenium), on the panel's page."""

    def __init__(self, folder):
        from selenium import webdriver
        from selenium.webdriver.chrome.options import Options
        from selenium.webdriver.chrome.service import Service
        options = Options()
        for argument in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                         "--window-size=1400,1250", f"--user-data-dir={folder / 'chromium'}"):
            options.add_argument(argument)
        options.binary_location = "/usr/bin/chromium"
        options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
        self.driver = webdriver.Chrome(service=Service("/usr/bin/chromedriver", log_output=str(folder / "chromedriver.log")),
                                       options=options)

    def quit(self):
        self.driver.quit()

    def control(self, selector):
        from selenium.webdriver.common.by import By
        return self.driver.find_element(By.CSS_SELECTOR, selector)

    def move(self, selector, value):
        """Sets a control's value and sends the events a person's move sends."""
        self.driver.execute_script(
            "const control = arguments[0]; control.value = arguments[1];"
            "control.dispatchEvent(new Event('input', {bubbles: true}));"
            "control.dispatchEvent(new Event('change', {bubbles: true}));", self.control(selector), str(value))

    def move_and_watch(self, selector, value, level):
        """Moves a control as `move` does and returns the milliseconds until the page's chart shows the F0 koe's
        vocoder makes (F0 out) at more than `level` times the F0 it hears, on a record made after the move; -1 when
        that has not come within 3 s. The time spans the whole round: the page sending the change, koe taking it
        and gliding, and its telemetry coming back (records of 25 ms, sent every 50 ms)."""
        self.driver.set_script_timeout(10)
        return self.driver.execute_async_script("""
            const [control, value, level, done] = arguments;
            const out = document.getElementById('f0-out-line'), heard = document.getElementById('f0-in-line');
            const points = (line) => line.dataset.hz.split(' ').filter(Boolean).map((point) => point.split(':').map(Number));
            const newest = (line) => Math.max(0, ...points(line).map((point) => point[0]));
            const since = Math.max(newest(out), newest(heard));
            const started = performance.now();
            control.value = value;
            control.dispatchEvent(new Event('input', {bubbles: true}));
            control.dispatchEvent(new Event('change', {bubbles: true}));
            const observer = new MutationObserver(() => {
              const inputs = new Map(points(heard).map(([second, hz]) => [second, hz]));
              for (const [second, hz] of points(out)) {
                if (second > since && inputs.has(second) && hz / inputs.get(second) > level) {
                  observer.disconnect();
                  done(performance.now() - started);
                  return;
                }
              }
            });
            observer.observe(out, {attributes: true});
            setTimeout(() => { observer.disconnect(); done(-1); }, 3000);
        """, self.control(selector), str(value), level)

    def value(self, selector):
        return self.control(selector).get_attribute("value")

    def attribute(self, selector, name):
        return self.control(selector).get_attribute(name)

    def wait(self, condition, what, seconds=WAIT_SECONDS):
        """Seconds until `condition()` held; fails naming `what` after `seconds`."""
        started = time.monotonic()
        while not condition():
            check(time.monotonic() - started < seconds, f"{what}: not after {seconds} s")
            time.sleep(0.02)
        return time.monotonic() - started

    def console_errors(self):
        return [entry["message"] for entry in self.driver.get_log("browser") if entry["level"] == "SEVERE"]


def speaking_from(samples, seconds, lasting=0.15):
    """The first time from `seconds` on at which `samples` (at RATE) are speech for the next `lasting` seconds
    (every 20 ms within 30 dB of the loudest), so that a change made then is heard, and charted, at once."""
    frame = RATE // 50
    levels = np.sqrt(np.mean(samples[:len(samples) // frame * frame].reshape(-1, frame).astype(np.float64) ** 2, axis=1))
    loud = levels > 0.03 * levels.max()
    span = int(lasting * 50)
    for index in range(int(seconds * 50), len(loud) - span):
        if loud[index:index + span].all():
            return index / 50
    raise AssertionError(f"no {lasting} s of speech after {seconds} s")


def chart_points(browser):
    """The chart's F0-out line: (koe seconds, Hz) of its voiced records."""
    text = browser.attribute("#f0-out-line", "data-hz") or ""
    return [tuple(map(float, point.split(":"))) for point in text.split()]


def newest_koe_second(browser):
    """The newest record's stream time the page has (the F0-in line's data holds only voiced ones)."""
    return browser.driver.execute_script(
        "const hz = document.getElementById('f0-in-line').dataset.hz.split(' ').filter(Boolean);"
        "const out = document.getElementById('f0-out-line').dataset.hz.split(' ').filter(Boolean);"
        "const last = (list) => list.length ? Number(list[list.length - 1].split(':')[0]) : 0;"
        "return Math.max(last(hz), last(out));")


def main():
    parser = option_parser(__doc__)
    parser.add_argument("--no-screenshot", action="store_true", help="leave docs/panel.png as it is")
    arguments = parser.parse_args()
    koe = arguments.koe.resolve()
    tools = TOOLS + COUNTER_TOOLS + ("sox", "ss", "chromium", "chromedriver", "firefox-esr", "xdg-open")
    missing = missing_tools(tools) + ([] if koe.is_file() else [str(koe)])
    try:
        import selenium
    except ImportError:
        selenium = None
    if selenium is None:
        missing.append("selenium (PyPI)")
    try:
        import marionette_driver
    except ImportError:
        marionette_driver = None
    if marionette_driver is None:
        missing.append("marionette_driver (PyPI)")
    if missing:
        return cannot_run("panel", missing, "make test-panel")

    suite = Suite("panel", arguments.keep, 9)
    root = suite.root
    session = Session(root)
    browser = None

    def stop():
        if browser is not None:
            browser.quit()
        session.stop_all()

    with suite.running(stop):
        counter = call_counter(root)
        stimulus = speech(root, 4 * PHASE_SECONDS + 2, RATE, sources=[SPEAKER])
        session.up()
        report = root / "counts-koe-panel"
        koe_process = session.start("koe-panel", [koe, "live", "--virtual-mic", NAME, "--pitch", PITCH, "--panel"],
                                    extra={"LD_PRELOAD": str(counter), "COUNT_OUTPUT": str(report)})
        session.wait_for(lambda: URL.search(session.log("koe-panel")) or koe_process.poll() is not None, "the panel's address")
        check(koe_process.poll() is None, f"koe exited {koe_process.returncode}: {session.log('koe-panel')[-300:]!r}")
        url, port, token = URL.search(session.log("koe-panel")).groups()
        port = int(port)
        print(f"panel: session up in {root}; koe PID {koe_process.pid} serves {url.split('?')[0]}", flush=True)

        def address():
            lines = [line for line in session.log("koe-panel").splitlines() if "http://" in line]
            check(len(lines) == 1 and len(token) == 64, f"the address lines: {lines}")
            ports = listening_ports(koe_process.pid)
            check(ports == [("127.0.0.1", port)], f"koe listens on {ports}, not 127.0.0.1:{port} alone")
            return f"one line: {lines[0].split('?')[0]}?token=<{len(token) * 4} bits>; ss -ltnp: koe listens on {ports} only"
        suite.attempt("url", address)

        browser = Browser(root)
        table = json.loads(run([koe, "settings", "--json"]))
        described = json.loads(exchange(port, request("GET", f"/api/settings?token={token}", port)).split(b"\r\n\r\n", 1)[1])
        presets = {preset["name"]: preset for preset in described["presets"]}

        def page():
            started = time.monotonic()
            browser.driver.get(url)
            browser.wait(lambda: browser.value('[data-setting="pitch"]') == str(PITCH), "the pitch control showing 1.2")
            loaded = time.monotonic() - started
            wanted = [name for name, setting in table.items() if setting["live"] and name not in ("vibrato", "preset")]
            absent = [name for name in wanted + ["bypass"]
                      if not browser.driver.find_elements("css selector", f'[data-setting="{name}"]')]
            buttons = [button.get_attribute("data-preset") for button in browser.driver.find_elements("css selector", "[data-preset]")]
            errors = browser.console_errors()
            check(not absent and sorted(buttons) == sorted(presets) and not errors,
                  f"no control for {absent}; preset buttons {buttons}; console errors {errors}")
            return (f"loaded and showing pitch 1.2 in {loaded:.2f} s; a data-setting control for each of the {len(wanted)} "
                    f"live settings and bypass, {len(buttons)} preset buttons, no console error")
        suite.attempt("page", page)

        # One recording, four settings: 1.2 from the command line, 1.5 from the slider, an effect preset's from its
        # button, then a voice preset's aim; the other changes (graphic EQ, an EQ band, --set) come after them.
        recorder, player, played_at = record_playing(session, stimulus, "voice")
        meter_levels = {"meter-in": [], "meter-out": []}

        def watch(seconds):
            """Reads the meters for `seconds`."""
            until = time.monotonic() + seconds
            while time.monotonic() < until:
                for meter in meter_levels:
                    meter_levels[meter].append(float(browser.attribute(f"#{meter}", "data-db")))
                time.sleep(0.1)

        watch(speaking_from(stimulus, PHASE_SECONDS) - (time.monotonic() - played_at))
        slider_at = time.monotonic() - played_at
        round_trip = browser.move_and_watch('[data-setting="pitch"]', SLIDER_PITCH, (PITCH * SLIDER_PITCH) ** 0.5)
        watch(PHASE_SECONDS - (time.monotonic() - played_at - slider_at))
        preset_pitch = presets[PRESET]["pitch"]
        browser.control(f'[data-preset="{PRESET}"]').click()
        preset_at = time.monotonic() - played_at
        preset_koe_second = newest_koe_second(browser)
        watch(PHASE_SECONDS)
        chart_end = time.monotonic() - played_at
        chart = chart_points(browser)
        end_koe_second = newest_koe_second(browser)
        shown_preset_pitch = browser.value('[data-setting="pitch"]')
        # The EQ through the page too, so that the call counter sees filters designed and taken while audio runs.
        browser.move('[data-setting="geq"][data-band="5"]', 6)
        browser.move('[data-setting="eq"]', "peak:2000:3:1.4")
        browser.control(f'[data-preset="{VOICE_PRESET}"]').click()
        aim_at = time.monotonic() - played_at
        watch(PHASE_SECONDS - 2.0)
        if not arguments.no_screenshot:
            browser.driver.save_screenshot(str(SCREENSHOT))
        watch(1.5)
        aim_end = time.monotonic() - played_at
        shown_aim_pitch = browser.value('[data-setting="pitch"]')
        shown_aim_semitones = browser.value('[data-setting="semitones"]')
        aim_note = browser.control("#control-pitch .aim").text
        wait_done(player, stimulus)
        time.sleep(1.0)
        quiet = {meter: float(browser.attribute(f"#{meter}", "data-db")) for meter in meter_levels}
        stopped = time.monotonic()
        played, recorded = recorder.finish()
        delay = measures.envelope_delay(played, recorded, RATE, RATE // 2)
        start = measures.envelope_delay(stimulus, played, RATE, len(played))

        def frames(seconds):
            """Where `seconds` after the player started is on the recording: counted back from its end, which is
            the moment the recorder was stopped, to within a graph cycle or two (pw-play's own start, which the
            speech's place on the recording would count in, takes longer)."""
            return len(recorded) - int((stopped - played_at - seconds) * RATE)

        def ratio_between(first, last):
            first, last = max(first, delay), min(last, len(recorded))
            return measures.f0_ratio(played[first - delay:last - delay], recorded[first:last], RATE, 0)

        def slider():
            before, before_frames = ratio_between(max(start, frames(0)), frames(slider_at))
            after, after_frames = ratio_between(frames(slider_at + SETTLE_SECONDS), frames(preset_at))
            check(abs(before / PITCH - 1) <= F0_TOLERANCE and abs(after / SLIDER_PITCH - 1) <= F0_TOLERANCE
                  and after_frames >= measures.MIN_VOICED_FRAMES and 0 <= round_trip <= 1000 * SETTLE_SECONDS,
                  f"F0 ratio {before:.4f} before ({before_frames} frames), {after:.4f} from {SETTLE_SECONDS:.0f} s after "
                  f"the slider ({after_frames} frames), on the chart after {round_trip:.0f} ms; bar: {PITCH} then "
                  f"{SLIDER_PITCH}, +- 3 %, within a second (the speech found {start / RATE:.2f} s into the playing, "
                  f"the recording {delay / RATE * 1000:.0f} ms behind it, the slider moved {slider_at:.2f} s after the "
                  f"player started, which is {frames(0) / RATE:.2f} s into the recording)")
            return (f"F0 ratio {before:.4f} before ({before_frames} frames), {after:.4f} from {SETTLE_SECONDS:.0f} s after "
                    f"({after_frames} frames); the page's chart showed koe's F0 out past {(PITCH * SLIDER_PITCH) ** 0.5:.3f} "
                    f"times its F0 in {round_trip:.0f} ms after the move (the whole round, telemetry included)")

        def preset():
            after, after_frames = ratio_between(frames(preset_at + SETTLE_SECONDS), frames(chart_end))
            check(abs(after / preset_pitch - 1) <= F0_TOLERANCE and after_frames >= measures.MIN_VOICED_FRAMES
                  and float(shown_preset_pitch) == preset_pitch,
                  f"after the {PRESET} button: F0 ratio {after:.4f} over {after_frames} frames, the page shows pitch "
                  f"{shown_preset_pitch} (bar: {preset_pitch} +- 3 %)")
            return (f"the {PRESET} button: F0 ratio {after:.4f} from {SETTLE_SECONDS:.0f} s after ({after_frames} frames; "
                    f"its pitch {preset_pitch}), the pitch control shows {shown_preset_pitch}")

        def aim():
            heard_until = frames(aim_at)
            check(heard_until > RATE, f"the {VOICE_PRESET} button at {aim_at:.1f} s: too early on the recording")
            profile_file = root / "heard-before-aim.wav"
            soundfile.write(str(profile_file), played[:heard_until], RATE)
            median = json.loads(run([koe, "profile", profile_file, "--json"]))["f0_median_hz"]
            target = presets[VOICE_PRESET]["f0MedianHz"]
            typical = presets[VOICE_PRESET]["pitch"]
            wanted = target / median
            after, after_frames = ratio_between(frames(aim_at + AIM_SECONDS), frames(aim_end))
            shown, semitones = float(shown_aim_pitch), float(shown_aim_semitones)
            said = (f"after the {VOICE_PRESET} button (target {target:.0f} Hz; koe profile's median of what koe heard "
                    f"before: {median:.1f} Hz, so {wanted:.4f}): F0 ratio {after:.4f} over {after_frames} frames from "
                    f"{AIM_SECONDS} s after; the pitch control shows {shown} (the preset's typical ratio {typical}), "
                    f"semitones {semitones}, its note {aim_note!r}")
            check(after_frames >= measures.MIN_VOICED_FRAMES and abs(after / wanted - 1) <= AIM_TOLERANCE
                  and abs(shown / after - 1) <= F0_TOLERANCE and abs(semitones - 12 * np.log2(shown)) <= 0.01
                  and f"{target:.0f} Hz" in aim_note,
                  f"{said} (bar: the ratio within 5 % of {wanted:.4f}, the control within 3 % of the ratio and the "
                  f"semitones its own, the note naming {target:.0f} Hz)")
            return said

        def chart_check():
            window = (preset_koe_second + SETTLE_SECONDS, end_koe_second)
            shown = [hz for second, hz in chart if window[0] <= second <= window[1]]
            first, last = frames(preset_at + SETTLE_SECONDS), frames(chart_end)
            praat = measures.f0_track(recorded[first:last], RATE)
            praat = praat[praat > 0]
            check(len(shown) >= 20 and len(praat) >= measures.MIN_VOICED_FRAMES, f"{len(shown)} chart points, {len(praat)} Praat frames")
            chart_median, praat_median = float(np.median(shown)), float(np.median(praat))
            error = chart_median / praat_median - 1
            check(abs(error) <= CHART_TOLERANCE,
                  f"the chart's F0 out {chart_median:.1f} Hz against Praat's {praat_median:.1f} Hz on the recording "
                  f"({100 * error:+.1f} %, bar 10 %)")
            return (f"the chart's F0-out median {chart_median:.1f} Hz over {len(shown)} points, Praat's on the recording "
                    f"{praat_median:.1f} Hz over {len(praat)} frames: {100 * error:+.1f} % (bar 10 %)")

        def meters():
            loudest = {meter: max(levels) for meter, levels in meter_levels.items()}
            check(all(level > -30 for level in loudest.values()) and all(level <= -60 for level in quiet.values()),
                  f"loudest {loudest} while speech plays (bar: above -30 dBFS), {quiet} a second after it ends "
                  f"(bar: at most -60)")
            return (f"loudest while speech plays: in {loudest['meter-in']:.1f}, out {loudest['meter-out']:.1f} dBFS; "
                    f"a second after it ends: in {quiet['meter-in']:.1f}, out {quiet['meter-out']:.1f} dBFS")

        suite.attempt("slider", slider)
        suite.attempt("preset", preset)
        suite.attempt("aim", aim)
        suite.attempt("chart", chart_check)
        suite.attempt("meters", meters)

        def set_shows():
            answer = session.run([koe, "live", "--set", NAME, f"formant={SET_FORMANT}"])
            sent = time.monotonic()
            check(answer.returncode == 0, f"koe live --set: exit {answer.returncode}: {answer.stderr.strip()}")
            browser.wait(lambda: browser.value('[data-setting="formant"]') == str(SET_FORMANT), "the formant control showing 1.1", 5)
            seconds = time.monotonic() - sent
            check(seconds <= 1.0, f"the page showed formant {SET_FORMANT} {seconds:.2f} s after koe live --set answered")
            return f"koe live --set formant={SET_FORMANT} answered {answer.stdout.strip()!r}; the page showed it {1000 * seconds:.0f} ms later"
        suite.attempt("set", set_shows)

        def panel_state():
            answer = exchange(port, request("GET", f"/api/state?token={token}", port))
            return json.loads(answer.split(b"\r\n\r\n", 1)[1])["values"]

        def firefox():
            started = time.monotonic()
            other = Firefox(session, root)
            try:
                other.client.navigate(url)
                session.wait_for(lambda: other.script("return document.getElementById('connection').textContent") == "live"
                                 and other.value('[data-setting="pitch"]') not in (None, ""), "the page live in Firefox")
                loaded = time.monotonic() - started
                names = other.script("return [...document.querySelectorAll('[data-setting]')].map((c) => c.dataset.setting);")
                buttons = other.script("return [...document.querySelectorAll('[data-preset]')].map((b) => b.dataset.preset);")
                wanted = [name for name, setting in table.items() if setting["live"] and name not in ("vibrato", "preset")]
                absent = [name for name in wanted + ["bypass"] if name not in names]
                check(not absent and sorted(buttons) == sorted(presets),
                      f"Firefox: no control for {absent}; preset buttons {buttons}")
                moved = time.monotonic()
                other.move('[data-setting="formant"]', FIREFOX_FORMANT)
                session.wait_for(lambda: panel_state()["formant"] == FIREFOX_FORMANT, "koe taking Firefox's formant", 5)
                taken = time.monotonic() - moved
                answer = session.run([koe, "live", "--set", NAME, f"gain={FIREFOX_GAIN}"])
                check(answer.returncode == 0, f"koe live --set: exit {answer.returncode}: {answer.stderr.strip()}")
                sent = time.monotonic()
                session.wait_for(lambda: other.value('[data-setting="gain"]') == str(FIREFOX_GAIN), "Firefox showing the gain", 5)
                shown = time.monotonic() - sent
                version = other.client.session_capabilities.get("browserVersion")
            finally:
                other.quit()
            check(taken <= SETTLE_SECONDS and shown <= SETTLE_SECONDS,
                  f"Firefox's formant taken {1000 * taken:.0f} ms after the move, --set gain shown {1000 * shown:.0f} ms "
                  f"after it answered (bar: {SETTLE_SECONDS:.0f} s)")
            return (f"Firefox {version} headless: the page live {loaded:.1f} s after Firefox started, a control for each "
                    f"of the {len(wanted)} live settings and bypass, {len(buttons)} preset buttons; its formant slider "
                    f"moved to {FIREFOX_FORMANT}: koe's state has it {1000 * taken:.0f} ms later; koe live --set "
                    f"gain={FIREFOX_GAIN} shown {1000 * shown:.0f} ms after it answered")
        suite.attempt("firefox", firefox)

        # The refusals, over a continuous tone: the voice must go on, whole, through all of them.
        tone = (0.3 * np.sin(2 * np.pi * 180 * np.arange(int(12 * RATE)) / RATE)).astype(np.float32)
        recorder = Recorder(session, "refusals")
        player = play(session, tone, "tone")
        time.sleep(2.0)
        xruns_before = browser.control("#xruns").text
        refused_from = time.monotonic()
        answers = {}
        answers["no token"] = exchange(port, request("GET", "/", port))
        answers["wrong token"] = exchange(port, request("GET", "/?token=" + "0" * 64, port))
        answers["foreign Host"] = exchange(port, request("GET", f"/?token={token}", port, host=f"rebound.example:{port}"))
        answers["foreign Origin, WebSocket"] = exchange(
            port, websocket_upgrade(f"/api/live?token={token}", port, "http://attacker.example"), half_close=False)
        answers["foreign Origin, change"] = exchange(
            port, request("POST", f"/api/set?token={token}", port, headers=("Origin: http://attacker.example",), body=b"pitch=2"))
        with socket.create_connection(("127.0.0.1", port), timeout=10) as connection:
            connection.sendall(request("POST", f"/api/set?token={token}", port, headers=(f"Content-Length: {10 << 20}",))
                               .replace(b"Connection: close\r\n", b""))
            body_sent = 0
            chunk = b"x" * 65536
            connection.setblocking(False)
            answer = b""
            deadline = time.monotonic() + 10
            while time.monotonic() < deadline and b"\r\n\r\n" not in answer and body_sent < (10 << 20):
                try:
                    body_sent += connection.send(chunk[: (10 << 20) - body_sent])
                except (BlockingIOError, BrokenPipeError, ConnectionResetError):
                    pass
                try:
                    answer += connection.recv(65536)
                except BlockingIOError:
                    time.sleep(0.001)
                except ConnectionResetError:
                    break
            answers["10 MB body"] = answer
        malformed = [exchange(port, payload) for payload in malformed_requests(MALFORMED, port, token)]
        refused_until = time.monotonic()
        time.sleep(1.0)
        xruns_after = browser.control("#xruns").text
        wait_done(player, tone)
        time.sleep(0.5)
        tone_played, tone_recorded = recorder.finish()

        def refusals():
            statuses = {name: status_of(answer) for name, answer in answers.items()}
            wanted = {name: 413 if name == "10 MB body" else 403 for name in answers}
            codes = [status_of(answer) for answer in malformed]
            tally = {code: codes.count(code) for code in sorted(set(codes), key=str)}
            tone_delay = measures.envelope_delay(tone_played, tone_recorded, RATE, RATE // 2)
            tone_start = measures.envelope_delay(tone, tone_played, RATE, len(tone_played))
            first = tone_start + tone_delay + RATE // 2
            last = tone_start + tone_delay + len(tone) - RATE // 2
            holes, median = gaps(tone_recorded, first, last)
            check(statuses == wanted, f"answers {statuses} (wanted {wanted})")
            check(all(code is not None and 400 <= code < 500 for code in codes), f"malformed requests answered {tally}")
            check(holes == 0 and xruns_before == xruns_after,
                  f"{holes} 10 ms gaps in the recorded tone; xruns {xruns_before} before, {xruns_after} after")
            return (f"{statuses}; the 10 MB body refused after {body_sent >> 10} KB sent; {MALFORMED} malformed or random "
                    f"requests answered {tally} in {refused_until - refused_from:.1f} s in all; the recorded tone "
                    f"({median:.1f} dBFS) without a gap over {(last - first) / RATE:.1f} s, xruns {xruns_before} before "
                    f"and after")
        suite.attempt("refusals", refusals)

        def taken():
            result = session.run([koe, "live", "--virtual-mic", "koe other", "--panel", "--panel-port", port], timeout=WAIT_SECONDS)
            lines = result.stderr.strip().splitlines()
            check(result.returncode != 0 and len(lines) == 1 and str(port) in lines[0] and "taken" in lines[0],
                  f"exit {result.returncode}, stderr {result.stderr.strip()!r}")
            return f"exit {result.returncode}: {lines[0]!r}"
        suite.attempt("taken", taken)

        browser.quit()
        browser = None
        koe_process.send_signal(signal.SIGINT)
        koe_process.wait(WAIT_SECONDS)

        def realtime():
            summary, clean = realtime_summary(counts(report), RATE)
            check(clean, f"{summary}: a heap or lock call after the first block")
            return summary
        suite.attempt("realtime", realtime)

        def no_panel():
            plain = session.start("koe-plain", [koe, "live", "--virtual-mic", NAME])
            session.wait_for(lambda: "virtual mic" in session.log("koe-plain") or plain.poll() is not None, "start line")
            check(plain.poll() is None, f"koe exited {plain.returncode}: {session.log('koe-plain')[-300:]!r}")
            time.sleep(0.5)
            ports = listening_ports(plain.pid)
            session.stop(plain, signal.SIGINT)
            check(ports == [] and "http://" not in session.log("koe-plain"), f"koe without --panel listens on {ports}")
            return f"koe live --virtual-mic without --panel (PID {plain.pid}): ss -ltnp shows no TCP port of its own"
        suite.attempt("no-panel", no_panel)

        def opened():
            # xdg-open without a desktop hands the address to $BROWSER: here headless Chromium, which writes the
            # page it loaded (its DOM once the scripts ran) and the address it was given.
            page_file, address_file = root / "opened.html", root / "opened-address"
            launcher = root / "browser.sh"
            launcher.write_text(f"""#!/bin/sh
printf '%s' "$1" > {address_file}
exec chromium --headless=new --no-sandbox --disable-gpu --user-data-dir={root / 'opened-profile'} \\
    --virtual-time-budget=5000 --dump-dom "$1" > {page_file} 2> {root / 'opened.log'}
""")
            launcher.chmod(0o755)
            environment = {"BROWSER": str(launcher), "DISPLAY": "", "WAYLAND_DISPLAY": "", "XDG_CURRENT_DESKTOP": ""}
            opening = session.start("koe-open", [koe, "live", "--virtual-mic", "koe open", "--panel", "--open"], extra=environment)
            try:
                session.wait_for(lambda: URL.search(session.log("koe-open")) or opening.poll() is not None, "the address")
                check(opening.poll() is None, f"koe exited {opening.returncode}: {session.log('koe-open')[-300:]!r}")
                printed = URL.search(session.log("koe-open")).group(1)
                session.wait_for(lambda: page_file.exists() and "</html>" in page_file.read_text(errors="replace"),
                                 "the page xdg-open's browser loaded")
            finally:
                session.stop(opening, signal.SIGINT)
            given, page_text = address_file.read_text(), page_file.read_text(errors="replace")
            controls = page_text.count("data-setting=")
            check(given == printed and "<title>koe live</title>" in page_text and controls > 0,
                  f"xdg-open's browser was given {given!r} (koe printed {printed!r}); its page: {page_text[:200]!r}")
            return (f"koe live --panel --open: xdg-open handed the printed address, token included, to $BROWSER "
                    f"(headless Chromium), which loaded the panel with {controls} data-setting controls")
        suite.attempt("open", opened)

    return suite.finish("the daemons' and koe's logs, the recordings, chromedriver's log")


if __name__ == "__main__":
    sys.exit(main())
