import Foundation
import Trawl
import TrawlEngine
import TrawlJSON

/// After a re-read for drift (``DriftCheck``), a unit's segment holds the first pass's lines and then the
/// re-read's, which writes every item it reads: a key answered twice is in the segment twice. Compaction keeps,
/// for each primary key, only its **last** line (the newest answer), and every line without the key; each page
/// keeps its place and its remaining lines in order, so the segment's page count, and so its checkpoint's, stays
/// what it was.
///
/// It runs on the writer thread when the unit ends, before the unit can be merged:
/// 1. the kept lines go to `N.compact.jsonl` with their page index `N.compact.pages`, both `fsync`ed;
/// 2. the segment and index are renamed to `N.precompact.*`, the compacted files to `N.*`, the directory
///    `fsync`ed;
/// 3. the store writes the checkpoint recording the compacted segment (length, page checksum, items), then removes
///    `N.precompact.*`.
///
/// A crash anywhere in between is settled when the state is opened next (``settle(_:in:)``): the checkpoint's page
/// checksum says which index it counts, so the precompacted files are put back (the old checkpoint) or removed
/// (the new one); leftover `N.compact.*` files are removed.
///
/// Memory: one digest set of the keys and the ordinals of the lines dropped (both bounded by ``DriftCheck``'s cap,
/// which a unit must not be past for compaction to run); pages are read one at a time.
enum SegmentCompaction {
    struct Result: Equatable {
        /// Bytes of the compacted segment.
        var length: Int64
        /// The checkpoint's page checksum over the compacted index (`nil` for no pages).
        var pageDigest: String?
        /// Lines kept.
        var items: Int
        /// Lines dropped: an item whose key a later line of the segment answers again.
        var dropped: Int
    }

    static func compactPath(segment: String) -> String { String(segment.dropLast(".jsonl".count)) + ".compact.jsonl" }
    static func precompactPath(segment: String) -> String {
        String(segment.dropLast(".jsonl".count)) + ".precompact.jsonl"
    }

    /// Compacts the segment at `segment` (its first `pages` pages, as its index records them) by the key at
    /// `key` (a line path: ``DriftCheck/linePath(_:withMeta:)``) and swaps the result into place (steps 1 and 2
    /// above). The caller writes the checkpoint, then calls ``removePrecompacted(segment:)``.
    static func run(segment: String, pages: Int, key: JSONKeyPath) throws -> Result {
        let indexPath = SegmentIndex.path(segment: segment)
        let records = try pageLengths(index: indexPath, pages: pages)
        let dropped = try droppedLines(segment: segment, pages: records, key: key)
        let compact = compactPath(segment: segment)
        let compactIndex = SegmentIndex.path(segment: compact)
        let out = try DurableFile(path: compact, truncatingTo: 0, syncingDirectory: false)
        let outIndex = try DurableFile(path: compactIndex, truncatingTo: 0, syncingDirectory: false)
        defer {
            out.close()
            outIndex.close()
        }
        var result = Result(length: 0, pageDigest: nil, items: 0, dropped: dropped.count)
        var ordinal = 0
        var indexBytes: [UInt8] = []
        try forEachPage(segment: segment, pages: records) { lines in
            var kept: [UInt8] = []
            kept.reserveCapacity(lines.count)
            DriftCheck.forEachLine(lines) { line in
                defer { ordinal += 1 }
                guard !dropped.contains(ordinal) else { return }
                kept += line
                kept.append(UInt8(ascii: "\n"))
                result.items += 1
            }
            if !kept.isEmpty { try out.append(kept) }
            let record = SegmentIndex.record(kept)
            indexBytes += record
            result.pageDigest = SegmentIndex.digest(result.pageDigest, adding: record)
            result.length += Int64(kept.count)
        }
        try outIndex.append(indexBytes)
        try out.sync()
        try outIndex.sync()
        try swap(segment: segment)
        return result
    }

    /// Step 2: the segment and its index become `N.precompact.*`, the compacted ones `N.*`; the directory is
    /// `fsync`ed. (The order matters to ``settle(_:in:)``.)
    static func swap(segment: String) throws {
        let compact = compactPath(segment: segment)
        let precompact = precompactPath(segment: segment)
        for (from, to) in [
            (segment, precompact), (SegmentIndex.path(segment: segment), SegmentIndex.path(segment: precompact)),
            (compact, segment), (SegmentIndex.path(segment: compact), SegmentIndex.path(segment: segment)),
        ] {
            guard rename(from, to) == 0 else { throw FileError("rename", from, reason: String(cString: strerror(errno))) }
        }
        try DurableFiles.syncDirectory(containing: segment)
    }

    /// Step 3, once the checkpoint records the compacted segment.
    static func removePrecompacted(segment: String) {
        let precompact = precompactPath(segment: segment)
        try? FileManager.default.removeItem(atPath: precompact)
        try? FileManager.default.removeItem(atPath: SegmentIndex.path(segment: precompact))
    }

