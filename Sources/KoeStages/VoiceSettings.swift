import Glibc

/// What the vocoder stage changes in a voice. The defaults change nothing.
public struct VoiceSettings: Sendable, Equatable {
    /// F0 multiplier: 2 is an octave up (default 1).
    public var pitch = 1.0
    /// Scale of F0 excursions around the median, in log-F0: 0 is monotone, 1 unchanged (default 1).
    public var pitchRange = 1.0
    /// Median F0 to move the voice to, in Hz (Praat's "new pitch median"); nil keeps the median (default).
    public var pitchMedian: Double?
    /// The input's median F0, in Hz, that `pitchRange` and `pitchMedian` work around; nil uses the running
    /// median of the voiced frames so far, all a live stream can know (default nil). See `F0Survey`.
    package var referenceMedian: Double?
    /// Frequency-axis scale of the spectral envelope: above 1 moves formants up (default 1).
    public var formant = 1.0
    /// A voice preset's target that the pitch and formant ratios aim at, from the speaker's profile as a stream
    /// estimates it while it runs (default nil: the ratios are what they say).
    package var aiming: Preset.Aiming?
    /// Speed: 2 plays twice as fast with pitch and formants kept (default 1).
    public var tempo = 1.0
    /// Replace the excitation by noise: every frame unvoiced and fully aperiodic (default off).
    public var whisper = false
    /// F0 replacing the analysed F0, frame by frame; the changes below apply to it (default nil: analysed).
    public var f0Track: F0Track?
    /// A pitch ratio over input time, multiplied with `pitch` (default nil: none).
    public var pitchCurve: PitchCurve?
    /// Pull voiced F0 to the nearest note of a scale, after the ratios (default nil: off).
    public var snap: PitchSnap.Options?
    /// Sinusoidal vibrato on voiced frames, last of the F0 changes (default nil: off).
    public var vibrato: Vibrato.Options?

    public init() {}

    /// The pitch shift in semitones: the same setting as `pitch`, on another scale. A value that is not finite
    /// leaves `pitch` as it is; a finite one whose ratio overflows a Double (beyond about 12,300 semitones either
    /// way) gives the largest or smallest positive ratio, out of range as the shift asked for is (a changer clamps
    /// it, a conversion refuses it), rather than infinity, which a changer would ignore as not finite.
    public var semitones: Double {
        get { 12 * log2(pitch) }
        set { if newValue.isFinite { pitch = exp2(min(max(newValue / 12, -1074), 1023)) } }
    }

    /// True when the settings leave the voice as it is, so the vocoder can be left out of the chain.
    package var isIdentity: Bool {
        pitch == 1 && pitchRange == 1 && pitchMedian == nil && formant == 1 && tempo == 1 && !whisper
            && f0Track == nil && pitchCurve == nil && snap == nil && vibrato == nil
    }

    /// Whether the pitch ratio aims at `aiming`'s target: it aims, and no ratio or median was asked for instead.
    package var aimsPitch: Bool {
        guard let aiming else { return false }
        return aiming.aimsPitch && pitch == aiming.typicalPitch && pitchMedian == nil
    }

    /// Whether the formant ratio aims at `aiming`'s target: it aims, and no ratio was asked for instead.
    package var aimsFormant: Bool {
        guard let aiming else { return false }
        return aiming.aimsFormant && formant == aiming.typicalFormant
    }

    /// Whether F0 changes depend on the voice's median.
    package var needsMedian: Bool { pitchRange != 1 || pitchMedian != nil }
}
