import CompressNIO
import NIOCore

/// One step of a lazily generated body.
enum BodyStep {
    /// Bytes to write now.
    case data(ByteBuffer)
    /// Wait before asking for the next step.
    case pause(TimeAmount)
    /// Work was done but there is nothing to write yet: ask again (after other connections had a turn).
    case progress
    /// The body is complete.
    case end
}

/// A lazily generated response body. `next` is called on the connection's event loop only while the
/// channel is writable, so a source never produces more than one step ahead of the peer.
protocol BodySource: AnyObject {
    func next(allocator: ByteBufferAllocator) throws -> BodyStep
    /// Whether every byte has been produced (the next step would be `.end`). Checked after each
    /// write so the request is accounted as finished before its last bytes can reach the peer.
    var isComplete: Bool { get }
}

/// The deterministic body pattern: byte `i` is `UInt8(i % 251)`.
enum Pattern {
    static let period = 251
    /// The largest slice ``slice(offset:length:)`` returns.
    static let maxSlice = 256 * 1024

    /// One period plus `maxSlice` bytes, so any slice of up to `maxSlice` bytes is a zero-copy view.
    private static let block: ByteBuffer = {
        let onePeriod = (0..<period).map { byte(at: $0) }
        var buffer = ByteBuffer()
        buffer.reserveCapacity(period + maxSlice + period)
        while buffer.readableBytes < period + maxSlice {
            buffer.writeBytes(onePeriod)
        }
        return buffer
    }()

    static func byte(at offset: Int) -> UInt8 {
        UInt8(truncatingIfNeeded: offset % period)
    }

    /// The pattern bytes `offset ..< offset + length` (`length <= maxSlice`), sharing storage.
    static func slice(offset: Int, length: Int) -> ByteBuffer {
        let start = offset % period
        return block.getSlice(at: block.readerIndex + start, length: min(length, maxSlice)) ?? ByteBuffer()
    }

    static let crlf = ByteBuffer(string: "\r\n")
    static let lastChunk = ByteBuffer(string: "0\r\n\r\n")

    static func chunkHeader(_ size: Int, allocator: ByteBufferAllocator) -> ByteBuffer {
        allocator.buffer(string: String(size, radix: 16) + "\r\n")
    }
}

/// `total` pattern bytes, either raw (the head carries a `Content-Length`) or chunk-encoded.
final class PatternSource: BodySource {
    private enum Phase {
        case chunkHeader, data, chunkTrailer, done
    }

    private let total: Int
    private let chunked: Bool
    private let chunkSize: Int
    private var offset = 0
    private var chunkRemaining = 0
    private var phase: Phase

    /// - Parameters:
    ///   - total: pattern bytes to send.
    ///   - chunked: use chunked transfer coding, in wire chunks of `chunkSize` bytes.
    ///   - chunkSize: the wire chunk size when chunked, else the size of each write.
    init(total: Int, chunked: Bool, chunkSize: Int) {
        self.total = total
        self.chunked = chunked
        self.chunkSize = max(1, chunkSize)
        self.phase = chunked ? .chunkHeader : .data
    }

    var isComplete: Bool {
        self.phase == .done || (!self.chunked && self.offset >= self.total)
    }

    func next(allocator: ByteBufferAllocator) -> BodyStep {
        switch self.phase {
        case .chunkHeader:
            if self.offset >= self.total {
                self.phase = .done
                return .data(Pattern.lastChunk)
            }
            self.chunkRemaining = min(self.chunkSize, self.total - self.offset)
            self.phase = .data
            return .data(Pattern.chunkHeader(self.chunkRemaining, allocator: allocator))
        case .data:
            if self.chunked {
                let length = min(self.chunkRemaining, Pattern.maxSlice)
                defer {
                    self.offset += length
                    self.chunkRemaining -= length
                    if self.chunkRemaining == 0 { self.phase = .chunkTrailer }
                }
                return .data(Pattern.slice(offset: self.offset, length: length))
            }
            guard self.offset < self.total else {
                self.phase = .done
                return .end
            }
            let length = min(self.chunkSize, Pattern.maxSlice, self.total - self.offset)
            defer { self.offset += length }
            return .data(Pattern.slice(offset: self.offset, length: length))
        case .chunkTrailer:
            self.phase = .chunkHeader
            return .data(Pattern.crlf)
        case .done:
            return .end
        }
    }
}

/// `total` pattern bytes gzip-compressed on the fly and chunk-encoded. Memory stays bounded: one
/// input slice (shared), one output buffer of at most `chunkSize` bytes and zlib's own state.
final class GzipPatternSource: BodySource {
    private static let inputPiece = 64 * 1024
    /// Input compressed per step at most: the pattern compresses about 130:1 at zlib's ~400 MB/s,
    /// so this keeps a step to a few milliseconds of event loop time.
    private static let inputPerStep = 1024 * 1024

