/// A 64-bit FNV-1a checksum, to notice bytes changed on disk (not an adversary: a flipped bit, a truncated or
/// edited file). Fast enough to run over every committed page.
///
/// ```swift
/// var sum = PageChecksum()
/// sum.update(Array("{\"id\":1}\n".utf8))
/// print(sum.value)
/// ```
public struct PageChecksum: Sendable, Hashable {
    public private(set) var value: UInt64 = 0xcbf2_9ce4_8422_2325

    public init() {}

    public init(continuing value: UInt64) { self.value = value }

    public mutating func update(_ bytes: [UInt8]) {
        bytes.withUnsafeBufferPointer { update($0) }
    }

    public mutating func update(_ bytes: ArraySlice<UInt8>) {
        bytes.withUnsafeBufferPointer { update($0) }
    }

    private mutating func update(_ bytes: UnsafeBufferPointer<UInt8>) {
        var hash = value
        for byte in bytes {
            hash ^= UInt64(byte)
            hash = hash &* 0x0000_0100_0000_01b3
        }
        value = hash
    }

    /// The checksum of `bytes` alone.
    public static func of(_ bytes: [UInt8]) -> UInt64 {
        var sum = PageChecksum()
        sum.update(bytes)
        return sum.value
    }
}
