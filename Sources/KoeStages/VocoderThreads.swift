import KoeDSP
import KoeWorld

/// The vocoder's work on threads of the worker pool, so its caller only settles F0 and hands the blocks over:
/// pending blocks are analysed side by side, in any order, and the analysed blocks are synthesised one at a
/// time in stream order. The first thread synthesises whenever it can, before analysing, so output flows,
/// memory stays bounded and the synthesiser's buffers stay in one core's cache; the others analyse first and
/// synthesise only when nothing is left to analyse. `submit` waits while too many frames are in hand; the
/// output waits until drained. The threads are the pool's, each taken for the stream's life and given back by
/// `stop`; the pool starts every one at once, so a caller waiting here waits only for work under way.
final class VocoderThreads: @unchecked Sendable {
    /// Guards every variable property, and signals each change of them.
    private let lock = Lock()
    private var waiting: [(index: Int, block: StreamingAnalyzer.PendingBlock)] = []
    private var analysed: [Int: StreamingAnalyzer.Block] = [:]
    /// New voices, by the index of the first block (or the end, at `submitted`) they change.
    private var voiceChanges: [Int: VoiceChange] = [:]
    /// The speaker's profiles scheduled, by the index of the block (or the end) before which the synthesis takes them.
    private var scheduledProfiles: [Int: [ScheduledProfile]] = [:]
    private var submitted = 0
    private var synthesised = 0
    private var framesInHand = 0
    /// Set with the last block: the output length the stream ends at, and whether that end is synthesised.
    private var finalLength: Int?
    private var hasFinished = false
    private var isSynthesising = false
    private var output: [Double] = []
    private var latestMedians: (input: Double?, output: Double?) = (nil, nil)
    private var latestAimState: AimState
    private var isStopping = false
    private var runningThreads = 0
    /// Touched only by the thread that set `isSynthesising`.
    private let resynthesis: Resynthesis
    /// What a synthesis made, before it joins `output`; touched only by the thread that set `isSynthesising`.
    private var produced: [Double] = []
    /// Takes back the blocks synthesised, for their arrays to hold later blocks.
    private let recycler: StreamingAnalyzer.Recycler
    private let threads: Int

    /// Frames submitted but not yet synthesised, beyond which `submit` waits (unless no more blocks than threads
    /// are in hand, so that each thread can analyse one while the one before is synthesised, as long blocks such
    /// as Harvest's need): 0.5 s at 5 ms a frame, many blocks for the threads to share, and little memory.
    private static let capacity = 100

    init(_ resynthesis: Resynthesis, recycler: StreamingAnalyzer.Recycler, threads: Int) {
        self.resynthesis = resynthesis
        self.recycler = recycler
        self.threads = threads
        runningThreads = threads
        latestAimState = resynthesis.aimState
        for worker in 0..<threads {
            WorkerPool.shared.run { [self] in work(prefersSynthesis: worker == 0) }
        }
    }

    /// A new voice, and whether it glides in.
    typealias VoiceChange = (voice: VoiceSettings, gliding: Bool)

    /// Hands over the next blocks of the stream; `finalLength` with the last of them; `voiceChange` when the
    /// voice changes from the first of them on; `profiles` for the synthesis to take before the first of them.
    func submit(
        _ blocks: [StreamingAnalyzer.PendingBlock], finalLength: Int?, voiceChange: VoiceChange? = nil,
        profiles: [ScheduledProfile] = []
    ) {
        lock.lock()
        defer { lock.unlock() }
        if let voiceChange {
            voiceChanges[submitted] = voiceChange
        }
        if !profiles.isEmpty {
            scheduledProfiles[submitted, default: []] += profiles
        }
        for block in blocks {
            while framesInHand > 0, framesInHand + block.frameCount > Self.capacity, submitted - synthesised > threads {
                lock.wait()
            }
            waiting.append((submitted, block))
            submitted += 1
            framesInHand += block.frameCount
            // Only the threads wait while the caller is here: one of them is enough for one block.
            lock.signal()
        }
        if let finalLength {
            self.finalLength = finalLength
            lock.broadcast()
        }
    }

