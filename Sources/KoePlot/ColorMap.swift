/// The spectrogram's colours: black through purple, crimson and orange to pale yellow, linear between those
/// anchors. Luminance rises all the way (black 0, purple 0.03, crimson 0.13, orange 0.39, yellow 0.95), so
/// louder is always lighter, on screen and printed in grey.
enum ColorMap {
    private static let anchors: [RGB] = [
        RGB(red: 0, green: 0, blue: 0.02),
        RGB(red: 0.30, green: 0.05, blue: 0.45),
        RGB(red: 0.75, green: 0.15, blue: 0.35),
        RGB(red: 0.98, green: 0.55, blue: 0.10),
        RGB(red: 0.99, green: 0.99, blue: 0.75),
    ]

    /// The colour of `level`, 0 (quietest) to 1 (loudest); clamped.
    static func color(_ level: Double) -> RGB {
        let position = min(max(level.isNaN ? 0 : level, 0), 1) * Double(anchors.count - 1)
        let index = min(Int(position), anchors.count - 2)
        let weight = position - Double(index)
        let (low, high) = (anchors[index], anchors[index + 1])
        return RGB(
            red: low.red + weight * (high.red - low.red),
            green: low.green + weight * (high.green - low.green),
            blue: low.blue + weight * (high.blue - low.blue))
    }
}
