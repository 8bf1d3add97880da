import Synchronization

/// What the audio thread tells the live panel many times a second: levels and F0, in a ring of records that one
/// thread writes and any other reads, without a lock. The writer stores a record's fields, then publishes the
/// count of records written (release); a reader copies what it has not seen yet and checks the count again, so
/// that a record overwritten while it was copied is dropped rather than read torn.
package final class LiveTelemetry: @unchecked Sendable {
    /// One stretch of the stream.
    package struct Record: Equatable, Sendable {
        /// Frames of the stream before the stretch's end.
        package var frame: Int
        /// The largest input and output magnitude over the stretch.
        package var inputPeak: Float
        package var outputPeak: Float
        /// F0 of the stretch's last analysis frame, as analysed and as changed, in Hz (0: unvoiced).
        package var inputF0: Double
        package var outputF0: Double

        package init(frame: Int, inputPeak: Float, outputPeak: Float, inputF0: Double, outputF0: Double) {
            self.frame = frame
            self.inputPeak = inputPeak
            self.outputPeak = outputPeak
            self.inputF0 = inputF0
            self.outputF0 = outputF0
        }
    }

    /// Records a second: at 40 the panel's chart and meters get more than the 10 updates a second they need,
    /// whatever the block size.
    package static let recordsPerSecond = 40
    private static let fields = 5

    /// Records the ring holds: more than a reader that looks 20 times a second ever misses.
    let capacity: Int
    private let slots: UnsafeMutablePointer<Atomic<UInt64>>
    private let written = Atomic<Int>(0)

    package init(capacity: Int = 1024) {
        self.capacity = capacity
        slots = .allocate(capacity: capacity * Self.fields)
        for index in 0..<capacity * Self.fields {
            (slots + index).initialize(to: Atomic(0))
        }
    }

    deinit {
        slots.deinitialize(count: capacity * Self.fields)
        slots.deallocate()
    }

    /// Records written so far.
    package var count: Int { written.load(ordering: .acquiring) }

    /// Appends `record`; from one thread only (the audio callback's). Allocates nothing and takes no lock.
    package func write(_ record: Record) {
        let index = written.load(ordering: .relaxed)
        let slot = slots + (index % capacity) * Self.fields
        slot[0].store(UInt64(bitPattern: Int64(record.frame)), ordering: .relaxed)
        slot[1].store(UInt64(record.inputPeak.bitPattern), ordering: .relaxed)
        slot[2].store(UInt64(record.outputPeak.bitPattern), ordering: .relaxed)
        slot[3].store(record.inputF0.bitPattern, ordering: .relaxed)
        slot[4].store(record.outputF0.bitPattern, ordering: .relaxed)
        written.store(index + 1, ordering: .releasing)
    }

    /// The records written after the first `seen`, oldest first (those the ring still holds intact), and the
    /// count to pass as `seen` next time. From any thread.
    package func records(after seen: Int) -> (records: [Record], count: Int) {
        let end = written.load(ordering: .acquiring)
        let start = max(seen, end - capacity + 1, 0)
        var records: [Record] = []
        records.reserveCapacity(max(0, end - start))
        for index in start..<max(start, end) {
            let slot = slots + (index % capacity) * Self.fields
            records.append(Record(
                frame: Int(Int64(bitPattern: slot[0].load(ordering: .relaxed))),
                inputPeak: Float(bitPattern: UInt32(truncatingIfNeeded: slot[1].load(ordering: .relaxed))),
                outputPeak: Float(bitPattern: UInt32(truncatingIfNeeded: slot[2].load(ordering: .relaxed))),
                inputF0: Double(bitPattern: slot[3].load(ordering: .relaxed)),
                outputF0: Double(bitPattern: slot[4].load(ordering: .relaxed))))
        }
        // The writer may have started on the slot of record `index` once `index + capacity` was being written.
        atomicMemoryFence(ordering: .acquiring)
        let now = written.load(ordering: .relaxed)
        let torn = max(0, now - capacity + 1 - start)
        return (Array(records.dropFirst(min(torn, records.count))), end)
    }
}