    private let total: Int
    private let outputCapacity: Int
    private let compressor: ZlibCompressor
    private var offset = 0
    private var input = ByteBuffer()
    private var streamEnded = false
    /// The buffer ``compressSome(allocator:)`` compresses into.
    private var output: ByteBuffer?
    private var pendingOutput: ByteBuffer?
    private var needsTrailer = false
    private var done = false

    init(total: Int, chunkSize: Int) throws {
        self.total = total
        self.outputCapacity = min(max(chunkSize, 64), Pattern.maxSlice)
        self.compressor = try ZlibCompressor(
            algorithm: .gzip,
            configuration: ZlibConfiguration(compressionLevel: .fastestCompression)
        )
    }

    var isComplete: Bool {
        self.done
    }

    func next(allocator: ByteBufferAllocator) throws -> BodyStep {
        if self.needsTrailer {
            self.needsTrailer = false
            return .data(Pattern.crlf)
        }
        if let output = self.pendingOutput {
            self.pendingOutput = nil
            self.needsTrailer = true
            return .data(output)
        }
        if self.done {
            return .end
        }
        if !self.streamEnded {
            try self.compressSome(allocator: allocator)
        }
        if let output = self.output, output.readableBytes > 0 {
            self.output = nil
            self.pendingOutput = output
            return .data(Pattern.chunkHeader(output.readableBytes, allocator: allocator))
        }
        guard self.streamEnded else { return .progress }
        self.done = true
        return .data(Pattern.lastChunk)
    }

    /// Compresses until the output buffer is full, the gzip stream has ended or a step's worth of
    /// input has been consumed.
    private func compressSome(allocator: ByteBufferAllocator) throws {
        var output = self.output ?? allocator.buffer(capacity: self.outputCapacity)
        defer { self.output = output }
        let inputLimit = self.offset + Self.inputPerStep
        while output.writableBytes > 0, !self.streamEnded {
            if self.input.readableBytes == 0, self.offset >= inputLimit { break }
            if self.input.readableBytes == 0, self.offset < self.total {
                let length = min(Self.inputPiece, self.total - self.offset)
                self.input = Pattern.slice(offset: self.offset, length: length)
                self.offset += length
            }
            let isLast = self.offset >= self.total
            do {
                try self.compressor.deflate(from: &self.input, to: &output, flush: isLast ? .finish : .no)
                if isLast { self.streamEnded = true }
            } catch let error as CompressNIOError where error == .bufferOverflow {
                // Output full (or, without input, nothing to do yet): go round again or return.
                if !isLast, self.input.readableBytes > 0 { break }
            }
        }
    }
}

/// `total` pattern bytes sent one at a time, `interval` apart (the first after one interval).
final class DripSource: BodySource {
    private let total: Int
    private let interval: TimeAmount
    private var sent = 0
    private var pauseNext = true

    init(total: Int, interval: TimeAmount) {
        self.total = total
        self.interval = interval
    }

    var isComplete: Bool {
        self.sent >= self.total
    }

    func next(allocator: ByteBufferAllocator) -> BodyStep {
        guard self.sent < self.total else { return .end }
        if self.pauseNext {
            self.pauseNext = false
            return .pause(self.interval)
        }
        self.pauseNext = true
        defer { self.sent += 1 }
        return .data(Pattern.slice(offset: self.sent, length: 1))
    }
}

/// A prepared body sent in `pieces` roughly equal parts, each after a pause of `interval` (so the
/// whole body takes about `pieces * interval`).
final class SlowBufferSource: BodySource {
    private var remaining: ByteBuffer
    private let pieceSize: Int
    private let interval: TimeAmount
    private var pauseNext = true

    init(body: ByteBuffer, pieces: Int, interval: TimeAmount) {
        self.remaining = body
        self.pieceSize = max(1, (body.readableBytes + max(1, pieces) - 1) / max(1, pieces))
        self.interval = interval
    }

    var isComplete: Bool {
        self.remaining.readableBytes == 0
    }

    func next(allocator: ByteBufferAllocator) -> BodyStep {
        guard self.remaining.readableBytes > 0 else { return .end }
        if self.pauseNext {
            self.pauseNext = false
            return .pause(self.interval)
        }
        self.pauseNext = true
        let length = min(self.pieceSize, self.remaining.readableBytes)
        return .data(self.remaining.readSlice(length: length) ?? ByteBuffer())
    }
}
