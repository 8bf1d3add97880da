import Glibc
import Koe
import Synchronization

/// What the audio callback and the main thread share: the changer, which only the callback touches once the
/// stream runs, the settings the main thread asks for, and the meters. The callback neither allocates nor
/// locks here; the changer's own real-time behaviour is `VoiceChanger`'s (see its documentation).
package final class LiveEngine {
    package let changer: VoiceChanger
    /// The pitch and formant ratios and the gain in dB asked for, as Double bit patterns; the callback hands them
    /// to the changer.
    package let requestedPitch: Atomic<UInt64>
    package let requestedFormant: Atomic<UInt64>
    package let requestedGain: Atomic<UInt64>
    /// The ratios the changer gave its latest frame, as Double bit patterns: the asked ones, or while a voice preset
    /// aims, the aimed ones. The callback stores them.
    package let appliedPitch: Atomic<UInt64>
    package let appliedFormant: Atomic<UInt64>
    /// Peak magnitudes since the main thread last took them, as Float bit patterns (ordered like the values).
    package let inputPeak = Atomic<UInt32>(0)
    package let outputPeak = Atomic<UInt32>(0)
    /// Callbacks the host flagged with an over- or underflow (or, on PipeWire, missed cycles), and blocks the
    /// changer refused.
    package let xruns = Atomic<Int>(0)
    package let refusedBlocks = Atomic<Int>(0)
    /// The largest share of a block's own duration that the callback took on it, start to end, as a Double bit
    /// pattern: what the cycle's deadline sees, koe's work and any time its thread did not run alike.
    package let busiestBlock = Atomic<UInt64>(0)
    /// Where the busiest block starts in the stream, in frames: at the start (first touches, first decisions)
    /// or in steady state.
    package let busiestFrame = Atomic<Int>(0)
    /// The most CPU time koe's thread spent on one block, as a share of the block's duration (Double bits). With
    /// it below 1 and no block waited, koe never held up a cycle: a missed one, or a busiest block well above
    /// this, was the system's not running koe's thread in time (woken late, preempted, its CPU shared).
    package let mostWork = Atomic<UInt64>(0)
    /// Blocks in which koe's thread gave up its CPU of its own accord (a voluntary context switch: it waited on a
    /// lock, a sleep or a read from disk), which a real-time callback must never do.
    package let waitedBlocks = Atomic<Int>(0)
    /// Frames the callback has been given work for; only the callback touches it.
    private var processedFrames = 0

    private let inputs = UnsafeMutablePointer<UnsafePointer<Float>>.allocate(capacity: 1)
    private let outputs = UnsafeMutablePointer<UnsafeMutablePointer<Float>>.allocate(capacity: 1)

    package init(changer: VoiceChanger) {
        self.changer = changer
        requestedPitch = Atomic(changer.voice.pitch.bitPattern)
        requestedFormant = Atomic(changer.voice.formant.bitPattern)
        requestedGain = Atomic(changer.gainDB.bitPattern)
        appliedPitch = Atomic(changer.appliedRatios.pitch.bitPattern)
        appliedFormant = Atomic(changer.appliedRatios.formant.bitPattern)
    }

    deinit {
        inputs.deallocate()
        outputs.deallocate()
    }

    package var pitch: Double { Double(bitPattern: requestedPitch.load(ordering: .relaxed)) }
    package var formant: Double { Double(bitPattern: requestedFormant.load(ordering: .relaxed)) }
    package var gainDB: Double { Double(bitPattern: requestedGain.load(ordering: .relaxed)) }
    package var applied: (pitch: Double, formant: Double) {
        (Double(bitPattern: appliedPitch.load(ordering: .relaxed)), Double(bitPattern: appliedFormant.load(ordering: .relaxed)))
    }

    /// Asks for these ratios and this gain, each clamped to its setting's range (`Setting`; a value that is not a
    /// number is ignored); from any thread but the callback's.
    package func request(pitch: Double? = nil, formant: Double? = nil, gainDB: Double? = nil) {
        if let pitch = pitch.flatMap(Setting.pitch.clamped) { requestedPitch.store(pitch.bitPattern, ordering: .relaxed) }
        if let formant = formant.flatMap(Setting.formant.clamped) { requestedFormant.store(formant.bitPattern, ordering: .relaxed) }
        if let gainDB = gainDB.flatMap(Setting.gain.clamped) { requestedGain.store(gainDB.bitPattern, ordering: .relaxed) }
    }

    /// Moves the pitch by semitones from the ratio heard (an aimed one while a preset aims, which then lets go of
    /// it); from the main thread.
    package func nudge(pitch semitones: Int) {
        request(pitch: applied.pitch * exp2(Double(semitones) / 12))
    }

    /// Moves the formants by steps of 5 % from the ratio heard; from the main thread.
    package func nudge(formant steps: Int) {
        request(formant: applied.formant * pow(1.05, Double(steps)))
    }

    /// The callback's work: settings, the block through the changer, the meters. No input (a cycle the host
    /// brought nothing to) gives silence.
    package func process(_ input: UnsafePointer<Float>?, _ output: UnsafeMutablePointer<Float>, frames: Int, xrun: Bool) {
        if xrun { xruns.add(1, ordering: .relaxed) }
        guard let input else {
            output.update(repeating: 0, count: frames)
            return
        }
        let started = Self.now(), startUsage = Self.threadUsage()
        defer { timeBlock(frames: frames, started: started, startUsage: startUsage) }
        let pitch = self.pitch, formant = self.formant, gainDB = self.gainDB
        if pitch != changer.voice.pitch { changer.voice.pitch = pitch }
        if formant != changer.voice.formant { changer.voice.formant = formant }
        if gainDB != changer.gainDB { changer.gainDB = gainDB }
        Self.raise(inputPeak, to: UnsafeBufferPointer(start: input, count: frames))
        inputs[0] = input
        outputs[0] = output
        do {
            try changer.process(UnsafePointer(inputs), into: UnsafePointer(outputs), frames: frames)
        } catch {
            output.update(repeating: 0, count: frames)
            refusedBlocks.add(1, ordering: .relaxed)
        }
        Self.raise(outputPeak, to: UnsafeBufferPointer(start: output, count: frames))
        let applied = changer.appliedRatios
        appliedPitch.store(applied.pitch.bitPattern, ordering: .relaxed)
        appliedFormant.store(applied.formant.bitPattern, ordering: .relaxed)
    }

    /// Busiest block as a share of its duration (see `busiestBlock`).
    package var busiestShare: Double { Double(bitPattern: busiestBlock.load(ordering: .relaxed)) }

    /// Seconds into the stream where the busiest block starts.
    package var busiestSecond: Double { Double(busiestFrame.load(ordering: .relaxed)) / Double(changer.sampleRate) }

    /// The most work on one block (see `mostWork`).
    package var mostWorkShare: Double { Double(bitPattern: mostWork.load(ordering: .relaxed)) }

    /// Only the callback writes the shares and the frame, so loads and stores are enough (the main thread may
    /// read a new share with the old frame at worst).
    private func timeBlock(frames: Int, started: Double, startUsage: (seconds: Double, waits: Int)) {
        let perSecond = Double(changer.sampleRate) / Double(max(frames, 1))
        let share = (Self.now() - started) * perSecond
        let usage = Self.threadUsage()
        let work = (usage.seconds - startUsage.seconds) * perSecond
        if share > busiestShare {
            busiestBlock.store(share.bitPattern, ordering: .relaxed)
            busiestFrame.store(processedFrames, ordering: .relaxed)
        }
        if work > mostWorkShare { mostWork.store(work.bitPattern, ordering: .relaxed) }
        if usage.waits != startUsage.waits { waitedBlocks.add(1, ordering: .relaxed) }
        processedFrames += frames
    }

    /// The calling thread's CPU time (user and system, in microseconds from the kernel) and its voluntary context
    /// switches: one system call, which neither locks in user space nor sleeps.
    private static func threadUsage() -> (seconds: Double, waits: Int) {
        var usage = rusage()
        getrusage(__rusage_who_t(1), &usage)  // RUSAGE_THREAD, which Glibc's module does not import
        let microseconds = (usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) * 1_000_000 + usage.ru_utime.tv_usec
            + usage.ru_stime.tv_usec
        return (Double(microseconds) / 1e6, usage.ru_nvcsw)
    }

    /// Seconds on CLOCK_MONOTONIC, read through the vDSO: no system call, no lock, fit for the callback.
    package static func now() -> Double {
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        return Double(now.tv_sec) + Double(now.tv_nsec) / 1e9
    }

    /// The peak since the last call, as a linear magnitude; resets it.
    package static func takePeak(_ peak: borrowing Atomic<UInt32>) -> Float {
        Float(bitPattern: peak.exchange(0, ordering: .relaxed))
    }

    /// Only the callback raises a peak and only the main thread resets it, so a load and a store lose nothing
    /// worse than one block's peak at the moment of a reset.
    private static func raise(_ peak: borrowing Atomic<UInt32>, to samples: UnsafeBufferPointer<Float>) {
        var block: Float = 0
        for sample in samples { block = max(block, abs(sample)) }
        if block.bitPattern > peak.load(ordering: .relaxed) { peak.store(block.bitPattern, ordering: .relaxed) }
    }
}
