import Foundation

public struct BenchError: Error, CustomStringConvertible {
    public let description: String

    public init(_ description: String) {
        self.description = description
    }
}

/// The file at `rate`, mono, as sox resamples it (float64). A `.raw` file is codec2-examples' kind: 8 kHz signed
/// 16-bit mono, which a raw file cannot say itself.
public func read(_ path: String, rate: Int) throws -> [Double] {
    let sox = Process()
    sox.executableURL = URL(fileURLWithPath: "/usr/bin/env")
    let format = path.hasSuffix(".raw") ? ["-t", "raw", "-r", "8000", "-e", "signed", "-b", "16", "-c", "1"] : []
    sox.arguments = ["sox"] + format + [path, "-t", "raw", "-e", "floating-point", "-b", "64", "-c", "1", "-r", "\(rate)", "-"]
    let pipe = Pipe()
    sox.standardOutput = pipe
    try sox.run()
    let data = pipe.fileHandleForReading.readDataToEndOfFile()
    sox.waitUntilExit()
    guard sox.terminationStatus == 0 else {
        throw BenchError("sox could not read \(path)")
    }
    return data.withUnsafeBytes { Array($0.bindMemory(to: Double.self)) }
}

/// The file's name without folder or extension.
public func stem(_ path: String) -> String {
    URL(fileURLWithPath: path).deletingPathExtension().lastPathComponent
}

/// The `p`th percentile (0 to 100) of `values`, the nearest rank; NaN for none.
public func percentile(_ values: [Double], _ p: Double) -> Double {
    guard !values.isEmpty else { return .nan }
    let sorted = values.sorted()
    return sorted[min(sorted.count - 1, Int((p / 100 * Double(sorted.count - 1)).rounded()))]
}
