import Foundation
@testable import KoeDSP
import TestSupport
import Testing

@Suite struct PartitionedConvolutionTests {
    private func convolved(_ input: [Double], kernels: [[Double]], blockLength: Int) -> [[Double]] {
        let convolution = PartitionedConvolution(kernels: kernels, blockLength: blockLength)
        var outputs = Array(repeating: [Double](), count: kernels.count)
        for start in stride(from: 0, to: input.count - blockLength + 1, by: blockLength) {
            input[start..<(start + blockLength)].withUnsafeBufferPointer { convolution.push($0) }
            for kernel in kernels.indices {
                outputs[kernel] += convolution.output(ofKernel: kernel)
            }
        }
        return outputs
    }

    /// Kernels shorter and longer than a block, whole blocks long or not, one block long, or one tap.
    @Test(arguments: [1, 7, 80, 240])
    func equalsDirectConvolution(blockLength: Int) {
        var random = SystemRandomNumberGenerator()
        let input = (0..<(blockLength * 40)).map { _ in Double.random(in: -1...1, using: &random) }
        let kernels = [1, blockLength, blockLength + 1, 3 * blockLength - 1, 7 * blockLength + 3].map { count in
            (0..<count).map { _ in Double.random(in: -1...1, using: &random) }
        }
        let outputs = convolved(input, kernels: kernels, blockLength: blockLength)
        for (kernel, output) in zip(kernels, outputs) {
            let expected = input.indices.map { directConvolution(input, kernel, at: $0) }
            let worst = zip(output, expected).map { abs($0 - $1) }.max() ?? 0
            #expect(worst < 1e-12 * Double(kernel.count), "\(kernel.count) taps: off by \(worst)")
        }
    }
}
