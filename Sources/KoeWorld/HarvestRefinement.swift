import Glibc
import KoeDSP

extension Harvest {
    /// Re-estimates each candidate from the instantaneous frequencies of its first harmonics, measured with a
    /// Blackman window three periods long and its derivative; scores it by how well the harmonics agree.
    final class InstantaneousFrequencyRefiner {
        private let signal: [Double]
        private let sampleRate: Double
        private let f0Floor: Double
        private let f0Ceil: Double
        private let twiddles = SingleBinDFT()
        /// One window a length, made when first needed.
        private var windows: [RefinementWindow?]
        /// `fftSize(half:)` for every half length of window up to the longest.
        private var fftSizes: [Int]
        private var windowedSamples: UnsafeMutableBufferPointer<Double>
        /// The signal under the main window and under its derivative, side by side, sample by sample.
        private var windowedPairs: UnsafeMutableBufferPointer<SIMD2<Double>>
        /// Length of the window now applied in `windowedPairs`, at the current frame; 0 for none yet.
        private var windowedLength = 0
        private var frame = 0
        /// Bins summed lately, in slots hashed from window length and bin; a slot keeps its latest. A frame's
        /// candidates come from it and its neighbours, so many share a window length and several harmonic bins,
        /// and a bin summed again would come out the same.
        private let summedBins: UnsafeMutableBufferPointer<SummedBin>
        private let harmonicBins: UnsafeMutableBufferPointer<Int>
        private let harmonicSpectra: UnsafeMutableBufferPointer<BinSpectra>
        /// The harmonics whose bins still need summing, their bins, and the sums.
        private let missingHarmonics: UnsafeMutableBufferPointer<Int>
        private let missingBins: UnsafeMutableBufferPointer<Int>
        private let missingSpectra: UnsafeMutableBufferPointer<BinSpectra>

        init(signal: DecimatedSignal, f0Floor: Double, f0Ceil: Double) {
            self.signal = signal.samples
            sampleRate = signal.sampleRate
            self.f0Floor = f0Floor
            self.f0Ceil = f0Ceil
            let longest = 2 * Int(1.5 * sampleRate / f0Floor + 1.0) + 1
            windows = Array(repeating: nil, count: longest + 1)
            fftSizes = (0...(longest / 2)).map(Self.fftSize(half:))
            summedBins = .allocate(capacity: 1 << 11)
            summedBins.initialize(repeating: SummedBin())
            windowedSamples = .allocate(capacity: longest)
            windowedPairs = .allocate(capacity: longest)
            harmonicBins = .allocate(capacity: Tuning.maximumHarmonics)
            harmonicSpectra = .allocate(capacity: Tuning.maximumHarmonics)
            missingHarmonics = .allocate(capacity: Tuning.maximumHarmonics)
            missingBins = .allocate(capacity: Tuning.maximumHarmonics)
            missingSpectra = .allocate(capacity: Tuning.maximumHarmonics)
        }

        deinit {
            windowedSamples.deallocate()
            windowedPairs.deallocate()
            summedBins.deallocate()
            harmonicBins.deallocate()
            harmonicSpectra.deallocate()
            missingHarmonics.deallocate()
            missingBins.deallocate()
            missingSpectra.deallocate()
        }

        /// Refines every candidate in place (0 where it fails) and returns their scores. Frames are shared among
        /// up to `threads` threads, each with a refiner of its own; the result is the same for any number.
        static func refine(
            _ candidates: inout Matrix, signal: DecimatedSignal, frameTimes: [Double], f0Floor: Double, f0Ceil: Double,
            threads: Int
        ) -> Matrix {
            let refiners = WorkspacePool(shared: threads > 1) {
                InstantaneousFrequencyRefiner(signal: signal, f0Floor: f0Floor, f0Ceil: f0Ceil)
            }
            var scores = Matrix.zeros(rows: candidates.rows, columns: candidates.columns)
            let columns = candidates.columns
            candidates.storage.withUnsafeMutableBufferPointer { candidates in
                scores.storage.withUnsafeMutableBufferPointer { scores in
                    Parallel.forEachRange(frameTimes.count, threads: threads, minimumLength: 16) { frames in
                        refiners.withWorkspace {
                            $0.refine(frames, of: candidates, scores: scores, columns: columns, times: frameTimes)
                        }
                    }
                }
            }
            return scores
        }

        private func refine(
            _ frames: Range<Int>, of candidates: UnsafeMutableBufferPointer<Double>,
            scores: UnsafeMutableBufferPointer<Double>, columns: Int, times frameTimes: [Double]
        ) {
            for frame in frames {
                self.frame = frame
                windowedLength = 0
                for index in (frame * columns)..<((frame + 1) * columns) {
                    (candidates[index], scores[index]) = refine(candidates[index], at: frameTimes[frame])
                }
            }
        }

