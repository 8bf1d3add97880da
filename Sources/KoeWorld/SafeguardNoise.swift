/// Where CheapTrick's and D4C's safeguard noise starts. WORLD draws one sequence from its seed through all the
/// frames of a call. A stream starts it again at every frame, so that a frame's analysis depends only on the
/// samples and F0 around it, not on the block it falls in; every draw then lies in `RandnPrefix`.
package enum SafeguardNoise: Sendable {
    case throughCall, eachFrame
}
