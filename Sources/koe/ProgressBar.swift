import Koe
import KoeIO
import Glibc

/// A one-line progress bar on stderr, redrawn in place at most a few times a second.
final class ProgressBar {
    /// Known from the first update; an input of unknown length (a stream) draws no bar.
    private var totalFrames: Int?
    private var sampleRate = 1
    private var lastDrawn = -1

    private static let width = 30

    func update(_ progress: ConversionProgress) {
        if totalFrames == nil, let total = progress.totalFrames {
            totalFrames = max(total, 1)
            sampleRate = progress.sampleRate
        }
        update(framesDone: progress.framesDone)
    }

    func update(framesDone: Int) {
        guard let totalFrames else { return }
        let permille = min(1000, framesDone * 1000 / totalFrames)
        guard permille != lastDrawn else { return }
        lastDrawn = permille
        let filled = permille * ProgressBar.width / 1000
        let bar = String(repeating: "#", count: filled) + String(repeating: " ", count: ProgressBar.width - filled)
        let done = Double(framesDone) / Double(sampleRate)
        let total = Double(totalFrames) / Double(sampleRate)
        draw("\r[\(bar)] \(permille / 10)% \(format(done))/\(format(total)) s")
    }

    func finish() {
        guard let totalFrames else { return }
        update(framesDone: totalFrames)
        draw("\n")
    }

    private func format(_ seconds: Double) -> String {
        String(Int(seconds * 10) / 10) + "." + String(Int(seconds * 10) % 10)
    }

    private func draw(_ text: String) {
        try? Descriptors.writeAll(Array(text.utf8), to: STDERR_FILENO)
    }
}

extension ReportingOptions {
    /// A bar when asked for, or by default when stderr is a terminal; it draws only for inputs of known length.
    func progressBar() -> ProgressBar? {
        guard !quiet, progress || isatty(STDERR_FILENO) != 0 else { return nil }
        return ProgressBar()
    }
}
