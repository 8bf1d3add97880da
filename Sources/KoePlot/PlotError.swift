/// Why a plot could not be made; one line for the person at the shell.
struct PlotError: Error, Equatable, CustomStringConvertible {
    let description: String

    init(_ description: String) {
        self.description = description
    }
}