    /// On open, before the segments are checked: finishes or undoes a compaction a crash interrupted. For a unit
    /// with `N.precompact.*` files, the compacted index is kept when the checkpoint's page checksum is its own
    /// (the checkpoint of step 3 was written) or the checkpoint no longer has the unit (it was merged); otherwise
    /// the precompacted files go back to `N.*`. `N.compact.*` files (step 1, or step 2 cut short) are removed.
    static func settle(_ checkpoint: Checkpoint, in directory: String) throws {
        let manager = FileManager.default
        let names = (try? manager.contentsOfDirectory(atPath: directory)) ?? []
        let ordinals = Set(names.compactMap { name -> Int? in
            guard name.hasSuffix(".precompact.jsonl") || name.hasSuffix(".precompact.pages") else { return nil }
            return Int(name.split(separator: ".").first ?? "")
        })
        for ordinal in ordinals.sorted() {
            let segment = directory + "/\(ordinal).jsonl"
            let index = SegmentIndex.path(segment: segment)
            let precompact = precompactPath(segment: segment)
            let compact = compactPath(segment: segment)
            let keep: Bool
            if let state = checkpoint.units[String(ordinal)] {
                // Step 2 done in full (nothing left to rename) and the checkpoint counts the compacted index.
                let renamed = [precompact, SegmentIndex.path(segment: precompact), segment, index].allSatisfy {
                    manager.fileExists(atPath: $0)
                } && ![compact, SegmentIndex.path(segment: compact)].contains { manager.fileExists(atPath: $0) }
                let pages = state.pages + (state.rereadPages ?? 0)
                keep = renamed && pages > 0 && (try? indexDigest(index, pages: pages)) == state.pageDigest
            } else {
                keep = true
            }
            for (from, to) in [(precompact, segment), (SegmentIndex.path(segment: precompact), index)]
            where manager.fileExists(atPath: from) {
                if keep {
                    try? manager.removeItem(atPath: from)
                } else if rename(from, to) != 0 {
                    throw FileError("rename", from, reason: String(cString: strerror(errno)))
                }
            }
        }
        var removed = false
        for name in names where name.hasSuffix(".compact.jsonl") || name.hasSuffix(".compact.pages") {
            try? manager.removeItem(atPath: directory + "/" + name)
            removed = true
        }
        if removed || !ordinals.isEmpty { try DurableFiles.syncDirectory(directory) }
    }

    /// The checkpoint's page checksum over the first `pages` records of the index at `path` (`nil` for none).
    static func indexDigest(_ path: String, pages: Int) throws -> String? {
        let bytes = try DurableFiles.read(path) ?? []
        guard bytes.count >= pages * SegmentIndex.recordSize else {
            throw FileError("read", path, reason: "it holds fewer than \(pages) page records")
        }
        var digest: String?
        for page in 0..<pages {
            digest = SegmentIndex.digest(
                digest, adding: Array(bytes[page * SegmentIndex.recordSize..<(page + 1) * SegmentIndex.recordSize]))
        }
        return digest
    }

    /// The page lengths the index at `path` records for the first `pages` pages.
    private static func pageLengths(index path: String, pages: Int) throws -> [Int] {
        let bytes = try DurableFiles.read(path) ?? []
        guard bytes.count >= pages * SegmentIndex.recordSize else {
            throw JobError.state(
                "\(path) records \(bytes.count / SegmentIndex.recordSize) page(s) where the unit counts \(pages)",
                hint: "pass --restart to fetch everything again")
        }
        return (0..<pages).map { page in
            let start = page * SegmentIndex.recordSize
            return Int(bytes[start..<start + 8].reversed().reduce(UInt64(0)) { $0 << 8 | UInt64($1) })
        }
    }

    /// The ordinals (from 0, in segment order) of lines whose key a later line holds too. Reads the pages last to
    /// first, each page's lines last to first: a line is kept when its key was not seen yet.
    private static func droppedLines(segment: String, pages: [Int], key: JSONKeyPath) throws -> Set<Int> {
        var seen: Set<KeyDigest> = []
        // Counted from the end while reading backwards, then turned around.
        var droppedFromEnd: [Int] = []
        var fromEnd = 0
        let decoder = JSONItemDecoder()
        try forEachPage(segment: segment, pages: pages, reversed: true) { lines in
            var ends: [ArraySlice<UInt8>] = []
            DriftCheck.forEachLine(lines) { ends.append($0) }
            for line in ends.reversed() {
                defer { fromEnd += 1 }
                guard let value = DriftCheck.key(of: line, at: key, decoder: decoder) else { continue }
                if !seen.insert(KeyDigest { $0.update(value) }).inserted { droppedFromEnd.append(fromEnd) }
            }
        }
        return Set(droppedFromEnd.map { fromEnd - 1 - $0 })
    }

    /// Calls `body` with each page's bytes (first to last, or last to first).
    private static func forEachPage(
        segment: String, pages: [Int], reversed: Bool = false, _ body: ([UInt8]) throws -> Void
    ) throws {
        guard let handle = FileHandle(forReadingAtPath: segment) else {
            throw FileError("open", segment, reason: "it cannot be read to compact it")
        }
        defer { try? handle.close() }
        var offsets: [UInt64] = []
        var offset: UInt64 = 0
        for length in pages {
            offsets.append(offset)
            offset += UInt64(length)
        }
        let order = reversed ? Array(pages.indices.reversed()) : Array(pages.indices)
        for page in order {
            try handle.seek(toOffset: offsets[page])
            let data = try handle.read(upToCount: pages[page]) ?? Data()
            guard data.count == pages[page] else {
                throw JobError.state(
                    "\(segment) ends inside page \(page + 1) (offset \(offsets[page]))",
                    hint: "pass --restart to fetch everything again")
            }
            try body([UInt8](data))
        }
    }
}
