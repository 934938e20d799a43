/// A growable byte buffer on manually managed memory, for the parser callbacks' hot path.
///
/// It is a plain struct that owns its memory: the single owner calls `release()` exactly once and
/// never copies it. Raw-pointer work for recorded bytes stays in this type.
struct ByteBuffer {
    private(set) var base: UnsafeMutableRawPointer?
    private(set) var count = 0
    private(set) var capacity = 0

    var isEmpty: Bool { count == 0 }

    mutating func release() {
        base?.deallocate()
        base = nil
        count = 0
        capacity = 0
    }

    /// Makes room for `extra` more bytes and returns where they go.
    @inline(__always)
    mutating func reserve(_ extra: Int) -> UnsafeMutableRawPointer {
        if _slowPath(count + extra > capacity) { grow(count + extra) }
        return base.unsafelyUnwrapped + count
    }

    @inline(never)
    private mutating func grow(_ needed: Int) {
        var newCapacity = Swift.max(capacity * 2, 4096)
        while newCapacity < needed { newCapacity *= 2 }
        let newBase = UnsafeMutableRawPointer.allocate(byteCount: newCapacity, alignment: 8)
        if let base {
            newBase.copyMemory(from: base, byteCount: count)
            base.deallocate()
        }
        base = newBase
        capacity = newCapacity
    }

    /// Records that `n` bytes were written at the pointer `reserve` returned.
    @inline(__always)
    mutating func commit(_ n: Int) {
        count += n
    }

    @inline(__always)
    mutating func append(_ byte: UInt8) {
        reserve(1).storeBytes(of: byte, as: UInt8.self)
        count += 1
    }

    @inline(__always)
    mutating func append(_ bytes: UnsafeRawPointer, _ n: Int) {
        guard n > 0 else { return }
        reserve(n).copyMemory(from: bytes, byteCount: n)
        count += n
    }

    mutating func append(_ bytes: UnsafeRawBufferPointer) {
        if let address = bytes.baseAddress { append(address, bytes.count) }
    }

    @inline(__always)
    mutating func appendUInt32(_ value: UInt32) {
        reserve(4).storeBytes(of: value, as: UInt32.self)
        count += 4
    }

    @inline(__always)
    func loadUInt32(at offset: Int) -> UInt32 {
        base.unsafelyUnwrapped.loadUnaligned(fromByteOffset: offset, as: UInt32.self)
    }

    @inline(__always)
    func storeUInt32(_ value: UInt32, at offset: Int) {
        base.unsafelyUnwrapped.storeBytes(of: value, toByteOffset: offset, as: UInt32.self)
    }

    /// The bytes in `range`, valid until the next mutation.
    func bytes(_ range: Range<Int>) -> UnsafeRawBufferPointer {
        guard let base else { return UnsafeRawBufferPointer(start: nil, count: 0) }
        return UnsafeRawBufferPointer(start: base + range.lowerBound, count: range.count)
    }

    /// A Swift array holding a copy of the bytes in `range`.
    func copyBytes(_ range: Range<Int>) -> [UInt8] {
        Array(bytes(range))
    }

    /// Drops the first `n` bytes, moving the rest to the front.
    mutating func removeFirst(_ n: Int) {
        guard n > 0, let base else { return }
        let rest = count - n
        if rest > 0 { base.copyMemory(from: base + n, byteCount: rest) }
        count = rest
    }

    mutating func removeAll() {
        count = 0
    }

    /// Drops everything after the first `n` bytes.
    mutating func truncate(to n: Int) {
        count = n
    }
}