        private func refine(_ f0: Double, at position: Double) -> (f0: Double, score: Double) {
            guard f0 > 0 else { return (0, 0) }
            let half = Int(1.5 * sampleRate / f0 + 1.0)
            let length = 2 * half + 1
            ensureCapacity(length)
            let fftSize = fftSizes[half]
            if length != windowedLength {
                applyWindow(length: length, half: half, position: position)
            }
            let (refined, score) = harmonicEstimate(length: length, fftSize: fftSize, f0: f0)
            if refined < f0Floor || refined > f0Ceil || score < Tuning.minimumScore {
                return (0, 0)
            }
            return (refined, score)
        }

        private func ensureCapacity(_ length: Int) {
            guard length > windowedPairs.count else { return }
            windowedSamples.deallocate()
            windowedPairs.deallocate()
            windowedSamples = .allocate(capacity: length)
            windowedPairs = .allocate(capacity: length)
            windows += Array(repeating: nil, count: length + 1 - windows.count)
            fftSizes += (fftSizes.count...(length / 2)).map(Self.fftSize(half:))
        }

        /// The DFT size WORLD takes for a window of 2 `half` + 1 samples: a power of two, two to four times longer.
        private static func fftSize(half: Int) -> Int {
            Int(pow(2.0, 2.0 + Double(Int(log(Double(half) * 2.0 + 1.0) / Tuning.log2))))
        }

        /// Windows the signal around `position` with the window of `length` = 2 `half` + 1 samples.
        private func applyWindow(length: Int, half: Int, position: Double) {
            let firstIndex = Matlab.round((position + Double(-half) / sampleRate) * sampleRate + 0.001)
            // Phase 2π t / duration at t = (firstIndex - 1) / fs - position, with duration = length / fs.
            let duration = Double(length) / sampleRate
            let firstTime = (Double(firstIndex) - 1.0) / sampleRate - position
            let window = window(length: length)
            window.place(startPhase: 2.0 * Double.pi * firstTime / duration)
            applyWindow(window, firstIndex: firstIndex)
            windowedLength = length
        }

        private func window(length: Int) -> RefinementWindow {
            if let window = windows[length] { return window }
            let window = RefinementWindow(length: length)
            windows[length] = window
            return window
        }

        /// The signal over samples `firstIndex ..< firstIndex + length` (one-based) under both windows, as pairs;
        /// samples beyond the ends repeat the end samples.
        private func applyWindow(_ window: RefinementWindow, firstIndex: Int) {
            let length = window.length
            signal.withUnsafeBufferPointer { x in
                let first = firstIndex - 1
                let samples: UnsafeBufferPointer<Double>
                if first >= 0 && first + length <= x.count {
                    // Most windows lie inside the signal and need no clamped copy.
                    samples = UnsafeBufferPointer(rebasing: x[first..<(first + length)])
                } else {
                    let clamped = UnsafeMutableBufferPointer(rebasing: windowedSamples[0..<length])
                    clamped.copyClamped(from: x, first: first)
                    samples = UnsafeBufferPointer(clamped)
                }
                for i in 0..<length {
                    windowedPairs[i] = window.pairs[i] * samples[i]
                }
            }
        }

        /// Amplitude-weighted mean of the harmonics' instantaneous frequencies divided by their numbers, and a
        /// score that is the inverse of their mean relative disagreement with `f0`. Only the harmonics' bins of the
        /// windowed signals' `fftSize`-point spectra are needed, so they are summed directly.
        private func harmonicEstimate(length: Int, fftSize: Int, f0: Double) -> (f0: Double, score: Double) {
            let size = Double(fftSize)
            let harmonics = min(Int(sampleRate / 2.0 / f0), Tuning.maximumHarmonics)
            for harmonic in 0..<harmonics {
                harmonicBins[harmonic] = Matlab.round(f0 * size / sampleRate * (Double(harmonic) + 1.0))
            }
            sumHarmonicBins(harmonics, length: length, fftSize: fftSize)
            // Each harmonic's frequency, amplitude and disagreement side by side in lanes (a harmonic a lane,
            // the operations of one harmonic at a time), then summed in harmonic order.
            var bins = SIMD8<Double>(repeating: 0)
            var mainReal = SIMD8<Double>(repeating: 0)
            var mainImag = SIMD8<Double>(repeating: 0)
            var derivativeReal = SIMD8<Double>(repeating: 0)
            var derivativeImag = SIMD8<Double>(repeating: 0)
            for harmonic in 0..<harmonics {
                let (main, derivative) = harmonicSpectra[harmonic]
                bins[harmonic] = Double(harmonicBins[harmonic])
                mainReal[harmonic] = main.real
                mainImag[harmonic] = main.imag
                derivativeReal[harmonic] = derivative.real
                derivativeImag[harmonic] = derivative.imag
            }
            let numbers = SIMD8<Double>(1, 2, 3, 4, 5, 6, 7, 8)
            let power = mainReal * mainReal + mainImag * mainImag
            let phaseRate = mainReal * derivativeImag - mainImag * derivativeReal
            let frequency = (bins * sampleRate / size + phaseRate / power * sampleRate / 2.0 / Double.pi)
                .replacing(with: 0, where: power .== 0)
            let amplitude = power.squareRoot()
            let weighted = amplitude * frequency
            let weights = amplitude * numbers
            let disagreements = (frequency / numbers - f0) / f0
            var numerator = 0.0
            var denominator = 0.0
            var disagreement = 0.0
            for harmonic in 0..<harmonics {
                numerator += weighted[harmonic]
                denominator += weights[harmonic]
                disagreement += abs(disagreements[harmonic])
            }
            let refined = numerator / (denominator + Tuning.safeGuard)
            let score = 1.0 / (disagreement / Double(harmonics) + Tuning.safeGuard)
            return (refined, score)
        }

