internal import CZlib

/// Whole-buffer zlib (RFC 1950, with its wrapper) compression of small blobs, such as the compressed form of an
/// HdrHistogram that `trawl bench` puts in its JSON. Package access: not part of the public API.
package enum ZlibBlock {
    /// `bytes` compressed, or nil if zlib fails.
    package static func compress(_ bytes: [UInt8]) -> [UInt8]? {
        var length = compressBound(uLong(bytes.count))
        var output = [UInt8](repeating: 0, count: Int(length))
        let result = output.withUnsafeMutableBufferPointer { out in
            bytes.withUnsafeBufferPointer { input in
                compress2(out.baseAddress, &length, input.baseAddress, uLong(input.count), Z_DEFAULT_COMPRESSION)
            }
        }
        guard result == Z_OK else { return nil }
        output.removeSubrange(Int(length)...)
        return output
    }

    /// `bytes` decompressed, or nil when they are not a zlib stream or decompress to more than `limit` bytes.
    package static func decompress(_ bytes: [UInt8], limit: Int) -> [UInt8]? {
        guard !bytes.isEmpty, limit > 0 else { return nil }
        var length = uLong(limit)
        var output = [UInt8](repeating: 0, count: limit)
        let result = output.withUnsafeMutableBufferPointer { out in
            bytes.withUnsafeBufferPointer { input in
                uncompress(out.baseAddress, &length, input.baseAddress, uLong(input.count))
            }
        }
        guard result == Z_OK else { return nil }
        output.removeSubrange(Int(length)...)
        return output
    }
}
