/// Bulk byte copies that stay memcpy-fast in debug builds too (generic sequence initialisers walk
/// element by element without optimisation, which makes a debug build far slower on large bodies).
extension Array where Element == UInt8 {
    init(copying bytes: UnsafeRawBufferPointer) {
        self.init(unsafeUninitializedCapacity: bytes.count) { buffer, count in
            UnsafeMutableRawBufferPointer(buffer).copyMemory(from: bytes)
            count = bytes.count
        }
    }

    init(concatenating chunks: [[UInt8]]) {
        let total = chunks.reduce(0) { $0 + $1.count }
        self.init(unsafeUninitializedCapacity: total) { buffer, count in
            let target = UnsafeMutableRawBufferPointer(buffer)
            var offset = 0
            for chunk in chunks {
                chunk.withUnsafeBytes { raw in
                    UnsafeMutableRawBufferPointer(rebasing: target[offset..<(offset + raw.count)]).copyMemory(from: raw)
                }
                offset += chunk.count
            }
            count = total
        }
    }

    /// Appends raw bytes with one memcpy. (`append(contentsOf:)` over a contiguous buffer is a bulk copy in
    /// debug and release builds alike; growing through `repeatElement` first walks every byte.)
    mutating func append(copying bytes: UnsafeRawBufferPointer) {
        append(contentsOf: bytes)
    }
}
