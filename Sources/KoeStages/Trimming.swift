extension StringProtocol {
    /// The text without the spaces and tabs at its ends, scalar by scalar, as Foundation's
    /// `trimmingCharacters(in: .whitespaces)` trims: Unicode's space separators, U+0009 and U+200B (which
    /// CoreFoundation still counts); newlines stay.
    func trimmingSpaces() -> String {
        let scalars = String(self).unicodeScalars
        let isSpace = { (scalar: Unicode.Scalar) in
            scalar == "\t" || scalar == "\u{200B}" || scalar.properties.generalCategory == .spaceSeparator
        }
        guard let first = scalars.firstIndex(where: { !isSpace($0) }), let last = scalars.lastIndex(where: { !isSpace($0) })
        else { return "" }
        return String(Substring(scalars[first...last]))
    }
}
