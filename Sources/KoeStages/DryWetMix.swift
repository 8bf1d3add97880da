/// Mixes a stream's own input back in for the output of a stage before it that keeps time (output sample n is
/// input sample n, later): all wet, all dry, or crossfading between them. A live changer whose voice changes
/// nothing passes its input through, as a conversion leaves the vocoder out of such a chain, instead of WORLD's
/// resynthesis of it; a change into or out of that crossfades over `glideSamples`, so it never clicks.
///
/// Fully wet or fully dry, a sample is the wet or the dry one exactly. Feed each block's input with `feedDry`
/// before running it through the stages, so every wet sample finds its dry one.
package final class DryWetMix: InPlaceStage {
    /// The input not yet matched by a wet sample, from `dryStart` on.
    private var dry: [Double] = []
    private var dryStart = 0
    /// Input samples fed, and output samples mixed, since the stream began.
    private var fed = 0
    private var mixed = 0
    private let glideSamples: Int
    /// The share of the wet sample in the output now, and where it is going.
    private var wet: Double
    private var step = 0.0
    private var rampLeft = 0
    /// A change waiting for the output to reach the input sample it was made at.
    private var pending: (at: Int, wet: Bool)?

    package init(wet: Bool, glideSamples: Int) {
        self.wet = wet ? 1 : 0
        self.glideSamples = max(1, glideSamples)
    }

    /// Makes the output wet or dry from the sample matching the next input sample on, crossfading there or
    /// switching at once.
    package func set(wet: Bool, gliding: Bool = true) {
        guard gliding else {
            self.wet = wet ? 1 : 0
            rampLeft = 0
            pending = nil
            return
        }
        pending = (at: fed, wet: wet)
    }

    /// Makes room for the dry samples of `heldSamples` fed and not yet mixed, the block being fed included:
    /// feeding then allocates nothing while no more are held. The samples already mixed that `dry` still holds
    /// are fewer than those, so it needs twice the room.
    package func reserveCapacity(heldSamples: Int) {
        dry.reserveCapacity(2 * heldSamples)
    }

    package func feedDry(_ samples: UnsafeBufferPointer<Double>) {
        if dryStart > 0, dryStart >= dry.count / 2 {
            dry.removeSubrange(0..<dryStart)
            dryStart = 0
        }
        dry.append(contentsOf: samples)
        fed += samples.count
    }

    /// Forgets the input fed; the output is wet or dry as the last change asked, with no crossfade under way.
    package func reset() {
        if let change = pending {
            wet = change.wet ? 1 : 0
        } else if rampLeft > 0 {
            wet = step > 0 ? 1 : 0
        }
        pending = nil
        rampLeft = 0
        step = 0
        dry.removeAll(keepingCapacity: true)
        dryStart = 0
        fed = 0
        mixed = 0
    }

    package func apply(_ samples: UnsafeMutableBufferPointer<Double>) {
        // Wet with nothing to come: the vocoder's samples stand, only the positions move.
        if pending == nil, rampLeft == 0, wet == 1 {
            dryStart += samples.count
            mixed += samples.count
            return
        }
        for index in samples.indices {
            if let change = pending, mixed >= change.at {
                pending = nil
                let target = change.wet ? 1.0 : 0.0
                step = (target - wet) / Double(glideSamples)
                rampLeft = target == wet ? 0 : glideSamples
            }
            if rampLeft > 0 {
                rampLeft -= 1
                wet = rampLeft == 0 ? (step > 0 ? 1 : 0) : wet + step
            }
            let drySample = dryStart < dry.count ? dry[dryStart] : 0
            dryStart += 1
            mixed += 1
            if wet == 0 {
                samples[index] = drySample
            } else if wet < 1 {
                samples[index] = wet * samples[index] + (1 - wet) * drySample
            }
        }
    }
}
