import Foundation
import TrawlEngine

/// The proof behind a unit's checkpoint: beside each segment (`segments/ORDINAL.jsonl`) an index
/// (`segments/ORDINAL.pages`) holds one 16-byte record per committed page — its byte length and checksum
/// (`PageHash`; `SerialPageHash` or `PageChecksum` in indexes written before it), little-endian — written and
/// `fsync`ed with the page. The checkpoint records, besides the page count (with the pages of a re-read after drift)
/// and segment length, a checksum over the index records it counts (`pageDigest`).
///
/// A resume checks all three against each other before it writes anything: the records must be at least as many
/// as the checkpoint's pages, their checksum must be the recorded one, their lengths must add up to the recorded
/// segment length, and every page's bytes in the segment must match its record. Any mismatch (a page count edited
/// beyond or below the segment, a flipped byte, a truncated index) refuses the run, naming the file and offset:
/// exit 0 must mean the output is exactly right. What a crash left past the checkpoint is cut away.
enum SegmentIndex {
    static let recordSize = 16

    static func path(segment: String) -> String {
        String(segment.dropLast(".jsonl".count)) + ".pages"
    }

    /// The record of a page whose lines are `lines`.
    static func record(_ lines: [UInt8]) -> [UInt8] {
        littleEndian(UInt64(lines.count)) + littleEndian(PageHash.of(lines))
    }

    /// `previous` (a unit's `pageDigest`, nil before its first page) continued over `record`.
    static func digest(_ previous: String?, adding record: [UInt8]) -> String {
        var sum = previous.flatMap { UInt64($0, radix: 16) }.map { PageChecksum(continuing: $0) } ?? PageChecksum()
        sum.update(record)
        return hex(sum.value)
    }

    /// Checks the unit's checkpointed state against its index and segment (see the type's documentation), then
    /// cuts both back to what the checkpoint counts. Throws `JobError` naming the file and offset on a mismatch.
    static func verify(
        _ state: Checkpoint.UnitState, segment: DurableFile, index: DurableFile
    ) throws {
        let hint = "the state was changed outside trawl; pass --restart to fetch everything again"
        // The segment's pages: the walk's, then those a re-read after drift added.
        let (pages, overflow) = state.pages.addingReportingOverflow(state.rereadPages ?? 0)
        guard state.pages >= 0, (state.rereadPages ?? 0) >= 0, !overflow, state.segment >= 0 else {
            throw JobError.state(
                "the checkpoint counts \(state.pages) page(s) and \(state.segment) bytes of \(segment.path) for unit"
                    + " \(state.id)",
                hint: hint)
        }
        if index.created, pages > 0, state.pageDigest == nil {
            throw JobError.state(
                "\(segment.path) has no page index (\(index.path)): its checkpoint was written by an older trawl",
                hint: "pass --restart to fetch everything again")
        }
        let indexBytes = try DurableFiles.read(index.path) ?? []
        let available = indexBytes.count / recordSize
        guard available >= pages else {
            throw JobError.state(
                "the checkpoint counts \(pages) page(s) of unit \(state.id) but \(index.path) records only"
                    + " \(available) (it ends at offset \(indexBytes.count))",
                hint: hint)
        }
        var sum = PageChecksum()
        for page in 0..<pages {
            sum.update(indexBytes[page * recordSize..<(page + 1) * recordSize])
        }
        let expectedDigest = pages == 0 ? nil : hex(sum.value)
        guard state.pageDigest == expectedDigest else {
            throw JobError.state(
                "the checkpoint's page checksum for unit \(state.id) does not match the first \(pages) record(s)"
                    + " of \(index.path) (offsets 0 to \(pages * recordSize))",
                hint: hint)
        }
        var records: [(length: Int64, checksum: UInt64)] = []
        var total: Int64 = 0
        for page in 0..<pages {
            let start = page * recordSize
            let length = Int64(bitPattern: value(indexBytes[start..<start + 8]))
            let sum = total.addingReportingOverflow(length)
            guard length >= 0, !sum.overflow else {
                throw JobError.state("\(index.path): the record at offset \(start) is not a page length", hint: hint)
            }
            total = sum.partialValue
            records.append((length, value(indexBytes[start + 8..<start + recordSize])))
        }
        guard total == state.segment else {
            throw JobError.state(
                "the checkpoint counts \(pages) page(s) of unit \(state.id), which end at offset \(total) of"
                    + " \(segment.path), but it records the segment as \(state.segment) bytes",
                hint: hint)
        }
        guard segment.length >= total else {
            throw JobError.state(
                "\(segment.path) ends at offset \(segment.length), but the checkpoint's \(pages) page(s) end at"
                    + " offset \(total)",
                hint: hint)
        }
        try checkPages(records, in: segment.path, hint: hint)
        try index.truncate(to: Int64(pages * recordSize))
        try segment.truncate(to: state.segment)
    }

    /// Reads the segment page by page and compares each page's checksum with its record.
    private static func checkPages(_ records: [(length: Int64, checksum: UInt64)], in path: String, hint: String)
        throws
    {
        guard let handle = FileHandle(forReadingAtPath: path) else { throw FileError("open", path, reason: "missing") }
        defer { try? handle.close() }
        var offset: Int64 = 0
        for (page, record) in records.enumerated() {
            // Indexes written by earlier releases hold `SerialPageHash` values (tag 0xA5) or FNV-1a values
            // (`PageChecksum`, any top byte): the hash the record's tag names and FNV-1a are computed, and a record
            // matches either.
            let tag = record.checksum >> 56
            var hash = tag == PageHash.tag ? PageHash() : nil
            var serial = tag == SerialPageHash.tag ? SerialPageHash() : nil
            var sum = PageChecksum()
            var remaining = record.length
            while remaining > 0 {
                let data = try handle.read(upToCount: Int(min(remaining, 1 << 20))) ?? Data()
                guard !data.isEmpty else {
                    throw JobError.state("\(path) ends inside page \(page + 1) (offset \(offset))", hint: hint)
                }
                let bytes = [UInt8](data)
                hash?.update(bytes)
                serial?.update(bytes)
                sum.update(bytes)
                remaining -= Int64(data.count)
            }
            let hashed = hash?.value ?? serial?.value
            guard hashed == record.checksum || sum.value == record.checksum else {
                throw JobError.state(
                    "\(path): page \(page + 1) (bytes \(offset) to \(offset + record.length)) does not match the"
                        + " checksum recorded when it was committed",
                    hint: hint)
            }
            offset += record.length
        }
    }

    private static func littleEndian(_ value: UInt64) -> [UInt8] {
        (0..<8).map { UInt8(truncatingIfNeeded: value >> (8 * $0)) }
    }

    private static func value(_ bytes: ArraySlice<UInt8>) -> UInt64 {
        bytes.reversed().reduce(0) { $0 << 8 | UInt64($1) }
    }

    private static func hex(_ value: UInt64) -> String {
        let digits = String(value, radix: 16)
        return String(repeating: "0", count: 16 - digits.count) + digits
    }
}
