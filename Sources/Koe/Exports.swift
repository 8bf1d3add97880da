// `import Koe` is the one door: the voice settings, EQ bands and presets (KoeStages' public types) and WORLD's
// algorithms (KoeWorld) come with it, so a caller never needs a second import.
@_exported import KoeStages
@_exported import KoeWorld
