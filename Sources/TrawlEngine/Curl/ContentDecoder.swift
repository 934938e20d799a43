internal import CZlib

/// Decodes a `gzip` or `deflate` body with zlib, in steps whose output never exceeds the buffer given, and knows
/// whether the stream reached its end (the gzip trailer, deflate's final block).
///
/// Trawl decodes bodies itself instead of letting libcurl do it (`CURLOPT_HTTP_CONTENT_DECODING` off): libcurl
/// 7.88 decodes a whole network read at once, so a slow consumer that pauses a highly compressed stream makes it
/// hold up to 64 MB of decoded bytes and then fail with "Out of memory", and it accepts a stream that ends before
/// its trailer as a complete body.
final class ContentDecoder {
    enum Encoding { case gzip, deflate }

    struct Step {
        /// Input bytes used, output bytes written.
        var consumed: Int
        var produced: Int
    }

    /// `nil` for no encoding (absent, `identity`); `.failure` names an encoding Trawl did not ask for.
    static func encoding(for value: String) -> Result<Encoding?, UnsupportedEncoding> {
        let trimmed = value.utf8.drop { $0 == 32 || $0 == 9 }.reversed().drop { $0 == 32 || $0 == 9 }.reversed()
        switch String(decoding: trimmed, as: UTF8.self).lowercased() {
        case "", "identity": return .success(nil)
        case "gzip", "x-gzip": return .success(.gzip)
        case "deflate": return .success(.deflate)
        default: return .failure(UnsupportedEncoding(value: String(value.prefix(60))))
        }
    }

    struct UnsupportedEncoding: Error { var value: String }
    struct Corrupt: Error { var detail: String }

    let encoding: Encoding
    private let stream: UnsafeMutablePointer<z_stream>
    /// The stream reached its end (and no further gzip member started).
    private(set) var ended = false
    /// Input seen so far.
    private(set) var compressedBytes = 0
    private var triedRawDeflate = false

    init?(_ encoding: Encoding) {
        self.encoding = encoding
        stream = .allocate(capacity: 1)
        stream.initialize(to: z_stream())
        // 15 + 16: a gzip wrapper only; 15: a zlib wrapper (what `deflate` means; raw deflate is tried on failure).
        guard trawl_inflate_init(stream, encoding == .gzip ? 31 : 15) == Z_OK else {
            stream.deallocate()
            return nil
        }
    }

    deinit {
        inflateEnd(stream)
        stream.deinitialize(count: 1)
        stream.deallocate()
    }

    /// Decodes from `input` into `output` until either is used up or the stream ends.
    func decode(_ input: UnsafeRawBufferPointer, into output: UnsafeMutableRawBufferPointer) throws(Corrupt) -> Step {
        if ended {
            guard !input.isEmpty else { return Step(consumed: 0, produced: 0) }
            // Another gzip member may follow (RFC 1952 allows several); anything else after the end is ignored.
            guard encoding == .gzip, input[0] == 0x1F, inflateReset(stream) == Z_OK else {
                return Step(consumed: input.count, produced: 0)
            }
            ended = false
        }
        let inputCount = min(input.count, Int(UInt32.max))
        stream.pointee.next_in = UnsafeMutablePointer(mutating: input.baseAddress?.assumingMemoryBound(to: Bytef.self))
        stream.pointee.avail_in = UInt32(inputCount)
        stream.pointee.next_out = output.baseAddress?.assumingMemoryBound(to: Bytef.self)
        stream.pointee.avail_out = UInt32(min(output.count, Int(UInt32.max)))
        let firstInput = compressedBytes == 0
        let result = inflate(stream, Z_NO_FLUSH)
        let step = Step(
            consumed: inputCount - Int(stream.pointee.avail_in),
            produced: output.count - Int(stream.pointee.avail_out))
        stream.pointee.next_in = nil
        stream.pointee.next_out = nil
        compressedBytes += step.consumed
        switch result {
        case Z_OK, Z_BUF_ERROR:
            return step
        case Z_STREAM_END:
            ended = true
            return step
        case Z_DATA_ERROR where encoding == .deflate && firstInput && !triedRawDeflate:
            // Some servers send raw deflate without the zlib wrapper, as curl also accepts: start again raw.
            triedRawDeflate = true
            compressedBytes = 0
            guard inflateReset2(stream, -15) == Z_OK else { throw Corrupt(detail: "zlib could not restart") }
            return try decode(input, into: output)
        default:
            let message = stream.pointee.msg.map { String(cString: $0) } ?? "zlib error \(result)"
            throw Corrupt(detail: message)
        }
    }
}

