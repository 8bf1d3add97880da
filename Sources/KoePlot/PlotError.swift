/// Why a plot could not be made; one line for the person at the shell.
package struct PlotError: Error, Equatable, CustomStringConvertible {
    package let description: String

    package init(_ description: String) {
        self.description = description
    }
}
