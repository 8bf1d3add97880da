extension Array {
    /// Removes the first `count` elements and returns them. Taking them all hands over the storage itself and
    /// leaves the array empty: a copy would leave the array sharing its storage with the result, so that the
    /// removal allocated anew, at the capacity of the largest chunk ever held, on every call (under the
    /// vocoder's threads the heap then grew without end).
    package mutating func takeFirst(_ count: Int) -> [Element] {
        guard count < self.count else {
            defer { self = [] }
            return self
        }
        defer { removeFirst(count) }
        return Array(prefix(count))
    }
}
