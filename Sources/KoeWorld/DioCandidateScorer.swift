extension Dio {
    /// Score given to frames without a candidate (WORLD's `kMaximumValue`).
    static let missingScore = 100_000.0
    /// Keeps divisions by a zero candidate finite (WORLD's `kMySafeGuardMinimum`).
    static let safeGuard = 1e-12

    /// Turns one band's four event frequencies into a candidate and its score.
    struct CandidateScorer {
        let boundary: Double
        let options: Options

        /// The candidate is the mean of the four event frequencies, its score their sample standard deviation
        /// relative to the candidate (lower is better); candidates outside the band or the search range, or
        /// without events, are dropped.
        func score(_ events: (Double, Double, Double, Double)?) -> (candidate: Double, score: Double) {
            guard let (a, b, c, d) = events else {
                return (0, Dio.missingScore / Dio.safeGuard)
            }
            var candidate = (a + b + c + d) / 4.0
            let squares = (a - candidate) * (a - candidate) + (b - candidate) * (b - candidate)
                + (c - candidate) * (c - candidate) + (d - candidate) * (d - candidate)
            var score = (squares / 3.0).squareRoot()
            if candidate > boundary || candidate < boundary / 2.0
                || candidate > options.f0Ceil || candidate < options.f0Floor {
                candidate = 0
                score = Dio.missingScore
            }
            return (candidate, score / (candidate + Dio.safeGuard))
        }
    }
}
