import Koe
import Glibc

/// A one-line progress bar on stderr, redrawn in place at most a few times a second.
final class ProgressBar {
    private let totalFrames: Int
    private let sampleRate: Int
    private var lastDrawn = -1

    private static let width = 30

    init(totalFrames: Int, sampleRate: Int) {
        self.totalFrames = max(totalFrames, 1)
        self.sampleRate = sampleRate
    }

    func update(_ progress: ConversionProgress) {
        update(framesDone: progress.framesDone)
    }

    func update(framesDone: Int) {
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
        update(framesDone: totalFrames)
        draw("\n")
    }

    private func format(_ seconds: Double) -> String {
        String(Int(seconds * 10) / 10) + "." + String(Int(seconds * 10) % 10)
    }

    private func draw(_ text: String) {
        let bytes = Array(text.utf8)
        _ = bytes.withUnsafeBytes { Glibc.write(STDERR_FILENO, $0.baseAddress, $0.count) }
    }
}

extension ReportingOptions {
    /// A bar when asked for, or by default when stderr is a terminal; only for inputs of known length.
    func progressBar(for source: AudioSource, writingToStandardOutput: Bool) -> ProgressBar? {
        guard !quiet, let total = source.totalFrames else { return nil }
        guard progress || isatty(STDERR_FILENO) != 0 else { return nil }
        return ProgressBar(totalFrames: total, sampleRate: source.sampleRate)
    }
}
