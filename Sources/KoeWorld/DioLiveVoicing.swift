import Glibc

extension Dio {
    /// Live mode's voicing: DIO's decision over the look-ahead window, held through the frames it leaves unvoiced
    /// while a voice runs, and a clearly periodic frame voiced where DIO's window cannot tell.
    ///
    /// Whole-signal DIO fills a run's weak frames by extending it backwards from a start up to 200 ms later; no
    /// causal window sees that far, so live DIO left a deep voice's creak and a run's weaker middle unvoiced,
    /// heard as a whisper. Here, frame by frame, in order:
    /// 1. a frame DIO voices stays voiced at DIO's F0, unless it would start a run on input that is not even
    ///    weakly periodic while the run has no credit (DIO also voices stretches of background noise), or it jumps
    ///    beyond the allowed range of a running voice's F0 while a band still offers a candidate near that F0 at
    ///    which the input is clearly periodic (or, while the run has credit, at least as periodic as at DIO's):
    ///    the run then goes on there as in step 2. Whole-signal DIO's repair drops such a jump and extends the run
    ///    over it; the window, which does not reach back to the run, would follow a harmonic or a subharmonic;
    /// 2. a frame after a voiced one continues the run at the band candidate nearest the last F0, within DIO's
    ///    allowed range, if the input is clearly periodic there or the run still has credit; the run follows that
    ///    candidate, and the frame's F0 is the steadiest (lowest score) of the candidates within the allowed range
    ///    of it, as DIO itself prefers among bands that agree (the nearest is often a weaker band's, off by 1-3 %);
    /// 3. failing that, the run holds the last F0 if the input is clearly periodic at it;
    /// 4. a frame after an unvoiced one starts a run at DIO's best candidate if that is steady (a low score) and
    ///    the input clearly periodic at it; or resumes one, while the last run's credit lasts, if the input is
    ///    fairly periodic at it and the look-ahead's next frames carry on from it (a deep voice's run that broke
    ///    off where DIO's window lost it, or at an octave error, would otherwise wait for a clearly periodic frame,
    ///    and its weaker middle was heard as a whisper).
    /// Whatever these decide, and in the margins too, a frame whose input is silent (its largest sample below
    /// `silence` of the voice's recent peak, after Praat's silence threshold) is unvoiced: DIO and the correlation
    /// are blind to level, and voiced a voice's fading tail and a periodic hum in the pauses. The decision itself
    /// runs on as if the frame were not silent, so a run kept through quiet creak still carries on where the
    /// voice grows louder.
    /// Periodicity is `Periodicity`'s correlation at the F0, from the samples the frame's look-ahead brought.
    /// Credit is the hysteresis: a clearly periodic frame gives the run `creditFrames`, a frame DIO voices on weakly
    /// periodic input at least half that, and each frame on less spends one, as does each unvoiced frame. A run
    /// thus carries on through creak (weakly periodic periods that DIO's bands still follow) for a while after its
    /// last clear frame, and stops where the bands stop following it. WORLD's margins at either end of the signal
    /// stay as DIO has them. The thresholds were chosen on speech (`make bench-live`).
    struct LiveVoicing {
        /// Correlation at or above which the input is clearly periodic (YIN's 0.15 threshold, as 1 - 0.15).
        static let clearlyPeriodic = 0.85
        /// Correlation below which the input is not even weakly periodic.
        static let weaklyPeriodic = 0.4
        /// Frames of credit a clearly periodic frame gives a run: 40 ms, three periods of an 80 Hz voice.
        static let creditFrames = 8
        /// Highest DIO score (the relative spread of a band's four event frequencies) a run may start at.
        static let steadyScore = 0.1
        /// Correlation at or above which the input is fairly periodic: enough to resume a run that the look-ahead
        /// confirms.
        static let fairlyPeriodic = 0.6
        /// Frames after the one decided that must carry a steady candidate near its F0 to confirm it: 25 ms.
        static let confirmingFrames = 5

        /// Share of the voice's recent peak below which a frame's peak is silence: -40 dB. Praat takes -30 dB of
        /// the whole signal's peak; at -30 dB a deep voice's quiet creak, which DIO follows, was cut into holes.
        static let silence = 0.01
        /// Seconds over which the recent peak falls by 20 dB once the voice stops, so that a voice that grows
        /// quieter (moving off the microphone) is heard again.
        static let peakFallTime = 10.0
        /// Half the span around a frame's centre whose largest sample is the frame's peak: 12.5 ms.
        static let peakHalfSpan = 0.0125

        let allowedRange: Double
        /// Frames unvoiced at either end of the signal, as in DIO's contour repair.
        let margin: Int
        /// What the recent peak keeps of itself from one frame to the next.
        private let peakDecay: Double
        private var last = 0.0
        private var credit = 0
        private var recentPeak = 0.0

        init(options: Options, margin: Int) {
            allowedRange = options.allowedRange
            self.margin = margin
            peakDecay = pow(0.1, options.framePeriod / 1000 / Self.peakFallTime)
        }

