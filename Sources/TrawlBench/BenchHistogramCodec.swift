import Foundation
import Histogram
import TrawlEngine

/// A latency histogram in HdrHistogram's compressed V2 encoding, base64 (the form its log format and every
/// HdrHistogram port read and write: `HISTF…`), so that results of several bench processes merge exactly.
///
/// Layout (big-endian): cookie `0x1c849314`, length of the zlib stream, the zlib stream of: cookie `0x1c849313`,
/// payload length, normalizing index offset (0), significant digits, lowest discernible value, highest trackable
/// value, integer-to-double ratio (1.0), then the counts array in ZigZag LEB128, a run of k > 1 empty counts
/// written as -k.
///
/// ```swift
/// let text = BenchHistogramCodec.encode(histogram)
/// let same = try BenchHistogramCodec.decode(text)   // same counts, so the same percentiles
/// ```
package enum BenchHistogramCodec {
    static let compressedCookie: UInt32 = 0x1c84_9314
    static let cookie: UInt32 = 0x1c84_9313
    /// The layout of trawl's latency histograms (1 µs, 3 significant digits); another is refused on decode.
    static let subBucketHalfCountMagnitude = 10
    static let subBucketHalfCount = 1 << subBucketHalfCountMagnitude
    static let subBucketMask: UInt64 = 2047
    static let leadingZeroCountBase = 53
    /// Latencies are at most an hour in microseconds; the counts array ends there.
    static let largestValue: UInt64 = 3_600_000_000
    static var countsLength: Int { index(of: largestValue) + 1 }
    /// The longest base64 text accepted, and the most a decoded blob may inflate to.
    static let maxTextLength = 1 << 20
    static let maxInflated = 1 << 20

    package struct DecodeError: Error, CustomStringConvertible {
        package let description: String
    }

    static func index(of value: UInt64) -> Int {
        let bucket = leadingZeroCountBase - (value | subBucketMask).leadingZeroBitCount
        let subBucket = Int(value >> UInt64(bucket))
        return ((bucket + 1) << subBucketHalfCountMagnitude) + subBucket - subBucketHalfCount
    }

    static func value(at index: Int) -> UInt64 {
        var bucket = (index >> subBucketHalfCountMagnitude) - 1
        var subBucket = (index & (subBucketHalfCount - 1)) + subBucketHalfCount
        if bucket < 0 {
            subBucket -= subBucketHalfCount
            bucket = 0
        }
        return UInt64(subBucket) << UInt64(bucket)
    }

    package static func encode(_ histogram: BenchHistogram) -> String {
        var counts: [(index: Int, count: UInt64)] = []
        for recorded in histogram.recordedValues() where recorded.count > 0 {
            counts.append((index(of: recorded.value), recorded.count))
        }
        counts.sort { $0.index < $1.index }
        var payload: [UInt8] = []
        var next = 0
        for entry in counts {
            let zeros = entry.index - next
            if zeros == 1 { putZigZag(0, into: &payload) } else if zeros > 1 { putZigZag(-Int64(zeros), into: &payload) }
            putZigZag(Int64(clamping: entry.count), into: &payload)
            next = entry.index + 1
        }
        var inner: [UInt8] = []
        put(cookie, into: &inner)
        put(UInt32(payload.count), into: &inner)
        put(UInt32(0), into: &inner)
        put(UInt32(3), into: &inner)
        put(UInt64(1), into: &inner)
        put(Swift.max(histogram.highestTrackableValue, 2), into: &inner)
        put(Double(1).bitPattern, into: &inner)
        inner += payload
        let compressed = ZlibBlock.compress(inner) ?? []
        var outer: [UInt8] = []
        put(compressedCookie, into: &outer)
        put(UInt32(compressed.count), into: &outer)
        outer += compressed
        return Data(outer).base64EncodedString()
    }

    /// The histogram `text` encodes. Input from outside: its size, its header and every count are checked, and
    /// only trawl's layout (lowest value 1, 3 significant digits, values up to an hour in µs) is accepted.
    ///
    /// The encoding keeps counts per bucket, not the exact largest value; `maxValue` (the JSON's `max_us`), when it
    /// falls in the last bucket, is recorded as one of that bucket's counts, so that p100 and the percentiles the
    /// histogram clamps to its maximum come out as the original's.
    package static func decode(_ text: String, maxValue: UInt64? = nil) throws(DecodeError) -> BenchHistogram {
        func fail(_ why: String) -> DecodeError { DecodeError(description: "histogram: \(why)") }
        guard text.utf8.count <= maxTextLength, let data = Data(base64Encoded: text) else {
            throw fail("not base64 (or longer than \(maxTextLength) characters)")
        }
        let outer = [UInt8](data)
        var reader = Reader(bytes: outer)
        guard reader.uint32() == compressedCookie else { throw fail("not HdrHistogram's compressed V2 encoding") }
        guard let length = reader.uint32(), Int(length) == outer.count - 8 else { throw fail("wrong length") }
        guard let inner = ZlibBlock.decompress(Array(outer[8...]), limit: maxInflated) else {
            throw fail("the zlib stream is corrupt or inflates past \(maxInflated) bytes")
        }
        reader = Reader(bytes: inner)
        guard reader.uint32() == cookie else { throw fail("not a V2 histogram") }
        guard let payloadLength = reader.uint32(), Int(payloadLength) == inner.count - 40 else {
            throw fail("wrong payload length")
        }
        guard reader.uint32() == 0, reader.uint32() == 3, reader.uint64() == 1, let highest = reader.uint64(),
            highest >= 2, reader.uint64() == Double(1).bitPattern
        else {
            throw fail("not trawl's layout (1 µs, 3 significant digits, no index offset)")
        }
        var histogram = BenchHistogram.benchLatencies()
        _ = highest
        let limit = countsLength
        var index = 0
        var total: UInt64 = 0
        var last: (index: Int, count: UInt64)?
        while !reader.atEnd {
            guard let word = reader.zigZag() else { throw fail("a count is cut short") }
            if word < 0 {
                guard word > -Int64(limit) else { throw fail("a run of empty counts is too long") }
                index += Int(-word)
                guard index <= limit else { throw fail("counts past an hour") }
                continue
            }
            guard index < limit else { throw fail("counts past an hour") }
            if word > 0 {
                let (sum, overflow) = total.addingReportingOverflow(UInt64(word))
                guard !overflow, sum <= UInt64(Int64.max) else { throw fail("counts overflow") }
                total = sum
                if let last { _ = histogram.record(value(at: last.index), count: last.count) }
                last = (index, UInt64(word))
            }
            index += 1
        }
        if let last {
            if let maxValue, maxValue <= largestValue, Self.index(of: maxValue) == last.index {
                if last.count > 1 { _ = histogram.record(value(at: last.index), count: last.count - 1) }
                _ = histogram.record(maxValue)
            } else {
                _ = histogram.record(value(at: last.index), count: last.count)
            }
        }
        return histogram
    }

    private static func put<T: FixedWidthInteger>(_ value: T, into bytes: inout [UInt8]) {
        withUnsafeBytes(of: value.bigEndian) { bytes += $0 }
    }

    /// ZigZag, then LEB128 in at most 9 bytes (the ninth holds 8 bits), as HdrHistogram writes its counts.
    private static func putZigZag(_ value: Int64, into bytes: inout [UInt8]) {
        var rest = UInt64(bitPattern: (value << 1) ^ (value >> 63))
        for _ in 0..<8 {
            if rest < 0x80 {
                bytes.append(UInt8(rest))
                return
            }
            bytes.append(UInt8(rest & 0x7F) | 0x80)
            rest >>= 7
        }
        bytes.append(UInt8(truncatingIfNeeded: rest))
    }

    private struct Reader {
        let bytes: [UInt8]
        var offset = 0
        var atEnd: Bool { offset >= bytes.count }

        mutating func integer<T: FixedWidthInteger>(_: T.Type) -> T? {
            let size = MemoryLayout<T>.size
            guard offset + size <= bytes.count else { return nil }
            var value: T = 0
            for byte in bytes[offset..<offset + size] { value = value << 8 | T(byte) }
            offset += size
            return value
        }

        mutating func uint32() -> UInt32? { integer(UInt32.self) }
        mutating func uint64() -> UInt64? { integer(UInt64.self) }

        mutating func zigZag() -> Int64? {
            var result: UInt64 = 0
            for step in 0..<9 {
                guard offset < bytes.count else { return nil }
                let byte = bytes[offset]
                offset += 1
                if step == 8 {
                    result |= UInt64(byte) << 56
                    break
                }
                result |= UInt64(byte & 0x7F) << UInt64(7 * step)
                if byte & 0x80 == 0 { break }
            }
            return Int64(bitPattern: result >> 1) ^ -Int64(bitPattern: result & 1)
        }
    }
}