/// A compressed body on its way to the consumer: decodes each chunk libcurl delivers in bounded steps, enforces the
/// decompression-ratio limit, and survives a consumer's pause without making libcurl hold decoded bytes (libcurl
/// redelivers the paused chunk from its start; the bytes of it already decoded are skipped).
final class DecodedBody {
    enum Delivery { case accepted, paused, aborted }
    enum Outcome {
        case consumed(Int)
        case pause
        case abort
        case failed(code: TrawlError.Code, message: String, hint: String?, remedy: TrawlError.Remedy?)
    }

    let decoder: ContentDecoder
    private let maxRatio: Int?
    private var output = [UInt8](repeating: 0, count: 64 << 10)
    /// Decoded bytes the consumer has not taken yet (it paused).
    private var pending: [UInt8] = []
    /// Leading bytes of the next delivery that were decoded before a pause.
    private var resumeSkip = 0
    private(set) var decodedBytes = 0

    /// Below this many decoded bytes the ratio is not checked (small bodies compress well).
    static let ratioFloor = 1 << 20

    init(decoder: ContentDecoder, maxRatio: Int?) {
        self.decoder = decoder
        self.maxRatio = maxRatio
    }

    /// Whether the body began but its compressed stream did not end (a gzip body without its trailer).
    var endedEarly: Bool { decoder.compressedBytes > 0 && !decoder.ended }

    func receive(_ raw: UnsafeRawBufferPointer, deliver: (UnsafeRawBufferPointer) -> Delivery) -> Outcome {
        if !pending.isEmpty {
            switch pending.withUnsafeBytes(deliver) {
            case .accepted: pending.removeAll(keepingCapacity: true)
            case .paused: return .pause
            case .aborted: return .abort
            }
        }
        var offset = min(resumeSkip, raw.count)
        resumeSkip -= offset
        while offset < raw.count || !decoder.ended {
            let step: ContentDecoder.Step
            do {
                step = try output.withUnsafeMutableBytes { buffer in
                    try decoder.decode(UnsafeRawBufferPointer(rebasing: raw[offset...]), into: buffer)
                }
            } catch {
                let detail = (error as? ContentDecoder.Corrupt)?.detail ?? "\(error)"
                let position = "after \(decoder.compressedBytes) compressed bytes"
                return .failed(
                    code: .decodingFailed, message: "the body's \(decoder.encoding) data is corrupt (\(detail)) \(position)",
                    hint: "the server sent corrupt compressed data; retry, or request it uncompressed", remedy: nil)
            }
            offset += step.consumed
            guard step.produced > 0 else {
                if step.consumed == 0 { break }  // needs more input
                continue
            }
            decodedBytes += step.produced
            if let maxRatio, decodedBytes > Self.ratioFloor,
               decodedBytes / max(decoder.compressedBytes, 1) > maxRatio {
                let sizes: String = "(\(decodedBytes) bytes from \(decoder.compressedBytes))"
                return .failed(
                    code: .tooLarge,
                    message: "the body decompresses to more than \(maxRatio) times its compressed size \(sizes): "
                        + "refused as a decompression bomb",
                    hint: nil, remedy: .decompressionRatio)
            }
            let delivery = output.withUnsafeBytes { deliver(UnsafeRawBufferPointer(rebasing: $0[..<step.produced])) }
            switch delivery {
            case .accepted:
                continue
            case .paused:
                pending = Array(output[..<step.produced])
                resumeSkip = offset
                return .pause
            case .aborted:
                return .abort
            }
        }
        return .consumed(raw.count)
    }
}
