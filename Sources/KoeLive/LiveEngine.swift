import Glibc
import Koe
import Synchronization

/// What the audio callback and the other threads share: the changer, which only the callback touches once the
/// stream runs (other threads make changes ready for it: `VoiceChanger.prepare`), the change handed over, the
/// meters and counters, and the panel's telemetry. The callback neither allocates nor locks here; the changer's
/// own real-time behaviour is `VoiceChanger`'s (see its documentation).
package final class LiveEngine: @unchecked Sendable {
    package let changer: VoiceChanger
    /// The change made ready for the callback, and the last one it took (holding what that replaced), as retained
    /// `VoiceChanger.Change` pointers: other threads publish and free them, the callback takes and retires them.
    private let pending = Atomic<UnsafeMutableRawPointer?>(nil)
    private let retired = Atomic<UnsafeMutableRawPointer?>(nil)
    /// Levels and F0 for the panel (`LiveTelemetry.recordsPerSecond`), written by the callback.
    package let telemetry = LiveTelemetry()
    /// The pitch and formant ratios the changer gave its latest frame (while a voice preset aims, the aimed ones),
    /// as Double bit patterns, written by the callback.
    private let appliedPitch = Atomic<UInt64>(1.0.bitPattern)
    private let appliedFormant = Atomic<UInt64>(1.0.bitPattern)
    /// Peak magnitudes since the main thread last took them, as Float bit patterns (ordered like the values).
    package let inputPeak = Atomic<UInt32>(0)
    package let outputPeak = Atomic<UInt32>(0)
    /// Callbacks the host flagged with an over- or underflow (or, on PipeWire, missed cycles), and blocks the
    /// changer refused.
    package let xruns = Atomic<Int>(0)
    package let refusedBlocks = Atomic<Int>(0)
    /// The largest share of a block's own duration that the callback took on it, start to end, as a Double bit
    /// pattern: what the cycle's deadline sees, koe's work and any time its thread did not run alike.
    let busiestBlock = Atomic<UInt64>(0)
    /// Where the busiest block starts in the stream, in frames: at the start (first touches, first decisions)
    /// or in steady state.
    let busiestFrame = Atomic<Int>(0)
    /// The most CPU time koe's thread spent on one block, as a share of the block's duration (Double bits). With
    /// it below 1 and no block waited, koe never held up a cycle: a missed one, or a busiest block well above
    /// this, was the system's not running koe's thread in time (woken late, preempted, its CPU shared).
    let mostWork = Atomic<UInt64>(0)
    /// Blocks in which koe's thread gave up its CPU of its own accord (a voluntary context switch: it waited on a
    /// lock, a sleep or a read from disk), which a real-time callback must never do.
    package let waitedBlocks = Atomic<Int>(0)
    /// What a listener waits, in seconds, as koe reports it (koe's latency and the devices' or the graph's), as a
    /// Double bit pattern: the main thread knows it, the panel shows it.
    private let latency = Atomic<UInt64>(0)
    /// Frames the callback has been given work for; only the callback touches it.
    private var processedFrames = 0
    /// The telemetry record being gathered, and its frames so far; only the callback touches them.
    private var stretch = LiveTelemetry.Record(frame: 0, inputPeak: 0, outputPeak: 0, inputF0: 0, outputF0: 0)
    private var stretchFrames = 0

    private let inputs = UnsafeMutablePointer<UnsafePointer<Float>>.allocate(capacity: 1)
    private let outputs = UnsafeMutablePointer<UnsafeMutablePointer<Float>>.allocate(capacity: 1)

    package init(changer: VoiceChanger) {
        self.changer = changer
    }

    deinit {
        inputs.deallocate()
        outputs.deallocate()
        for slot in [pending.exchange(nil, ordering: .acquiring), retired.exchange(nil, ordering: .acquiring)] {
            if let slot { Unmanaged<VoiceChanger.Change>.fromOpaque(slot).release() }
        }
    }

    /// Hands `change` to the callback, which takes it at its next block (one it has not taken yet is replaced, and
    /// freed here), and frees the change the callback took before. From any thread but the callback's.
    func publish(_ change: VoiceChanger.Change) {
        collect()
        let published = Unmanaged.passRetained(change).toOpaque()
        if let untaken = pending.exchange(published, ordering: .acquiringAndReleasing) {
            Unmanaged<VoiceChanger.Change>.fromOpaque(untaken).release()
        }
    }

    /// Frees the change the callback took last, which holds what it replaced, so that the callback may take the
    /// next. From any thread but the callback's.
    package func collect() {
        if let taken = retired.exchange(nil, ordering: .acquiring) {
            Unmanaged<VoiceChanger.Change>.fromOpaque(taken).release()
        }
    }

    /// The callback's side: takes the change published since the last block, once the one before it is freed,
    /// so that nothing is ever freed here.
    private func takeChange() {
        guard retired.load(ordering: .acquiring) == nil, let change = pending.exchange(nil, ordering: .acquiring) else { return }
        changer.take(Unmanaged<VoiceChanger.Change>.fromOpaque(change).takeUnretainedValue())
        retired.store(change, ordering: .releasing)
    }

    /// The callback's work: a change handed over, the block through the changer, the meters and telemetry. No
    /// input (a cycle the host brought nothing to) gives silence.
    package func process(_ input: UnsafePointer<Float>?, _ output: UnsafeMutablePointer<Float>, frames: Int, xrun: Bool) {
        if xrun { xruns.add(1, ordering: .relaxed) }
        guard let input else {
            output.update(repeating: 0, count: frames)
            return
        }
        let started = Self.now(), startUsage = Self.threadUsage()
        defer { timeBlock(frames: frames, started: started, startUsage: startUsage) }
        takeChange()
        let inputLevel = Self.raise(inputPeak, to: UnsafeBufferPointer(start: input, count: frames))
        inputs[0] = input
        outputs[0] = output
        do {
            try changer.process(UnsafePointer(inputs), into: UnsafePointer(outputs), frames: frames)
        } catch {
            output.update(repeating: 0, count: frames)
            refusedBlocks.add(1, ordering: .relaxed)
        }
        let outputLevel = Self.raise(outputPeak, to: UnsafeBufferPointer(start: output, count: frames))
        gather(frames: frames, inputLevel: inputLevel, outputLevel: outputLevel)
        let applied = changer.appliedRatios
        appliedPitch.store(applied.pitch.bitPattern, ordering: .relaxed)
        appliedFormant.store(applied.formant.bitPattern, ordering: .relaxed)
    }

    /// The ratios heard (see `appliedPitch`); from any thread.
    package var applied: (pitch: Double, formant: Double) {
        (Double(bitPattern: appliedPitch.load(ordering: .relaxed)), Double(bitPattern: appliedFormant.load(ordering: .relaxed)))
    }

    /// Adds a block to the telemetry record being gathered, and writes the record once it spans its share of a
    /// second.
    private func gather(frames: Int, inputLevel: Float, outputLevel: Float) {
        stretch.inputPeak = max(stretch.inputPeak, inputLevel)
        stretch.outputPeak = max(stretch.outputPeak, outputLevel)
        stretchFrames += frames
        guard stretchFrames * LiveTelemetry.recordsPerSecond >= changer.sampleRate else { return }
        let f0 = changer.latestF0 ?? (0, 0)
        stretch.frame = processedFrames + frames
        stretch.inputF0 = f0.input
        stretch.outputF0 = f0.output
        telemetry.write(stretch)
        stretch.inputPeak = 0
        stretch.outputPeak = 0
        stretchFrames = 0
    }

    /// The latency reported (see `latency`).
    package var reportedLatency: Double { Double(bitPattern: latency.load(ordering: .relaxed)) }

    package func report(latency seconds: Double) {
        latency.store(seconds.bitPattern, ordering: .relaxed)
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

    /// The calling thread's CPU time to the nanosecond (CLOCK_THREAD_CPUTIME_ID, which counts the slice running
    /// now: getrusage's figure moves only at a scheduler tick or a switch, so a block would read the time since
    /// the last tick, before the block began included) and its voluntary context switches (getrusage). Two system
    /// calls, neither of which locks in user space or sleeps.
    private static func threadUsage() -> (seconds: Double, waits: Int) {
        var cpu = timespec()
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &cpu)
        var usage = rusage()
        getrusage(__rusage_who_t(1), &usage)  // RUSAGE_THREAD, which Glibc's module does not import
        return (Double(cpu.tv_sec) + Double(cpu.tv_nsec) / 1e9, usage.ru_nvcsw)
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
    /// worse than one block's peak at the moment of a reset. Returns the block's peak.
    private static func raise(_ peak: borrowing Atomic<UInt32>, to samples: UnsafeBufferPointer<Float>) -> Float {
        var block: Float = 0
        for sample in samples { block = max(block, abs(sample)) }
        if block.bitPattern > peak.load(ordering: .relaxed) { peak.store(block.bitPattern, ordering: .relaxed) }
        return block
    }
}
