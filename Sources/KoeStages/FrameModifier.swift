import Glibc
import KoeWorld

/// One frame of vocoder parameters, in buffers reused from frame to frame.
struct ParameterFrame {
    var f0: Double
    var spectrum: [Double]
    var aperiodicity: [Double]

    init(bins: Int) {
        f0 = 0
        spectrum = [Double](repeating: 0, count: bins)
        aperiodicity = [Double](repeating: 0, count: bins)
    }

    mutating func copy(from other: ParameterFrame) {
        f0 = other.f0
        spectrum.withUnsafeMutableBufferPointer { _ = $0.update(fromContentsOf: other.spectrum) }
        aperiodicity.withUnsafeMutableBufferPointer { _ = $0.update(fromContentsOf: other.aperiodicity) }
    }
}

/// Applies `VoiceSettings` to analysed frames: F0 ratio, median and range, formant warp, whisper, and the F0
/// edits, in this order: the given F0 track in place of the analysed F0, the ratio around the median, the
/// pitch curve, the snap to a scale, the vibrato. Frames are known by their index in the stream, so every edit
/// lands on the same frames however the stream was chunked or threaded.
/// New settings take effect from the next frame; the pitch and formant ratios glide there geometrically over
/// `glideFrames` frames, so a change made while a stream plays does not jump.
///
/// A voice that aims at a preset's target (`VoiceSettings.aiming`) takes its ratios from the speaker's profile,
/// scheduled frame by frame as a stream estimates it (`schedule`): the preset's own ratios until a profile is known,
/// then the aimed ones, which move toward what the profile asks by at most `Preset.Aiming.semitonesPerSecond`.
struct FrameModifier {
    private var voice: VoiceSettings
    private var median = MedianTracker()
    /// Milliseconds between frames: frame `n` is at `n * framePeriod` ms of input.
    private let framePeriod: Double
    private var snap = PitchSnap()
    private let glideFrames: Int
    private var pitch: GlidingRatio
    private var formant: GlidingRatio
    /// For each output bin, where on the input axis its value comes from, for `warpedRatio`.
    private var warpIndex: [Int]
    private var warpFraction: [Double]
    private var warpedRatio = 1.0
    /// The speaker's profile the ratios aim from, and the profiles to come, each with the frame it holds from.
    private var profile: SpeakerProfile?
    private var scheduled: [(frame: Int, profile: SpeakerProfile?)] = []
    private var nextScheduled = 0
    /// The most an aimed ratio moves from one frame to the next, in octaves.
    private let aimStep: Double
    /// The aim the latest frame's ratios came from (nil when neither ratio aimed).
    private(set) var latestAim: Preset.Aim?

    init(voice: VoiceSettings, bins: Int, framePeriod: Double = 5, glideFrames: Int = 1) {
        self.voice = voice
        self.framePeriod = framePeriod
        self.glideFrames = max(1, glideFrames)
        aimStep = Preset.Aiming.semitonesPerSecond / 12 * framePeriod / 1000
        pitch = GlidingRatio(voice.pitch)
        formant = GlidingRatio(voice.formant)
        warpIndex = [Int](repeating: 0, count: bins)
        warpFraction = [Double](repeating: 0, count: bins)
        warp(to: voice.formant)
    }

    /// The settings the frames from the next on are modified with, reached at once or gliding; tempo is fixed
    /// for the stream and ignored.
    mutating func update(_ voice: VoiceSettings, gliding: Bool) {
        let before = self.voice
        self.voice = voice
        let frames = gliding ? glideFrames : 0
        let aim = currentAim
        // A ratio that aimed and still aims at the same target goes on its way; any other glides to its new value.
        let sameTarget = before.aiming?.target == voice.aiming?.target
        if !(before.aimsPitch && voice.aimsPitch && sameTarget) {
            pitch.glide(to: voice.aimsPitch ? aim?.pitch ?? voice.pitch : voice.pitch, frames: frames)
        }
        if !(before.aimsFormant && voice.aimsFormant && sameTarget) {
            formant.glide(to: voice.aimsFormant ? aim?.formant ?? voice.formant : voice.formant, frames: frames)
        }
    }

    /// The ratios the latest frame was given; before the first, those it will start from.
    var applied: (pitch: Double, formant: Double) { (pitch.current, formant.current) }

