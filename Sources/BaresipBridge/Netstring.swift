import FoundationEssentials

/// baresip's `ctrl_tcp` frames every JSON message as a netstring: `LEN:JSON,`
/// (LEN in decimal bytes, then a comma).
public enum Netstring {
    /// One frame around `payload`.
    public static func encode(_ payload: Data) -> Data {
        var frame = Data("\(payload.count):".utf8)
        frame.append(payload)
        frame.append(UInt8(ascii: ","))
        return frame
    }

    public struct MalformedFrame: Error, CustomStringConvertible {
        public let description: String
    }

    /// Splits a byte stream into frames, whatever the reads' boundaries.
    public struct Decoder {
        private var buffer = Data()
        /// A frame longer than this is taken for garbage, not awaited.
        public static let maximumLength = 4 * 1024 * 1024

        public init() {}

        /// Adds bytes just read; returns the frames they complete.
        /// Throws on a stream that is not netstrings (then the connection must be dropped).
        public mutating func feed(_ bytes: Data) throws -> [Data] {
            buffer.append(bytes)
            var frames: [Data] = []
            while let colon = buffer.firstIndex(of: UInt8(ascii: ":")) {
                let digits = buffer[buffer.startIndex..<colon]
                guard !digits.isEmpty, digits.count <= 8, digits.allSatisfy({ (0x30...0x39).contains($0) }),
                      let length = Int(String(decoding: digits, as: UTF8.self)), length <= Self.maximumLength else {
                    throw MalformedFrame(description: "a netstring length must be decimal digits before ':', got \(String(decoding: digits.prefix(16), as: UTF8.self).debugDescription)")
                }
                let start = buffer.index(after: colon)
                guard buffer.distance(from: start, to: buffer.endIndex) >= length + 1 else { break }
                let end = buffer.index(start, offsetBy: length)
                guard buffer[end] == UInt8(ascii: ",") else {
                    throw MalformedFrame(description: "a netstring of \(length) bytes must end with ','")
                }
                frames.append(Data(buffer[start..<end]))
                buffer = Data(buffer[buffer.index(after: end)...])
            }
            // No colon yet: the length must still be short digits.
            if buffer.firstIndex(of: UInt8(ascii: ":")) == nil, buffer.count > 8 || !buffer.allSatisfy({ (0x30...0x39).contains($0) }) {
                throw MalformedFrame(description: "a netstring must start with its length, got \(String(decoding: buffer.prefix(16), as: UTF8.self).debugDescription)")
            }
            return frames
        }
    }
}