        /// The F0 of `frame` (0: unvoiced), given DIO's (`dio`), the frame's candidates and scores (one a band),
        /// the input's largest magnitude around the frame (`peak`) and its correlation there at an F0
        /// (`Periodicity`), and, once the signal has ended, its frame count.
        mutating func decide(
            frame: Int, dio: Double, candidates: UnsafeBufferPointer<Double>, scores: UnsafeBufferPointer<Double>,
            ahead: Ahead, peak: Double, frameCount: Int?, periodicity: (Double) -> Double
        ) -> Double {
            recentPeak = max(peak, recentPeak * peakDecay)
            let inMargin = frame < margin || frameCount.map { frame >= $0 - margin } ?? false
            let (f0, followed) = inMargin
                ? (dio, dio)
                : decided(dio: dio, candidates: candidates, scores: scores, ahead: ahead, periodicity: periodicity)
            if f0 == 0 {
                credit = max(0, credit - 1)
            }
            last = followed
            return peak < Self.silence * recentPeak ? 0 : f0
        }

        /// The frame's F0, and the F0 the run follows from it (the same but in step 2).
        private mutating func decided(
            dio: Double, candidates: UnsafeBufferPointer<Double>, scores: UnsafeBufferPointer<Double>, ahead: Ahead,
            periodicity: (Double) -> Double
        ) -> (f0: Double, followed: Double) {
            if dio > 0 {
                let correlation = periodicity(dio)
                if last > 0, abs(dio / last - 1) > allowedRange, let next = nearest(to: last, in: candidates) {
                    let continued = periodicity(next)
                    if continued >= Self.clearlyPeriodic || credit > 0 && continued >= correlation {
                        weigh(continued)
                        return (steadiest(near: next, in: candidates, scores: scores), next)
                    }
                }
                guard last > 0 || credit > 0 || correlation >= Self.weaklyPeriodic else { return (0, 0) }
                weigh(correlation)
                if correlation >= Self.weaklyPeriodic {
                    credit = max(credit, Self.creditFrames / 2)
                }
                return (dio, dio)
            }
            if last > 0 {
                if let next = nearest(to: last, in: candidates) {
                    let correlation = periodicity(next)
                    if correlation >= Self.clearlyPeriodic || credit > 0 {
                        weigh(correlation)
                        return (steadiest(near: next, in: candidates, scores: scores), next)
                    }
                }
                let held = periodicity(last) >= Self.clearlyPeriodic ? last : 0
                return (held, held)
            }
            var best = 0
            for band in 1..<candidates.count where scores[band] < scores[best] {
                best = band
            }
            guard candidates[best] > 0, scores[best] <= Self.steadyScore else { return (0, 0) }
            let correlation = periodicity(candidates[best])
            if correlation >= Self.clearlyPeriodic {
                credit = Self.creditFrames
            } else if credit > 0, correlation >= Self.fairlyPeriodic,
                      ahead.isSteady(near: candidates[best], within: allowedRange) {
                credit = Self.creditFrames / 2
            } else {
                return (0, 0)
            }
            return (candidates[best], candidates[best])
        }

        /// The candidates and scores of the frames after the one decided, as far as the look-ahead reveals them
        /// (a band a cell, row after row).
        struct Ahead {
            let candidates: UnsafeBufferPointer<Double>
            let scores: UnsafeBufferPointer<Double>
            let bands: Int

            /// Whether each of the next `confirmingFrames` frames has a steady candidate within `range` of the one
            /// before, starting from `f0`: the voice goes on past the frame.
            func isSteady(near f0: Double, within range: Double) -> Bool {
                guard bands > 0, candidates.count >= LiveVoicing.confirmingFrames * bands else { return false }
                var followed = f0
                for row in 0..<LiveVoicing.confirmingFrames {
                    var next = 0.0
                    for cell in (row * bands)..<((row + 1) * bands)
                    where candidates[cell] > 0 && scores[cell] <= LiveVoicing.steadyScore
                        && abs(candidates[cell] / followed - 1) <= range
                        && abs(candidates[cell] - followed) < abs(next - followed) {
                        next = candidates[cell]
                    }
                    guard next > 0 else { return false }
                    followed = next
                }
                return true
            }
        }

        /// Renews the credit on a clearly periodic frame; spends a frame of it on one not even weakly periodic.
        private mutating func weigh(_ correlation: Double) {
            if correlation >= Self.clearlyPeriodic {
                credit = Self.creditFrames
            } else if correlation < Self.weaklyPeriodic {
                credit = max(0, credit - 1)
            }
        }

        /// The candidate with the lowest score within the allowed range of `f0`, itself a candidate.
        private func steadiest(
            near f0: Double, in candidates: UnsafeBufferPointer<Double>, scores: UnsafeBufferPointer<Double>
        ) -> Double {
            var steadiest = f0
            var lowest = Double.infinity
            for band in candidates.indices
            where candidates[band] > 0 && abs(candidates[band] / f0 - 1) <= allowedRange && scores[band] < lowest {
                lowest = scores[band]
                steadiest = candidates[band]
            }
            return steadiest
        }

        /// The candidate nearest `f0`, if within the allowed range of it.
        private func nearest(to f0: Double, in candidates: UnsafeBufferPointer<Double>) -> Double? {
            var nearest = 0.0
            for candidate in candidates where candidate > 0 && abs(candidate - f0) < abs(nearest - f0) {
                nearest = candidate
            }
            return nearest > 0 && abs(nearest / f0 - 1) <= allowedRange ? nearest : nil
        }
    }
}
