import NIOCore

/// The deterministic content of `/download/N?seed=S`: byte `i` comes from a SplitMix64 hash of
/// `i / 8` and the seed, so every offset and every seed gives different bytes (a range fetched at
/// the wrong offset, or a resumed download of a changed resource, never looks right by accident).
///
/// ```swift
/// let body = try RawHTTPClient.fetch(port: server.port, "/download/1000?seed=3").body
/// #expect(body == DownloadContent.bytes(0..<1000, seed: 3))
/// ```
public enum DownloadContent {
    /// The content bytes at offsets `range` for `seed` (the same for every `N` that covers them).
    ///
    /// ```swift
    /// let tail = DownloadContent.bytes(500..<1000, seed: 0)   // what `Range: bytes=500-999` answers
    /// ```
    public static func bytes(_ range: Range<Int>, seed: Int) -> [UInt8] {
        [UInt8](unsafeUninitializedCapacity: range.count) { buffer, initialized in
            fill(UnsafeMutableRawBufferPointer(buffer), from: range.lowerBound, seed: seed)
            initialized = range.count
        }
    }

    /// The byte at `offset` for `seed`.
    ///
    /// ```swift
    /// #expect(body[10] == DownloadContent.byte(at: 10, seed: 0))
    /// ```
    public static func byte(at offset: Int, seed: Int) -> UInt8 {
        UInt8(truncatingIfNeeded: word(offset >> 3, seed: seed) >> UInt64((offset & 7) * 8))
    }

    /// Writes the content bytes `offset ..< offset + buffer.count` into `buffer`.
    static func fill(_ buffer: UnsafeMutableRawBufferPointer, from offset: Int, seed: Int) {
        var index = 0
        while index < buffer.count {
            let position = offset + index
            var value = word(position >> 3, seed: seed) >> UInt64((position & 7) * 8)
            let count = min(8 - (position & 7), buffer.count - index)
            for _ in 0..<count {
                buffer[index] = UInt8(truncatingIfNeeded: value)
                value >>= 8
                index += 1
            }
        }
    }

    /// SplitMix64 of the word index, keyed by the seed.
    private static func word(_ index: Int, seed: Int) -> UInt64 {
        var z = UInt64(bitPattern: Int64(index)) &+ UInt64(bitPattern: Int64(seed)) &* 0xD1B5_4A32_D192_ED03
        z = z &* 0x9E37_79B9_7F4A_7C15 &+ 0x9E37_79B9_7F4A_7C15
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

/// The bytes `range` of a `/download` body, in writes of `chunkSize`, each optionally after a pause
/// (for `delay_ms` and `rate`).
final class DownloadSource: BodySource {
    private let end: Int
    private let seed: Int
    private let chunkSize: Int
    private let pause: TimeAmount?
    private var offset: Int
    private var pauseNext: Bool

    init(range: Range<Int>, seed: Int, chunkSize: Int, pause: TimeAmount?) {
        self.offset = range.lowerBound
        self.end = range.upperBound
        self.seed = seed
        self.chunkSize = max(1, min(chunkSize, Pattern.maxSlice))
        self.pause = pause
        self.pauseNext = pause != nil
    }

    var isComplete: Bool {
        self.offset >= self.end
    }

    func next(allocator: ByteBufferAllocator) -> BodyStep {
        guard self.offset < self.end else { return .end }
        if let pause = self.pause, self.pauseNext {
            self.pauseNext = false
            return .pause(pause)
        }
        self.pauseNext = self.pause != nil
        let length = min(self.chunkSize, self.end - self.offset)
        var buffer = allocator.buffer(capacity: length)
        buffer.writeWithUnsafeMutableBytes(minimumWritableBytes: length) { pointer in
            DownloadContent.fill(
                UnsafeMutableRawBufferPointer(rebasing: pointer[..<length]),
                from: self.offset,
                seed: self.seed
            )
            return length
        }
        self.offset += length
        return .data(buffer)
    }
}
