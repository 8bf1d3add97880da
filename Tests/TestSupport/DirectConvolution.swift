/// The definition that fast convolutions are checked against: `Σ kernel[k] · input[n − k]` over every tap, with
/// the input zero outside its samples. It lives here, in an optimised module, because the tests themselves are
/// built without optimisation and a sum of millions of products there takes seconds.
public func directConvolution(_ input: [Double], _ kernel: [Double], at n: Int) -> Double {
    let (first, end) = (max(0, n - input.count + 1), min(kernel.count, n + 1))
    var sum = 0.0
    for tap in stride(from: first, to: end, by: 1) {
        sum += kernel[tap] * input[n - tap]
    }
    return sum
}
