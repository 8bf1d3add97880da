import KoeStages
import Testing

@Suite struct PitchCurveTests {
    private func curve(_ points: [(Double, Double)]) throws -> PitchCurve {
        try PitchCurve(points: points.map { PitchCurve.Point(time: $0.0, ratio: $0.1) })
    }

    @Test func linearBetweenPointsAndHeldPastTheEnds() throws {
        let glide = try curve([(1, 1), (3, 1.5), (4, 0.5)])
        #expect(glide.ratio(at: -2) == 1)
        #expect(glide.ratio(at: 1) == 1)
        #expect(glide.ratio(at: 2) == 1.25)
        #expect(glide.ratio(at: 3) == 1.5)
        #expect(glide.ratio(at: 3.5) == 1)
        #expect(glide.ratio(at: 4) == 0.5)
        #expect(glide.ratio(at: 100) == 0.5)
    }

    @Test func onePointIsAConstant() throws {
        let constant = try curve([(2, 1.2)])
        #expect(constant.ratio(at: 0) == 1.2 && constant.ratio(at: 5) == 1.2)
    }

    /// Bisection finds the right segment among many, at and between every point.
    @Test func manyPointsAreEachFound() throws {
        let points: Points = (0..<1000).map { index -> (Double, Double) in
            (Double(index) * 0.01, 1 + Double(index % 7) * 0.1)
        }
        let many = try curve(points)
        for index in 0..<999 {
            let (time, ratio) = points[index]
            #expect(many.ratio(at: time) == ratio)
            let middle = many.ratio(at: time + 0.005)
            let expected = (ratio + points[index + 1].1) / 2
            #expect(abs(middle - expected) < 1e-12)
        }
    }

    typealias Points = [(Double, Double)]
    static let badCurves: [(Points, String)] = [
        ([(0, 1), (1, 1.2), (1, 1.3)], "point 3: time 1.0 s does not come after"),
        ([(0, 1), (2, 1.2), (1, 1.3)], "point 3: time 1.0 s does not come after"),
        ([(0, -1)], "point 1: ratio -1.0 is not positive"),
        ([(0, 0)], "point 1: ratio 0.0 is not positive"),
        ([(0, 1), (1, .nan)], "point 2: ratio nan is not a finite number"),
        ([(.infinity, 1)], "point 1: time inf is not a finite number"),
        ([(0, 40)], "point 1: ratio 40.0 is outside 0.0625 to 16.0"),
        ([], "at least one point"),
    ]

    @Test(arguments: badCurves)
    func refusesWhatIsNotACurve(points: Points, message: String) {
        #expect {
            try curve(points)
        } throws: { error in
            (error as? KoeError)?.description.contains(message) == true
        }
    }
}