        /// The spectra at `harmonicBins` into `harmonicSpectra`: those this frame already has copied,
        /// the others summed together and kept for the frame's other candidates.
        private func sumHarmonicBins(_ harmonics: Int, length: Int, fftSize: Int) {
            var missing = 0
            for harmonic in 0..<harmonics {
                let bin = harmonicBins[harmonic]
                if let known = summedBin(length: length, bin: bin) {
                    harmonicSpectra[harmonic] = known
                } else {
                    missingHarmonics[missing] = harmonic
                    missingBins[missing] = bin
                    missing += 1
                }
            }
            guard missing > 0 else { return }
            twiddles.bins(
                UnsafeBufferPointer(rebasing: missingBins[0..<missing]), size: fftSize,
                of: UnsafeBufferPointer(rebasing: windowedPairs[0..<length]), into: missingSpectra)
            for k in 0..<missing {
                harmonicSpectra[missingHarmonics[k]] = missingSpectra[k]
                summedBins[slot(length: length, bin: missingBins[k])] = SummedBin(
                    frame: frame, length: length, bin: missingBins[k], spectra: missingSpectra[k])
            }
        }

        private func summedBin(length: Int, bin: Int) -> BinSpectra? {
            let summed = summedBins[slot(length: length, bin: bin)]
            return summed.frame == frame && summed.length == length && summed.bin == bin ? summed.spectra : nil
        }

        @inline(__always)
        private func slot(length: Int, bin: Int) -> Int {
            (bin &* 31 &+ length &* 977) & (summedBins.count - 1)
        }
    }

    /// One bin of the spectra of the signal under the main window and under its derivative.
    typealias BinSpectra = (main: Complex, derivative: Complex)

    /// A bin's sums at one frame, for the window of one length.
    private struct SummedBin {
        var frame = -1
        var length = 0
        var bin = 0
        var spectra: BinSpectra = (.zero, .zero)
    }

    /// A Blackman window of one length and its central-difference derivative (negated, as WORLD takes it), as
    /// (main, derivative) pairs. The window's phase steps by 2π / length a sample from a start phase that
    /// depends only on rounding in the frame's position, so the few start phases recur: the window is remade
    /// only when the phase differs from the last one.
    private final class RefinementWindow {
        let length: Int
        let pairs: UnsafeMutableBufferPointer<SIMD2<Double>>
        private let progression: Trigonometry.Progression
        private let main: UnsafeMutableBufferPointer<Double>
        private var startPhase: Double?

        init(length: Int) {
            precondition(length >= 3, "a refinement window spans at least three samples")
            self.length = length
            progression = Trigonometry.Progression(step: 2.0 * Double.pi / Double(length), count: length)
            pairs = .allocate(capacity: length)
            main = .allocate(capacity: length)
        }

        deinit {
            pairs.deallocate()
            main.deallocate()
        }

        func place(startPhase: Double) {
            guard startPhase.bitPattern != self.startPhase?.bitPattern else { return }
            self.startPhase = startPhase
            progression.cosines(start: startPhase, into: main)
            for i in 0..<length {
                let cosine = main[i]
                main[i] = 0.42 + 0.5 * cosine + 0.08 * (2.0 * cosine * cosine - 1.0)
            }
            pairs[0] = SIMD2(main[0], -main[1] / 2.0)
            for i in 1..<(length - 1) {
                pairs[i] = SIMD2(main[i], -(main[i + 1] - main[i - 1]) / 2.0)
            }
            pairs[length - 1] = SIMD2(main[length - 1], main[length - 2] / 2.0)
        }
    }
}
