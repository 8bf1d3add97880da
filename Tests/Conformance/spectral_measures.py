"""The envelope and aperiodicity measures koe is held to against pyworld: by Tests/Conformance/conformance.py (the
CLI) and Tests/Python (koe.world)."""

import numpy as np

APERIODICITY_FLOOR = 1e-3  # -60 dB


def log_spectral_distance(power, reference):
    """Mean over frames of the RMS over bins of 10 log10(power / reference), in dB."""
    with np.errstate(divide="ignore", invalid="ignore"):
        decibels = 10.0 * np.log10(power / reference)
    return float(np.mean(np.sqrt(np.mean(decibels ** 2, axis=1))))


def aperiodicity_difference(ap, reference):
    """Mean absolute difference of 20 log10(aperiodicity), floored at -60 dB, in dB."""
    def decibels(values):
        return 20.0 * np.log10(np.maximum(values, APERIODICITY_FLOOR))
    return float(np.mean(np.abs(decibels(ap) - decibels(reference))))