    /// The speaker's profile from frame `frame` on (nil: none known), for a voice that aims.
    mutating func schedule(_ profile: SpeakerProfile?, fromFrame frame: Int) {
        scheduled.append((frame, profile))
    }

    /// Makes room for `count` profiles scheduled ahead of the frames.
    mutating func reserve(scheduledProfiles count: Int) {
        scheduled.reserveCapacity(count)
    }

    /// The profiles scheduled up to frame `index`, taken in order. A profile that goes away (nil) lets the ratios
    /// that aimed glide back to the voice's own.
    private mutating func takeScheduledProfiles(upTo index: Int) {
        while nextScheduled < scheduled.count, scheduled[nextScheduled].frame <= index {
            let next = scheduled[nextScheduled].profile
            nextScheduled += 1
            if next == nil && profile != nil {
                if voice.aimsPitch { pitch.glide(to: voice.pitch, frames: glideFrames) }
                if voice.aimsFormant { formant.glide(to: voice.formant, frames: glideFrames) }
            }
            profile = next
        }
        if nextScheduled > 0 && nextScheduled == scheduled.count {
            scheduled.removeAll(keepingCapacity: true)
            nextScheduled = 0
        }
    }

    /// The ratios the target asks of the profile's voice, where the voice aims and a profile is known. The
    /// vocoder's median is the running median of its voiced F0, or the input's own where it was given.
    private var currentAim: Preset.Aim? {
        guard voice.aimsPitch || voice.aimsFormant, let aiming = voice.aiming, let profile else { return nil }
        let vocoderMedian = voice.referenceMedian ?? (median.value > 0 ? median.value : nil)
        return aiming.aim(for: profile, vocoderMedian: vocoderMedian)
    }

    /// Bin `i` reads `i / ratio` on the input axis, held at the last bin past Nyquist.
    private mutating func warp(to ratio: Double) {
        warpedRatio = ratio
        let bins = warpIndex.count
        for bin in 0..<bins {
            let source = min(Double(bin) / ratio, Double(bins - 1))
            let index = min(Int(source), bins - 2)
            warpIndex[bin] = index
            warpFraction[bin] = source - Double(index)
        }
    }

    /// Modifies frame `index` of the stream, whose analysis is `row` of the matrices, into `frame`.
    mutating func modify(
        frame index: Int, f0: Double, spectrogram: Matrix, aperiodicity: Matrix, row: Int, into frame: inout ParameterFrame
    ) {
        takeScheduledProfiles(upTo: index)
        let aim = currentAim
        // The first frame takes the aim at once, as a voice takes any setting before the stream starts.
        let step = index == 0 ? Double.infinity : aimStep
        let pitch = voice.aimsPitch && aim != nil ? pitch.follow(aim!.pitch, within: step) : pitch.next()
        let formant = voice.aimsFormant && aim != nil ? formant.follow(aim!.formant, within: step) : formant.next()
        latestAim = aim
        if formant != 1 && formant != warpedRatio { warp(to: formant) }
        frame.f0 = voice.whisper ? 0 : editedF0(voice.f0Track?.f0(atFrame: index) ?? f0, frame: index, ratio: pitch)
        // Buffers taken once a frame: element writes through `frame` inside the row closures each paid for a
        // uniqueness check and an exclusivity check.
        frame.spectrum.withUnsafeMutableBufferPointer { spectrum in
            spectrogram.withRow(row) { source in
                if formant != 1 {
                    warpIndex.withUnsafeBufferPointer { indices in
                        warpFraction.withUnsafeBufferPointer { fractions in
                            for bin in indices.indices {
                                let index = indices[bin]
                                spectrum[bin] = source[index] + fractions[bin] * (source[index + 1] - source[index])
                            }
                        }
                    }
                } else {
                    _ = spectrum.update(fromContentsOf: source)
                }
            }
        }
        frame.aperiodicity.withUnsafeMutableBufferPointer { output in
            if voice.whisper {
                output.update(repeating: 1)
            } else {
                aperiodicity.withRow(row) { source in _ = output.update(fromContentsOf: source) }
            }
        }
    }

