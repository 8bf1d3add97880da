import ArgumentParser
import Koe

/// The F0 edits beyond constant ratios, and the output limiter: options of convert and batch.
struct VoiceCurveOptions: ParsableArguments {
    @Option(name: .customLong("pitch-curve"), help: .setting("pitch_curve"))
    var pitchCurve: String?

    @Option(name: .customLong("f0-file"), help: .setting("f0_file"))
    var f0File: String?

    @Option(name: .customLong("snap"), help: .setting("snap"), transform: parsed(MusicalScale.init(parsing:)))
    var snap: MusicalScale?

    @Option(name: .customLong("snap-strength"), parsing: .unconditional, help: .setting("snap_strength"))
    var snapStrength: Double?

    @Option(name: .customLong("snap-speed"), parsing: .unconditional, help: .setting("snap_speed"))
    var snapSpeed: Double?

    @Option(name: .customLong("a4"), parsing: .unconditional, help: .setting("a4"))
    var a4: Double?

    @Option(name: .customLong("vibrato"), help: .setting("vibrato"))
    var vibrato: String?

    @Flag(name: .customLong("no-limit"), help: .setting("no_limit"))
    var noLimit = false

    func validate() throws {
        if snap == nil {
            for (flag, value) in [("--snap-strength", snapStrength), ("--snap-speed", snapSpeed), ("--a4", a4)] where value != nil {
                throw ValidationError("\(flag) tunes --snap: give --snap KEY:SCALE too")
            }
        }
        try requireWithin([("snap_strength", snapStrength), ("snap_speed", snapSpeed), ("a4", a4)])
        if let vibrato {
            var settings = ConversionSettings()
            do {
                try settings.set("vibrato", to: vibrato)
            } catch {
                throw ValidationError("--vibrato \(vibrato): \(error)")
            }
        }
    }

    /// `settings` with the files read and the F0 edits and the limiter set; throws `KoeError` for a file that
    /// cannot be used.
    func apply(to settings: inout ConversionSettings) throws {
        settings.voice.pitchCurve = try pitchCurve.map { path throws(KoeError) in try PitchCurve(contentsOf: path) }
        settings.voice.f0Track = try f0File.map { path throws(KoeError) in try F0Track(contentsOf: path) }
        settings.voice.snap = snapOptions
        if let vibrato { try settings.set("vibrato", to: vibrato) }
        settings.limitsOutput = !noLimit
    }

    /// Reads the curve and F0 files, so that a batch refuses a bad one before it starts; a usage error.
    func checkFiles() throws {
        var settings = ConversionSettings()
        do {
            try apply(to: &settings)
        } catch let error as KoeError {
            throw ValidationError(error.description)
        }
    }

    private var snapOptions: PitchSnap.Options? {
        guard let snap else { return nil }
        let defaults = PitchSnap.Options()
        return PitchSnap.Options(
            scale: snap, strength: snapStrength ?? defaults.strength, speed: snapSpeed ?? defaults.speed, a4: a4 ?? defaults.a4)
    }
}
