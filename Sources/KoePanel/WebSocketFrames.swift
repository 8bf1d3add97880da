import FlyingFox
import Foundation

/// RFC 6455's frames on the wire, as the panel takes them: FlyingFox's `MessageFrameWSHandler` speaks the
/// protocol (pings, closing, messages) in `WSFrame`s, and this reads and writes those frames within bounds. A
/// client frame must be masked and whole (FIN set, no continuation: the page's messages are a line of settings)
/// and carry at most `largestPayload` bytes; anything else ends the connection.
enum WebSocketFrames {
    /// The longest payload a client frame may carry.
    static let largestPayload = 16 * 1024

    /// What was wrong with a client's frame.
    struct Refused: Error, Equatable {
        let reason: String
    }

    /// The first frame in `bytes` and the bytes it took, or nil while more bytes are needed.
    static func decode(_ bytes: ArraySlice<UInt8>) throws(Refused) -> (frame: WSFrame, length: Int)? {
        guard bytes.count >= 2 else { return nil }
        let first = bytes[bytes.startIndex], second = bytes[bytes.startIndex + 1]
        let opcode = WSFrame.Opcode(first & 0x0F)
        guard first & 0x70 == 0 else { throw Refused(reason: "reserved bits set") }
        guard first & 0x80 != 0, opcode != .continuation else { throw Refused(reason: "a fragmented message") }
        guard [.text, .binary, .close, .ping, .pong].contains(opcode) else { throw Refused(reason: "an unknown opcode") }
        guard second & 0x80 != 0 else { throw Refused(reason: "an unmasked client frame") }
        var offset = 2
        var length = Int(second & 0x7F)
        if length >= 126 {
            let extra = length == 126 ? 2 : 8
            guard bytes.count >= offset + extra else { return nil }
            length = 0
            for index in 0..<extra { length = length << 8 | Int(bytes[bytes.startIndex + offset + index]) }
            offset += extra
            // A length in 8 bytes beyond Int's range comes out negative here.
            guard length >= 0 else { throw Refused(reason: "a payload longer than \(largestPayload) bytes") }
        }
        guard length <= largestPayload else { throw Refused(reason: "a payload longer than \(largestPayload) bytes") }
        if [.close, .ping, .pong].contains(opcode), length > 125 { throw Refused(reason: "a control frame longer than 125 bytes") }
        guard bytes.count >= offset + 4 + length else { return nil }
        let start = bytes.startIndex + offset
        let mask = Array(bytes[start..<start + 4])
        var payload = Data(bytes[start + 4..<start + 4 + length])
        for index in payload.indices { payload[index] ^= mask[(index - payload.startIndex) % 4] }
        return (WSFrame(fin: true, opcode: opcode, mask: nil, payload: payload), offset + 4 + length)
    }

    /// A server frame: unmasked, as RFC 6455 has servers send them.
    static func encode(_ frame: WSFrame) -> [UInt8] {
        var bytes: [UInt8] = [(frame.fin ? 0x80 : 0) | frame.opcode.rawValue]
        let length = frame.payload.count
        if length < 126 {
            bytes.append(UInt8(length))
        } else if length <= Int(UInt16.max) {
            bytes += [126, UInt8(length >> 8), UInt8(length & 0xFF)]
        } else {
            bytes.append(127)
            bytes += (0..<8).reversed().map { UInt8(truncatingIfNeeded: length >> ($0 * 8)) }
        }
        return bytes + frame.payload
    }
}
