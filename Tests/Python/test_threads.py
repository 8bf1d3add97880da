"""The GIL is released while koe computes: Python runs beside a call, and two threads calling harvest at once
finish well under the serial time (on 2 cores; bench/python.py measures the bar of 0.65)."""

import os
import threading
import time

import numpy as np
import pytest

import koe.world as kw

PARALLEL_FRACTION_MAX = 0.75  # of the serial time, here on a machine other jobs may load too; bench: 0.65
MOST_ATTEMPTS = 8


def speech_of_seconds(speech, seconds):
    x, fs = speech["samples/en-f-48k.wav"]
    return np.tile(x, int(np.ceil(seconds * fs / x.size)))[: int(seconds * fs)], fs


def test_python_runs_while_harvest_computes(speech):
    x, fs = speech_of_seconds(speech, 6)
    worker = threading.Thread(target=kw.harvest, args=(x, fs))
    started = time.perf_counter()
    worker.start()
    ticks = [started]
    while worker.is_alive():
        ticks.append(time.perf_counter())
    took = ticks[-1] - started
    # With the GIL held through the call, this loop would stop for the whole of it.
    assert np.max(np.diff(ticks)) < 0.2 * took, f"the longest pause was {np.max(np.diff(ticks)):.3f} s of {took:.3f} s"


def test_two_threads_run_harvest_at_once(speech):
    load, cores = os.getloadavg()[0], os.cpu_count()
    if load > cores:
        pytest.skip(f"no core to spare: load average {load:.1f} on {cores} cores (bench/python.py measures this bar)")
    x, fs = speech_of_seconds(speech, 8)
    kw.harvest(x[: fs], fs)

    def one_after_the_other():
        kw.harvest(x, fs)
        kw.harvest(x, fs)

    def at_once():
        workers = [threading.Thread(target=kw.harvest, args=(x, fs)) for _ in range(2)]
        for worker in workers:
            worker.start()
        for worker in workers:
            worker.join()

    # The fastest of alternating attempts of each, until they meet the bar: a moment's load on the other core, from
    # another job, slows some attempts, not all; a lock held through the calls would slow every one.
    serial, parallel = float("inf"), float("inf")
    for _ in range(MOST_ATTEMPTS):
        serial = min(serial, seconds(one_after_the_other))
        parallel = min(parallel, seconds(at_once))
        if parallel <= PARALLEL_FRACTION_MAX * serial:
            break
    assert parallel <= PARALLEL_FRACTION_MAX * serial, f"two threads {parallel:.2f} s, one after the other {serial:.2f} s"


def seconds(work):
    started = time.perf_counter()
    work()
    return time.perf_counter() - started
