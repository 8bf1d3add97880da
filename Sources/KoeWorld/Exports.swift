// Spectrograms are `KoeDSP.Matrix`; users of the vocoder should not need a second import to hold one.
@_exported import KoeDSP
