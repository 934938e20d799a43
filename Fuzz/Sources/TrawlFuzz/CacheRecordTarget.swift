import Foundation

@testable import Trawl

/// `DiskResponseCache.record` on any bytes found in a cache directory: never a crash, and a record it accepts is
/// one the cache could have written: a length not below 0, a 64-hex-digit checksum, at most `mostRecordHeaders`
/// fields of a name and a value each, and the same record again once written back and read.
enum CacheRecordTarget {
    static func run(_ input: [UInt8]) {
        guard let record = DiskResponseCache.record(Data(input)) else { return }
        require(input.count <= DiskResponseCache.longestRecord, "a record of \(input.count) bytes was read")
        require(record.length >= 0, "length \(record.length)")
        require(record.sha256.utf8.count == 64 && record.sha256.allSatisfy(\.isHexDigit), "sha256 \(record.sha256)")
        require(record.headers.count <= DiskResponseCache.mostRecordHeaders, "\(record.headers.count) headers")
        require(record.headers.allSatisfy { $0.count == 2 }, "a header that is not a name and a value")
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        guard let written = try? encoder.encode(record) else {
            require(false, "an accepted record cannot be written back")
            return
        }
        let again = DiskResponseCache.record(written)
        require(again?.headers == record.headers && again?.length == record.length, "a record changes when rewritten")
        require(again?.sha256 == record.sha256 && again?.etag == record.etag, "a record changes when rewritten")
    }
}
