import KoeStages

/// Stops the run with `message` when `condition` fails, in every build configuration.
private func require(_ condition: Bool, _ message: @autoclosure () -> String) {
    if !condition { fatalError(message()) }
}

/// Sample rates koe reads, from the vocoder's lowest to past its highest.
private let sampleRates = [8000, 11025, 16000, 22050, 44100, 48000, 96000, 192_000, 384_000, 1]

/// A click then a full-scale square wave: every filter a user can build must keep this finite.
private let probe: [Double] = [1] + (1..<512).map { ($0 / 16) % 2 == 0 ? 1 : -1 }

/// Gains up to this (dB, either way) are far past any real equalizer, yet their filters must stay finite.
/// Beyond it the gain's amplitude overflows at about 12 330 dB; KoeStages accepts such gains (reported),
/// so they are left out here to let the fuzzer look further.
private let largestCheckedGain = 1000.0

/// Builds the equalizer for `bands` when the bands fit `sampleRate`, runs the probe through it and checks
/// the output is finite; a refusal must come with a message.
private func runEqualizer(_ bands: [EqualizerBand], sampleRate: Int, spec: String) {
    do {
        guard let equalizer = try Equalizer.make(bands: bands, sampleRate: sampleRate) else { return }
        var output: [Double] = []
        equalizer.process(probe, into: &output)
        require(output.count == probe.count, "'\(spec)' at \(sampleRate) Hz changed the length")
        if bands.allSatisfy({ abs($0.gainDB) <= largestCheckedGain }) {
            require(output.allSatisfy(\.isFinite), "'\(spec)' at \(sampleRate) Hz turned a full-scale signal into NaN or infinity")
        }
    } catch {
        require(!error.description.isEmpty, "'\(spec)' refused without a message")
    }
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzEqualizerSpec(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    guard size > 0 else { return 0 }
    let sampleRate = sampleRates[Int(data[0]) % sampleRates.count]
    let spec = String(decoding: UnsafeBufferPointer(start: data + 1, count: size - 1), as: UTF8.self)

    if let band = try? EqualizerBand(parsing: spec) {
        let printed = band.description
        do {
            let reparsed = try EqualizerBand(parsing: printed)
            require(reparsed == band, "'\(spec)' printed as '\(printed)' reads back as '\(reparsed)'")
        } catch {
            fatalError("'\(spec)' printed as '\(printed)' does not parse: \(error)")
        }
        runEqualizer([band], sampleRate: sampleRate, spec: spec)
    }
    if let graphic = try? GraphicEqualizer(parsing: spec) {
        require(graphic.bands.count <= GraphicEqualizer.frequencies.count, "'\(spec)' made too many bands")
        runEqualizer(graphic.bands, sampleRate: sampleRate, spec: spec)
    }
    return 0
}
