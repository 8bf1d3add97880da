/// Why a plot could not be made; one line for the person at the shell.
public struct PlotError: Error, Equatable, CustomStringConvertible {
    public let description: String

    public init(_ description: String) {
        self.description = description
    }
}
