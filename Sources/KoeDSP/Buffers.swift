extension UnsafeMutableBufferPointer<Double> {
    /// `self[i] = signal[first + i]`, with indices outside `signal` taking its first or last sample, the way
    /// WORLD's analyses read past either end of a signal.
    package func copyClamped(from signal: UnsafeBufferPointer<Double>, first: Int) {
        precondition(!signal.isEmpty, "cannot read an empty signal")
        let last = signal.count - 1
        let insideStart = Swift.min(Swift.max(0, -first), count)
        let insideEnd = Swift.max(insideStart, Swift.min(count, last - first + 1))
        for i in 0..<insideStart {
            self[i] = signal[0]
        }
        if insideEnd > insideStart {
            (baseAddress! + insideStart).update(from: signal.baseAddress! + first + insideStart, count: insideEnd - insideStart)
        }
        for i in insideEnd..<count {
            self[i] = signal[last]
        }
    }
}
