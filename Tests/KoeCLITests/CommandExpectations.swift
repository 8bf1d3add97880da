import Testing

extension CommandRunner {
    /// Runs koe and checks it failed the way every bad input must: a non-zero status, exactly one line on
    /// stderr starting `koe: error:`, and the scratch folder holding exactly what it held before.
    func expectFailure(
        _ arguments: String..., mentioning detail: String? = nil, sourceLocation: SourceLocation = #_sourceLocation
    ) throws {
        try expectFailure(arguments, mentioning: detail, sourceLocation: sourceLocation)
    }

    func expectFailure(
        _ arguments: [String], mentioning detail: String? = nil, sourceLocation: SourceLocation = #_sourceLocation
    ) throws {
        let before = contents()
        let process = try run(arguments)
        let stderr = process.standardError
        #expect(process.status != 0, "exit status", sourceLocation: sourceLocation)
        #expect(process.errorLines.count == 1, "stderr: \(stderr)", sourceLocation: sourceLocation)
        #expect(stderr.hasPrefix("koe: error: "), "stderr: \(stderr)", sourceLocation: sourceLocation)
        if let detail {
            #expect(stderr.contains(detail), "stderr: \(stderr)", sourceLocation: sourceLocation)
        }
        #expect(contents() == before, "files left behind", sourceLocation: sourceLocation)
    }
}
