import KoeStages
import Testing

@Suite struct F0TrackTests {
    @Test func keepsItsValuesAndNamesTheMedian() throws {
        let track = try F0Track(values: [0, 100, 0, 300, 200])
        #expect(track.values == [0, 100, 0, 300, 200])
        #expect(track.medianVoicedF0 == 200)
        #expect(try F0Track(values: [0, 0]).medianVoicedF0 == nil)
    }

    @Test(arguments: [
        ([Double](), "f0.npy: holds no F0 values"),
        ([100, -1], "f0.npy: frame 1: -1.0 is not an F0 in Hz"),
        ([100, 110, .nan], "f0.npy: frame 2: nan is not an F0 in Hz"),
        ([.infinity], "f0.npy: frame 0: inf is not an F0 in Hz"),
    ])
    func refusesWhatIsNotAnF0(values: [Double], message: String) {
        #expect {
            try F0Track(values: values, name: "f0.npy")
        } throws: { error in
            (error as? KoeError)?.description.hasPrefix(message) == true
        }
    }
}
