import CompressNIO
import NIOCore

/// Compressed bodies for canned responses: whole, cut before their trailer, or a bomb of zeros.
public enum CompressedBodies {
    public enum Format: Sendable { case gzip, deflate, rawDeflate }

    /// `bytes` compressed whole.
    public static func compress(_ bytes: [UInt8], _ format: Format = .gzip) throws -> [UInt8] {
        try compress(repeating: bytes, times: 1, format)
    }

    /// `count` zero bytes compressed (about 1000:1), made a megabyte at a time.
    public static func zeros(_ count: Int, _ format: Format = .gzip) throws -> [UInt8] {
        let piece = 1 << 20
        precondition(count % piece == 0, "a whole number of megabytes")
        return try compress(repeating: [UInt8](repeating: 0, count: piece), times: count / piece, format)
    }

    private static func compress(repeating piece: [UInt8], times: Int, _ format: Format) throws -> [UInt8] {
        let algorithm: ZlibAlgorithm = switch format {
        case .gzip: .gzip
        case .deflate: .zlib
        case .rawDeflate: .deflate
        }
        let compressor = try ZlibCompressor(algorithm: algorithm)
        var output = ByteBufferAllocator().buffer(capacity: piece.count * times / 500 + (64 << 10))
        for index in 0..<times {
            var input = ByteBuffer(bytes: piece)
            let last = index == times - 1
            while true {
                if output.writableBytes < 32 << 10 { output.reserveCapacity(output.capacity * 2) }
                do {
                    try compressor.deflate(from: &input, to: &output, flush: last ? .finish : .no)
                    if !last, input.readableBytes > 0 { continue }
                    break
                } catch let error as CompressNIOError where error == .bufferOverflow {
                    if !last, input.readableBytes == 0 { break }
                }
            }
        }
        return Array(output.readableBytesView)
    }
}