    /// Waits until every block handed over is synthesised, and the end of the stream if it was handed over.
    func waitUntilIdle() {
        lock.lock()
        defer { lock.unlock() }
        while synthesised < submitted || (finalLength != nil && !hasFinished) {
            lock.wait()
        }
    }

    /// Appends the samples synthesised since the last call to `samples`; the output keeps its capacity.
    func drain(into samples: inout [Double]) {
        lock.lock()
        defer { lock.unlock() }
        samples.append(contentsOf: output)
        output.removeAll(keepingCapacity: true)
    }

    var medians: (input: Double?, output: Double?) {
        lock.lock()
        defer { lock.unlock() }
        return latestMedians
    }

    var aimState: AimState {
        lock.lock()
        defer { lock.unlock() }
        return latestAimState
    }

    /// Ends the threads' work, dropping what is not yet started, and returns once each has given its thread back.
    func stop() {
        lock.lock()
        defer { lock.unlock() }
        isStopping = true
        lock.broadcast()
        while runningThreads > 0 {
            lock.wait()
        }
    }

    private enum Job {
        case synthesise(StreamingAnalyzer.Block, voiceChange: VoiceChange?, profiles: [ScheduledProfile])
        case finish(outputLength: Int, voiceChange: VoiceChange?, profiles: [ScheduledProfile])
        case analyse(index: Int, StreamingAnalyzer.PendingBlock)
    }

    private func work(prefersSynthesis: Bool) {
        lock.lock()
        while let job = nextJob(prefersSynthesis: prefersSynthesis) {
            lock.unlock()
            switch job {
            case .synthesise(let block, let voiceChange, let profiles):
                if let voiceChange { resynthesis.update(voiceChange.voice, gliding: voiceChange.gliding) }
                profiles.forEach(resynthesis.schedule)
                resynthesis.run(block, into: &produced)
                let frameCount = block.f0.count
                recycler.recycle(block)
                record {
                    synthesised += 1
                    framesInHand -= frameCount
                }
            case .finish(let outputLength, let voiceChange, let profiles):
                if let voiceChange { resynthesis.update(voiceChange.voice, gliding: voiceChange.gliding) }
                profiles.forEach(resynthesis.schedule)
                resynthesis.finish(outputLength: outputLength, into: &produced)
                record { hasFinished = true }
            case .analyse(let index, let pending):
                let block = pending.analyzed()
                lock.lock()
                analysed[index] = block
                // The synthesis waits for this block: wake the first thread if it sleeps.
                if index == synthesised, !isSynthesising { lock.broadcast() }
                lock.unlock()
            }
            lock.lock()
        }
        runningThreads -= 1
        lock.broadcast()
        lock.unlock()
    }

    /// Waits for a job, with the lock held; nil once the threads are to stop.
    private func nextJob(prefersSynthesis: Bool) -> Job? {
        while !isStopping {
            if prefersSynthesis || waiting.isEmpty, let job = synthesisJob() {
                return job
            }
            if !waiting.isEmpty {
                let (index, block) = waiting.removeFirst()
                return .analyse(index: index, block)
            }
            lock.wait()
        }
        return nil
    }

    /// The next synthesis, if it is free and has something to do.
    private func synthesisJob() -> Job? {
        guard !isSynthesising else { return nil }
        if let block = analysed.removeValue(forKey: synthesised) {
            isSynthesising = true
            return .synthesise(
                block, voiceChange: voiceChanges.removeValue(forKey: synthesised),
                profiles: scheduledProfiles.removeValue(forKey: synthesised) ?? [])
        }
        if synthesised == submitted, let finalLength, !hasFinished {
            isSynthesising = true
            return .finish(
                outputLength: finalLength, voiceChange: voiceChanges.removeValue(forKey: submitted),
                profiles: scheduledProfiles.removeValue(forKey: submitted) ?? [])
        }
        return nil
    }

    /// Publishes what a synthesis made, and what it finished, and frees the synthesis for the next thread.
    private func record(finished: () -> Void) {
        let medians = resynthesis.medians
        let aimState = resynthesis.aimState
        lock.lock()
        output.append(contentsOf: produced)
        produced.removeAll(keepingCapacity: true)
        latestMedians = medians
        latestAimState = aimState
        finished()
        isSynthesising = false
        lock.broadcast()
        lock.unlock()
    }
}