    private mutating func editedF0(_ f0: Double, frame: Int, ratio: Double) -> Double {
        guard f0 > 0 else {
            snap.unvoiced()
            return 0
        }
        let inputSeconds = Double(frame) * framePeriod / 1000
        var edited = shiftedF0(f0, ratio: ratio)
        if let curve = voice.pitchCurve { edited *= curve.ratio(at: inputSeconds) }
        // A given F0 far outside any voice (a track's 1e-320 Hz or 1e300 Hz) can leave the edits no pitch: 0, a
        // subnormal (whose ratio to A4 is 0) or infinity. Such a frame is unvoiced, as the snap cannot place it
        // and synthesis cannot render it.
        guard edited > 0, edited.isNormal else {
            snap.unvoiced()
            return 0
        }
        if let options = voice.snap { edited = snap.snapped(edited, options: options, framePeriod: framePeriod) }
        if let vibrato = voice.vibrato { edited *= vibrato.factor(atOutputTime: inputSeconds / voice.tempo) }
        return edited.isFinite ? edited : 0
    }

    private mutating func shiftedF0(_ f0: Double, ratio: Double) -> Double {
        // The running median is kept even while no setting needs it, so one changed later finds it ready.
        if voice.referenceMedian == nil { median.add(f0) }
        guard voice.needsMedian else { return f0 * ratio }
        let reference = voice.referenceMedian ?? median.value
        let centre = voice.pitchMedian ?? reference
        return ratio * exp(log(centre) + voice.pitchRange * (log(f0) - log(reference)))
    }
}

/// A ratio that moves to a new value geometrically, a step a frame, and then stays there exactly.
private struct GlidingRatio {
    private var value: Double
    private var target: Double
    private var framesLeft = 0

    init(_ value: Double) {
        self.value = value
        target = value
    }

    /// Glides to `newTarget` over `frames` frames; 0 jumps there.
    mutating func glide(to newTarget: Double, frames: Int) {
        guard newTarget != target else { return }
        target = newTarget
        framesLeft = frames
        if frames == 0 { value = newTarget }
    }

    /// The value for the next frame when it should be `wanted`: a glide under way goes on, otherwise the value
    /// moves toward `wanted` by at most `limit` octaves.
    mutating func follow(_ wanted: Double, within limit: Double) -> Double {
        if framesLeft > 0 { return next() }
        let octaves = log2(wanted / value)
        value = abs(octaves) <= limit ? wanted : value * exp2(octaves < 0 ? -limit : limit)
        target = value
        return value
    }

    /// The value the latest frame took.
    var current: Double { value }

    /// The value for the next frame.
    mutating func next() -> Double {
        if framesLeft > 0 {
            value = framesLeft == 1 ? target : value * pow(target / value, 1 / Double(framesLeft))
            framesLeft -= 1
        }
        return value
    }
}

/// The median of the voiced F0 values seen so far, in bounded memory: a histogram of log-F0 in 1-cent bins,
/// so the median is exact to a cent whatever the length of the stream.
struct MedianTracker {
    private static let lowest = 20.0
    private static let binsPerOctave = 1200.0
    private static let octaves = 8.0
    private var counts = [Int](repeating: 0, count: Int(MedianTracker.binsPerOctave * MedianTracker.octaves))
    private var total = 0
    /// The bin holding the middle value: the lowest bin through which more than half the values lie.
    private var medianBin = 0
    /// Values in the bins below `medianBin`.
    private var below = 0

    /// Counts the value; the median bin moves only as far as the values between its old and new place, so
    /// adding costs little however many bins the histogram has.
    mutating func add(_ f0: Double) {
        let position = log2(f0 / MedianTracker.lowest) * MedianTracker.binsPerOctave
        // Clamped before it becomes an index: a given F0 of 1e-320 Hz lies at -infinity.
        let bin = Int(min(max(position, 0), Double(counts.count - 1)))
        counts[bin] += 1
        total += 1
        if bin < medianBin {
            below += 1
        }
        while 2 * (below + counts[medianBin]) <= total {
            below += counts[medianBin]
            medianBin += 1
        }
        while 2 * below > total {
            medianBin -= 1
            below -= counts[medianBin]
        }
    }

    /// The centre frequency of the bin holding the middle value (Hz); 0 before any value.
    var value: Double {
        guard total > 0 else { return 0 }
        return MedianTracker.lowest * exp2((Double(medianBin) + 0.5) / MedianTracker.binsPerOctave)
    }
}
