import FlyingFox
import Foundation
@testable import KoePanel
import Testing

/// The WebSocket frames the panel reads and writes, within its bounds.
@Suite struct WebSocketFramesTests {
    /// A client's frame: masked, as RFC 6455 has clients send them.
    private func clientFrame(_ payload: [UInt8], opcode: UInt8 = 0x1, fin: Bool = true, mask: [UInt8] = [1, 2, 3, 4]) -> [UInt8] {
        var bytes: [UInt8] = [(fin ? 0x80 : 0) | opcode]
        if payload.count < 126 {
            bytes.append(0x80 | UInt8(payload.count))
        } else {
            bytes += [0x80 | 126, UInt8(payload.count >> 8), UInt8(payload.count & 0xFF)]
        }
        return bytes + mask + payload.enumerated().map { $0.element ^ mask[$0.offset % 4] }
    }

    @Test func readsAMaskedTextFrame() throws {
        let line = Array("pitch=1.5".utf8)
        let bytes = clientFrame(line) + [0x81]
        let (frame, length) = try #require(try WebSocketFrames.decode(bytes[...]))
        #expect(frame.opcode == .text && frame.payload == Data(line) && length == bytes.count - 1)
        for end in 0..<(bytes.count - 1) { #expect(try WebSocketFrames.decode(bytes[..<end]) == nil, "\(end) bytes") }
        let long = [UInt8](repeating: 65, count: 300)
        #expect(try WebSocketFrames.decode(clientFrame(long)[...])?.frame.payload == Data(long))
    }

    @Test func refusesWhatThePageNeverSends() {
        let refused: [[UInt8]] = [
            Array(clientFrame([1]).enumerated().map { $0.offset == 1 ? $0.element & 0x7F : $0.element }.prefix(2)) + [1],
            clientFrame([1], fin: false), clientFrame([1], opcode: 0x0), clientFrame([1], opcode: 0x3),
            [0x81, 0x80 | 127, 0, 0, 0, 0, 0, 1, 0, 0], [0x81, 0x80 | 127, 0x80, 0, 0, 0, 0, 0, 0, 0],
            clientFrame([UInt8](repeating: 0, count: 126), opcode: 0x9), [0xC1, 0x80] + [0, 0, 0, 0],
        ]
        for bytes in refused {
            #expect(throws: WebSocketFrames.Refused.self, "\(bytes.prefix(4))") { _ = try WebSocketFrames.decode(bytes[...]) }
        }
    }

    @Test func writesLengthsInTheirThreeForms() {
        for (count, header) in [(125, [0x81, 125]), (126, [0x81, 126, 0, 126]), (70000, [0x81, 127, 0, 0, 0, 0, 0, 1, 0x11, 0x70])] {
            let bytes = WebSocketFrames.encode(WSFrame(fin: true, opcode: .text, mask: nil, payload: Data(count: count)))
            #expect(Array(bytes.prefix(header.count)) == header.map(UInt8.init) && bytes.count == header.count + count)
        }
    }
}
