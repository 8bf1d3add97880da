import KoeLive
import Synchronization
import Testing

/// The ring the audio thread writes and the panel's threads read without a lock.
@Suite struct LiveTelemetryTests {
    private func record(_ index: Int) -> LiveTelemetry.Record {
        LiveTelemetry.Record(
            frame: index * 480, inputPeak: Float(index % 100) / 100, outputPeak: Float(index % 50) / 50,
            inputF0: Double(index), outputF0: Double(index) * 1.5)
    }

    @Test func aReaderGetsWhatItHasNotSeenInOrder() {
        let ring = LiveTelemetry(capacity: 16)
        for index in 0..<5 { ring.write(record(index)) }
        let (first, count) = ring.records(after: 0)
        #expect(first == (0..<5).map(record) && count == 5)
        for index in 5..<8 { ring.write(record(index)) }
        let (next, total) = ring.records(after: count)
        #expect(next == (5..<8).map(record) && total == 8)
        #expect(ring.records(after: total).records.isEmpty)
    }

    /// A reader that fell behind by more than the ring gets the newest it still holds whole.
    @Test func aSlowReaderGetsTheNewest() {
        let ring = LiveTelemetry(capacity: 16)
        for index in 0..<40 { ring.write(record(index)) }
        let (records, count) = ring.records(after: 3)
        #expect(records == (25..<40).map(record) && count == 40)
    }

    /// A writer on its own thread and a reader at once: every record read is whole (its fields agree) and they
    /// come in order, none twice.
    @Test func readsWhileWritingAreNeverTorn() async {
        let ring = LiveTelemetry(capacity: 64)
        let total = 200_000
        let writer = Task.detached {
            for index in 0..<total { ring.write(self.record(index)) }
        }
        var seen = 0
        var last = -1
        var read = 0
        while seen < total {
            let (records, count) = ring.records(after: seen)
            for record in records {
                let index = record.frame / 480
                #expect(record == self.record(index) && index > last, "record \(index) after \(last)")
                last = index
                read += 1
            }
            seen = count
            await Task.yield()
        }
        await writer.value
        #expect(last == total - 1 && read > 0)
    }
}
