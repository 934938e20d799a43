/// The checksum of a committed page in the job's segment index: like `PageChecksum` it notices bytes changed on
/// disk (a flipped bit, a truncated or edited file; not an adversary). It reads 32 bytes per step into four
/// independent multiply chains, so the processor runs them side by side (one chain, `SerialPageHash`, waited on
/// each multiply: 2% of `trawl fetch`'s CPU). Values carry `tag` in their top byte, so indexes written before it
/// (`SerialPageHash`'s 0xA5, FNV-1a's) are still read. The value does not depend on how the bytes are split
/// between `update` calls.
///
/// ```swift
/// var hash = PageHash()
/// hash.update(Array("{\"id\":1}\n".utf8))
/// print(hash.value)
/// ```
public struct PageHash: Sendable, Hashable {
    /// The top byte of every value.
    public static let tag: UInt64 = 0xA6
    private var lane0: UInt64 = 0x9E37_79B9_7F4A_7C15
    private var lane1: UInt64 = 0xBF58_476D_1CE4_E5B9
    private var lane2: UInt64 = 0x94D0_49BB_1331_11EB
    private var lane3: UInt64 = 0x2545_F491_4F6C_DD1D
    /// The words of a block not yet whole (`words` of them), and the bytes of a word not yet whole.
    private var word0: UInt64 = 0
    private var word1: UInt64 = 0
    private var word2: UInt64 = 0
    private var words = 0
    private var pending: UInt64 = 0
    private var pendingCount = 0
    private var length: UInt64 = 0

    public init() {}

    public mutating func update(_ bytes: [UInt8]) {
        bytes.withUnsafeBytes { update($0) }
    }

    mutating func update(_ bytes: UnsafeRawBufferPointer) {
        guard let base = bytes.baseAddress else { return }
        let count = bytes.count
        length &+= UInt64(count)
        var i = 0
        while (pendingCount > 0 || words > 0) && i < count {
            takeByte(base.load(fromByteOffset: i, as: UInt8.self))
            i += 1
        }
        var (a, b, c, d) = (lane0, lane1, lane2, lane3)
        while i + 32 <= count {
            a = Self.mix(a, UInt64(littleEndian: base.loadUnaligned(fromByteOffset: i, as: UInt64.self)))
            b = Self.mix(b, UInt64(littleEndian: base.loadUnaligned(fromByteOffset: i + 8, as: UInt64.self)), 31)
            c = Self.mix(c, UInt64(littleEndian: base.loadUnaligned(fromByteOffset: i + 16, as: UInt64.self)), 27)
            d = Self.mix(d, UInt64(littleEndian: base.loadUnaligned(fromByteOffset: i + 24, as: UInt64.self)), 30)
            i += 32
        }
        (lane0, lane1, lane2, lane3) = (a, b, c, d)
        while i < count {
            takeByte(base.load(fromByteOffset: i, as: UInt8.self))
            i += 1
        }
    }

    @inline(__always)
    private mutating func takeByte(_ byte: UInt8) {
        pending |= UInt64(byte) << (8 * UInt64(pendingCount))
        pendingCount += 1
        guard pendingCount == 8 else { return }
        switch words {
        case 0: word0 = pending
        case 1: word1 = pending
        case 2: word2 = pending
        default:
            lane0 = Self.mix(lane0, word0)
            lane1 = Self.mix(lane1, word1, 31)
            lane2 = Self.mix(lane2, word2, 27)
            lane3 = Self.mix(lane3, pending, 30)
        }
        words = (words + 1) % 4
        pending = 0
        pendingCount = 0
    }

    /// Each lane shifts by its own amount: with one amount for all, the compiler packs two lanes into one SSE
    /// register, where a 64-bit multiply takes three 32-bit ones (slower than the four scalar chains).
    @inline(__always)
    private static func mix(_ h: UInt64, _ word: UInt64, _ shift: UInt64 = 29) -> UInt64 {
        let x = (h ^ word) &* 0xFF51_AFD7_ED55_8CCD
        return x ^ (x >> shift)
    }

    public var value: UInt64 {
        var h = Self.mix(Self.mix(Self.mix(Self.mix(length, lane0), lane1), lane2), lane3)
        if words > 0 { h = Self.mix(h, word0) }
        if words > 1 { h = Self.mix(h, word1) }
        if words > 2 { h = Self.mix(h, word2) }
        h = Self.mix(h, pending ^ UInt64(pendingCount) << 59)
        h ^= h >> 33
        h = h &* 0xC4CE_B9FE_1A85_EC53
        h ^= h >> 33
        return Self.tag << 56 | (h & 0x00FF_FFFF_FFFF_FFFF)
    }

    /// The hash of `bytes` alone.
    public static func of(_ bytes: [UInt8]) -> UInt64 {
        var hash = PageHash()
        hash.update(bytes)
        return hash.value
    }
}
