"""koe live on a pseudo-terminal, as a person at a shell runs it: the status line, an arrow key, then q. Shared by
Tests/Plugins/live_test.py (a sound card on JACK) and Tests/VirtualMic/virtual_mic_test.py."""

import os
import pty
import re
import select
import subprocess
import time

from harness import check

STATUS_LINE = (r"in \[[#-]{12}\] +-?\d+ dB out \[[#-]{12}\] +-?\d+ dB  pitch 1\.2  formant 1\.0  latency \d+ ms"
               r"  xruns \d+")


def terminal_session(argv, environment, seconds):
    """Runs `argv` (a koe live at --pitch 1.2) with a pseudo-terminal as stdin, stdout and stderr, each wait at most
    `seconds`. Returns the summary line."""
    controller, terminal = pty.openpty()
    process = subprocess.Popen(argv, stdin=terminal, stdout=terminal, stderr=terminal, env=environment, close_fds=True)
    os.close(terminal)
    screen = b""

    def read_until(pattern):
        nonlocal screen
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            if re.search(pattern, screen.decode(errors="replace")):
                return True
            ready, _, _ = select.select([controller], [], [], 0.1)
            if ready:
                try:
                    screen += os.read(controller, 4096)
                except OSError:
                    break
        return bool(re.search(pattern, screen.decode(errors="replace")))

    try:
        check(read_until(STATUS_LINE), f"no status line on the terminal: {screen[-300:]!r}")
        os.write(controller, b"\x1b[A")
        check(read_until(r"pitch 1\.27 "), f"the up arrow did not raise the pitch: {screen[-300:]!r}")
        os.write(controller, b"q")
        status = process.wait(seconds)
        check(status == 0, f"exit {status} after q")
        return "status line seen, up arrow: pitch 1.2 -> 1.27, q: exit 0"
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
        os.close(controller)
