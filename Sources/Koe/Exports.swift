// `import Koe` is the one door: what a Swift user needs to change a voice, and nothing else. The voice settings
// and the one error live below the door, in KoeStages, where the stages read them; they come through it by name.
// WORLD's algorithms are the KoeWorld product, imported on their own; only the analysis options come through.
@_exported import struct KoeStages.EqualizerBand
@_exported import struct KoeStages.F0Track
@_exported import enum KoeStages.KoeError
@_exported import struct KoeStages.MusicalScale
@_exported import struct KoeStages.PitchCurve
@_exported import struct KoeStages.PitchSnap
@_exported import struct KoeStages.Preset
@_exported import enum KoeStages.Vibrato
@_exported import struct KoeStages.VoiceSettings
@_exported import struct KoeWorld.AnalysisOptions
@_exported import struct KoeStages.Setting
@_exported import struct KoeStages.SpeakerProfile
