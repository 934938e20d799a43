/// Bulk byte copies that stay memcpy-fast in debug builds too (generic sequence initialisers walk
/// element by element without optimisation, which made a debug build 50x slower on large bodies).
extension Array where Element == UInt8 {
    init(copying bytes: UnsafeRawBufferPointer) {
        self.init(unsafeUninitializedCapacity: bytes.count) { buffer, count in
            if let base = bytes.baseAddress, bytes.count > 0 {
                UnsafeMutableRawPointer(buffer.baseAddress!).copyMemory(from: base, byteCount: bytes.count)
            }
            count = bytes.count
        }
    }

    init(concatenating chunks: [[UInt8]]) {
        let total = chunks.reduce(0) { $0 + $1.count }
        self.init(unsafeUninitializedCapacity: total) { buffer, count in
            var offset = 0
            for chunk in chunks {
                chunk.withUnsafeBytes { raw in
                    if let base = raw.baseAddress, raw.count > 0 {
                        UnsafeMutableRawPointer(buffer.baseAddress! + offset).copyMemory(from: base, byteCount: raw.count)
                    }
                }
                offset += chunk.count
            }
            count = total
        }
    }

    mutating func append(copying bytes: UnsafeRawBufferPointer) {
        guard let base = bytes.baseAddress, bytes.count > 0 else { return }
        let start = count
        reserveCapacity(Swift.max(start + bytes.count, start * 2))
        append(contentsOf: repeatElement(0, count: bytes.count))
        withUnsafeMutableBytes { raw in
            (raw.baseAddress! + start).copyMemory(from: base, byteCount: bytes.count)
        }
    }
}
