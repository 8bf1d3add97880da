import Glibc
import Koe
import Synchronization

/// The running voice's settings, changed by name and text: the one path that `koe live --set`, the arrow keys and
/// the live panel take. A change is read by the settings table's own parser (`ConversionSettings.set`, which
/// refuses a number outside its range with the range), made ready for the changer here (`VoiceChanger.prepare`:
/// the voice checked, the EQ designed) and handed to the audio thread through `LiveEngine.publish`, whose callback
/// takes it without allocating, locking or waiting; it glides there as every change of a `VoiceChanger` does.
/// A change is all or nothing: one refused assignment leaves the voice as it was.
package final class LiveSettings: Sendable {
    /// What the voice is set to now.
    package struct State: Sendable {
        /// The voice, the explicit EQ bands (`eq`), the gain, the limiter and the preset last taken.
        fileprivate(set) var settings: ConversionSettings
        /// The graphic EQ's gains (`geq`); nil when none was given.
        fileprivate(set) var graphicEQ: GraphicEqualizer?
        /// The input heard unchanged (the voice at identity, no EQ, no gain), the settings kept for later.
        package fileprivate(set) var bypass = false
        /// Counts the changes taken, so that a reader sees whether anything changed since it last looked.
        package fileprivate(set) var version = 0

        /// What the changer is handed: nothing at all while bypassed; else the settings with the graphic EQ's
        /// bands after the explicit ones, and a vibrato of 0 Hz left out (it changes nothing, and without it a
        /// voice at identity passes the input itself).
        fileprivate var changerSettings: ConversionSettings {
            var changer = settings
            if bypass {
                changer = ConversionSettings()
                changer.limitsOutput = settings.limitsOutput
                return changer
            }
            changer.equalizer += graphicEQ?.bands ?? []
            if changer.voice.vibrato?.rate == 0 { changer.voice.vibrato = nil }
            return changer
        }

        /// The ratios a voice preset aims from the speaker's profile (those not set explicitly since it was taken),
        /// with the median F0 and the vocal-tract length it aims at; none while bypassed.
        package var aims: (pitch: Bool, formant: Bool, f0MedianHz: Double, vocalTractLengthCm: Double)? {
            guard !bypass, let target = settings.preset?.target else { return nil }
            let (pitch, formant) = settings.aimedRatios
            guard pitch || formant else { return nil }
            return (pitch, formant, target.f0Median, target.vocalTractLength)
        }

        /// What `name` is set to, as `koe live --set` answers: the value, or for a ratio a preset aims from the
        /// speaker, its target (`aim:210Hz`, `aim:14.5cm`), since the ratio heard follows the speaker's profile.
        package func described(_ name: String) -> String {
            switch (name, aims) {
            case ("pitch", let aims?) where aims.pitch: "aim:\(Self.short(aims.f0MedianHz))Hz"
            case ("formant", let aims?) where aims.formant: "aim:\(Self.short(aims.vocalTractLengthCm))cm"
            default: value(of: name).text
            }
        }

        private static func short(_ value: Double) -> String {
            value == value.rounded() ? String(Int(value)) : value.description
        }

        /// The value of `name` (a live setting, or `bypass`), as the panel shows it; `.off` for an optional
        /// setting that is unset (no snap, no median, no preset).
        package func value(of name: String) -> LiveValue {
            let voice = settings.voice
            switch name {
            case "preset": return settings.preset.map { .text($0.name) } ?? .off
            case "pitch": return .number(voice.pitch)
            case "semitones": return .number(voice.semitones)
            case "pitch_median": return voice.pitchMedian.map(LiveValue.number) ?? .off
            case "pitch_range": return .number(voice.pitchRange)
            case "formant": return .number(voice.formant)
            case "whisper": return .flag(voice.whisper)
            case "snap": return voice.snap.map { .text($0.scale.description) } ?? .off
            case "snap_strength": return .number(voice.snap?.strength ?? PitchSnap.Options().strength)
            case "snap_speed": return .number(voice.snap?.speed ?? PitchSnap.Options().speed)
            case "a4": return .number(voice.snap?.a4 ?? PitchSnap.Options().a4)
            case "vibrato": return voice.vibrato.map { .text("\($0.rate):\($0.depth)") } ?? .off
            case "vibrato_rate": return .number(voice.vibrato?.rate ?? 0)
            case "vibrato_depth": return .number(voice.vibrato?.depth ?? Vibrato.Options().depth)
            case "eq": return .text(settings.equalizer.map(\.description).joined(separator: " "))
            case "geq": return .text((graphicEQ?.gains ?? Array(repeating: 0, count: GraphicEqualizer.frequencies.count))
                .map { $0.description }.joined(separator: ","))
            case "gain": return .number(settings.gainDB)
            case "no_limit": return .flag(!settings.limitsOutput)
            default: return .flag(bypass)
            }
        }
    }

    /// The names a change takes: the settings table's live ones (`Setting.changesLive`), in its order, then
    /// `bypass`, which only a running voice has.
    package static let names = Setting.all.filter(\.changesLive).map(\.name) + [bypass]
    package static let bypass = "bypass"
    package static let bypassSummary = "Hear the input unchanged (dry): the voice, EQ and gain are kept for when it is off."
    /// The word that unsets an optional setting: `snap=off`, `pitch_median=off`, `vibrato=off`, `eq=off`, `geq=off`.
    package static let off = "off"

    private let state: Mutex<State>
    private let engine: LiveEngine

    /// Takes `settings` (the explicit EQ bands in `equalizer`) and the graphic EQ as the voice the stream starts
    /// with, before the stream runs; refused as a change is.
    package init(engine: LiveEngine, settings: ConversionSettings, graphicEQ: GraphicEqualizer?) throws(KoeError) {
        var initial = State(settings: settings, graphicEQ: graphicEQ)
        // A live voice keeps time: a preset's tempo is a file's.
        initial.settings.voice.tempo = 1
        engine.changer.take(try engine.changer.prepare(initial.changerSettings))
        self.engine = engine
        state = Mutex(initial)
    }

    /// The settings now; from any thread.
    package var current: State { state.withLock { $0 } }

    /// Applies `assignments` (name and text, as `--set` writes them: `pitch=1.5`, `snap=C:major`, `eq=peak:1000:6`)
    /// in the settings table's order, a preset first, and hands the result to the audio thread. Repeated `eq`
    /// assignments give the explicit bands, all of them (`eq=off`: none). Throws `KoeError.invalidArgument`,
    /// changing nothing, for a name that is not a live setting, a value its setting refuses, or a voice the
    /// changer cannot take. From any thread but the audio thread's.
    @discardableResult
    package func set(_ assignments: [(name: String, text: String)]) throws(KoeError) -> State {
        let ordered = try Self.ordered(assignments)
        return try state.withLock { state throws(KoeError) -> State in
            var next = state
            var bandsGiven = false
            for (name, text) in ordered {
                try Self.apply(name, text, to: &next, bandsGiven: &bandsGiven)
            }
            engine.publish(try engine.changer.prepare(next.changerSettings))
            next.version += 1
            state = next
            return next
        }
    }

    /// Moves the pitch by semitones from the ratio heard (an aimed one, while a preset aims, which then lets go of
    /// it), within its range.
    package func nudge(pitch semitones: Int) {
        let pitch = engine.applied.pitch * exp2(Double(semitones) / 12)
        guard let pitch = Setting.pitch.clamped(pitch) else { return }
        _ = try? set([("pitch", pitch.description)])
    }

    /// Moves the formants by steps of 5 % from the ratio heard, within their range.
    package func nudge(formant steps: Int) {
        let formant = engine.applied.formant * pow(1.05, Double(steps))
        guard let formant = Setting.formant.clamped(formant) else { return }
        _ = try? set([("formant", formant.description)])
    }

    /// Frees the changes the audio thread has taken; the main loop calls it between its chores.
    package func collect() {
        engine.collect()
    }

    /// `assignments` checked by name and put in the table's order (`bypass` last), each keeping its own order.
    private static func ordered(_ assignments: [(name: String, text: String)]) throws(KoeError) -> [(String, String)] {
        var ranked: [(rank: Int, name: String, text: String)] = []
        for (name, text) in assignments {
            let spelled = Setting.named(name)?.name ?? name
            guard let rank = names.firstIndex(of: spelled) else {
                throw .invalidArgument(problem(name: name, text: text))
            }
            ranked.append((rank, spelled, text))
        }
        guard !ranked.isEmpty else { throw .invalidArgument("nothing to set: give NAME=VALUE (\(names.joined(separator: ", ")))") }
        // A stable sort: repeated `eq` bands keep the order given.
        return ranked.enumerated().sorted { ($0.element.rank, $0.offset) < ($1.element.rank, $1.offset) }.map {
            ($0.element.name, $0.element.text)
        }
    }

    /// Why `name=text` is not a setting a running voice takes.
    private static func problem(name: String, text: String) -> String {
        if Setting.named(name) != nil {
            return "'\(name)=\(text)': \(name) cannot change while koe live runs (live settings: \(names.joined(separator: ", ")))"
        }
        return "'\(name)=\(text)' is not a setting koe live changes (live settings: \(names.joined(separator: ", ")))"
    }

    private static func apply(_ name: String, _ text: String, to state: inout State, bandsGiven: inout Bool) throws(KoeError) {
        let unset = text.lowercased() == off
        switch name {
        case bypass:
            state.bypass = try ConversionSettings.flag(text, named: bypass)
        case "eq":
            if !bandsGiven { state.settings.equalizer = [] }
            bandsGiven = true
            if !unset { try state.settings.set(name, to: text) }
        case "geq":
            state.graphicEQ = unset ? nil : try GraphicEqualizer(parsing: text)
        case "snap" where unset:
            state.settings.voice.snap = nil
        case "pitch_median" where unset:
            state.settings.voice.pitchMedian = nil
        case "vibrato" where unset:
            state.settings.voice.vibrato = nil
        default:
            try state.settings.set(name, to: text)
            state.settings.voice.tempo = 1
        }
    }
}

/// A live setting's value as the panel shows it.
package enum LiveValue: Equatable, Sendable {
    case number(Double)
    case flag(Bool)
    case text(String)
    /// An optional setting that is not set.
    case off

    /// As `--set` writes it.
    var text: String {
        switch self {
        case .number(let value): value.description
        case .flag(let on): on.description
        case .text(let text): text
        case .off: LiveSettings.off
        }
    }
}
