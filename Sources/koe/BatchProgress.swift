import Dispatch
import Foundation
import Glibc
import KoeBatch
import KoeIO

/// Counts what became of a batch's inputs, draws a progress bar while it runs (files done / total, audio
/// converted, time left) and sums it up in one line at the end.
final class BatchProgress {
    private let total: Int
    private let drawsBar: Bool
    private let start = DispatchTime.now().uptimeNanoseconds
    private(set) var ok = 0
    private(set) var failed = 0
    private(set) var skipped = 0
    /// Audio converted in this run, in seconds.
    private(set) var audioSeconds = 0.0
    /// Inputs this run converts or tries to, as opposed to the ones it skips.
    private var toProcess = 0
    private var lastDrawn: UInt64 = 0

    private static let barWidth = 24
    private static let redrawNanoseconds: UInt64 = 200_000_000

    init(total: Int, drawsBar: Bool) {
        self.total = total
        self.drawsBar = drawsBar
    }

    var done: Int { ok + failed + skipped }

    private var elapsedSeconds: Double { Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9 }

    /// Sets how many inputs this run will try to convert once it knows which it skips.
    func expect(toProcess count: Int) {
        toProcess = count
    }

    func count(_ record: BatchRecord) {
        switch record.status {
        case .ok:
            ok += 1
            audioSeconds += record.audioSeconds ?? 0
        case .failed: failed += 1
        case .skipped: skipped += 1
        }
        redraw(force: done == total)
    }

    /// Redraws the bar if it is due (or `force`d): a few times a second at most.
    func redraw(force: Bool = false) {
        guard drawsBar else { return }
        let now = DispatchTime.now().uptimeNanoseconds
        guard force || now - lastDrawn >= Self.redrawNanoseconds else { return }
        lastDrawn = now
        let filled = total == 0 ? Self.barWidth : done * Self.barWidth / total
        let bar = String(repeating: "#", count: filled) + String(repeating: " ", count: Self.barWidth - filled)
        var line = "\r[\(bar)] \(done)/\(total) files, \(Self.duration(audioSeconds)) of audio"
        if let remaining = remainingSeconds() { line += ", about \(Self.duration(remaining)) left" }
        Self.write(line + "\u{1B}[K")
    }

    /// Ends the bar's line (drawn full by the last count), so what follows starts on a line of its own.
    func finishBar() {
        guard drawsBar && total > 0 else { return }
        Self.write("\n")
    }

    /// From the pace so far of the inputs this run processes.
    private func remainingSeconds() -> Double? {
        let processed = ok + failed
        let left = toProcess - processed
        guard processed > 0, left > 0 else { return nil }
        return elapsedSeconds / Double(processed) * Double(left)
    }

    /// The whole run in one line: counts, audio, time and real-time factor (wall clock / audio).
    func summary(manifest: String) -> String {
        let elapsed = elapsedSeconds
        var line = "\(ok) ok, \(failed) failed, \(skipped) skipped of \(total) inputs"
        line += "; \(Self.duration(audioSeconds)) of audio in \(Self.duration(elapsed))"
        if audioSeconds > 0 { line += " (real-time factor \(String(format: "%.3f", elapsed / audioSeconds)))" }
        if failed > 0 { line += "; reasons in \(manifest)" }
        return line
    }

    /// The same as one JSON object.
    func jsonSummary(manifest: String) -> String {
        let elapsed = elapsedSeconds
        let object: [String: Any] = [
            "inputs": total, "ok": ok, "failed": failed, "skipped": skipped, "audio_seconds": audioSeconds,
            "elapsed_seconds": elapsed, "real_time_factor": audioSeconds > 0 ? elapsed / audioSeconds : 0, "manifest": manifest,
        ]
        return jsonLine(object, escapingSlashes: false)
    }

    /// "1 h 02 min", "3 min 05 s", "4.2 s".
    static func duration(_ seconds: Double) -> String {
        let whole = Int(seconds.rounded())
        if whole >= 3600 { return "\(whole / 3600) h " + String(format: "%02d", whole % 3600 / 60) + " min" }
        if whole >= 60 { return "\(whole / 60) min " + String(format: "%02d", whole % 60) + " s" }
        return String(format: "%.1f", seconds) + " s"
    }

    private static func write(_ text: String) {
        try? Descriptors.writeAll(Array(text.utf8), to: STDERR_FILENO)
    }
}
