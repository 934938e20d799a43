/// The page checksum of segment indexes written before `PageHash` took four lanes (values tagged 0xA5): one
/// multiply chain over eight bytes per step. Kept so that a resume still checks those indexes.
///
/// ```swift
/// var hash = SerialPageHash()
/// hash.update(Array("{\"id\":1}\n".utf8))
/// print(hash.value)
/// ```
public struct SerialPageHash: Sendable, Hashable {
    /// The top byte of every value.
    public static let tag: UInt64 = 0xA5
    private var state: UInt64 = 0x9E37_79B9_7F4A_7C15
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
        while pendingCount > 0 && i < count {
            takeByte(base.load(fromByteOffset: i, as: UInt8.self))
            i += 1
        }
        var h = state
        while i + 8 <= count {
            h = Self.mix(h, UInt64(littleEndian: base.loadUnaligned(fromByteOffset: i, as: UInt64.self)))
            i += 8
        }
        state = h
        while i < count {
            takeByte(base.load(fromByteOffset: i, as: UInt8.self))
            i += 1
        }
    }

    @inline(__always)
    private mutating func takeByte(_ byte: UInt8) {
        pending |= UInt64(byte) << (8 * UInt64(pendingCount))
        pendingCount += 1
        if pendingCount == 8 {
            state = Self.mix(state, pending)
            pending = 0
            pendingCount = 0
        }
    }

    @inline(__always)
    private static func mix(_ h: UInt64, _ word: UInt64) -> UInt64 {
        let x = (h ^ word) &* 0xFF51_AFD7_ED55_8CCD
        return x ^ (x >> 29)
    }

    public var value: UInt64 {
        var h = Self.mix(state, pending ^ UInt64(pendingCount) << 59)
        h = Self.mix(h, length)
        h ^= h >> 33
        h = h &* 0xC4CE_B9FE_1A85_EC53
        h ^= h >> 33
        return Self.tag << 56 | (h & 0x00FF_FFFF_FFFF_FFFF)
    }

    /// The hash of `bytes` alone.
    public static func of(_ bytes: [UInt8]) -> UInt64 {
        var hash = SerialPageHash()
        hash.update(bytes)
        return hash.value
    }
}
