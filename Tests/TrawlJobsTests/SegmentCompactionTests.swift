import Foundation
import Testing
import TrawlEngine
import TrawlJSON
import TrawlTestSupport

@testable import TrawlJobs

/// Compaction of a unit's segment after a re-read for drift (`SegmentCompaction`): the newest line of each key
/// wins, pages keep their places, and a crash at any point of the swap is settled at the next open.
@Suite("Segment compaction: the newest answer of each key", .hangGuard)
struct SegmentCompactionTests {
    /// A state directory's `segments/` with unit 0's segment and index written from `pages`.
    struct Segments {
        let directory: String
        var segment: String { directory + "/0.jsonl" }
        var index: String { SegmentIndex.path(segment: segment) }

        init(_ pages: [[String]]) throws {
            directory = NSTemporaryDirectory() + "trawl-compaction-\(UUID().uuidString)"
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
            let segment = try DurableFile(path: directory + "/0.jsonl")
            let index = try DurableFile(path: SegmentIndex.path(segment: segment.path))
            defer {
                segment.close()
                index.close()
            }
            for page in pages {
                let lines = Array(page.map { $0 + "\n" }.joined().utf8)
                if !lines.isEmpty { try segment.append(lines) }
                try index.append(SegmentIndex.record(lines))
            }
        }

        func remove() { try? FileManager.default.removeItem(atPath: directory) }

        func bytes(_ name: String) -> [UInt8]? {
            FileManager.default.contents(atPath: directory + "/" + name).map { [UInt8]($0) }
        }

        func write(_ name: String, _ bytes: [UInt8]?) throws {
            let path = directory + "/" + name
            try? FileManager.default.removeItem(atPath: path)
            if let bytes { try Data(bytes).write(to: URL(fileURLWithPath: path)) }
        }

        var names: [String] { ((try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []).sorted() }

        func lines() -> [String] {
            String(decoding: bytes("0.jsonl") ?? [], as: UTF8.self).split(separator: "\n").map(String.init)
        }

        /// A checkpoint's state of unit 0 counting `pages` pages of the segment as it is now.
        func state(pages: Int, reread: Int) throws -> Checkpoint.UnitState {
            var state = Checkpoint.UnitState(id: "0")
            state.pages = pages
            state.rereadPages = reread
            state.segment = Int64(bytes("0.jsonl")?.count ?? 0)
            state.pageDigest = try SegmentCompaction.indexDigest(index, pages: pages + reread)
            return state
        }

        /// Checks the segment against `state` as an open does.
        func verify(_ state: Checkpoint.UnitState) throws {
            let file = try DurableFile(path: segment)
            let records = try DurableFile(path: index)
            defer {
                file.close()
                records.close()
            }
            try SegmentIndex.verify(state, segment: file, index: records)
        }
    }

    /// A first pass of two pages, then a re-read of three: ids 1 and 2 answered again (2 twice), 4 only by the
    /// re-read, 3 only by the first pass, and a line without the key in both.
    static let pages = [
        [#"{"id":1,"v":1}"#, #"{"id":2,"v":1}"#],
        [#"{"id":3,"v":1}"#, #"{"note":"no key"}"#],
        [#"{"id":2,"v":2}"#, #"{"id":1,"v":2}"#],
        [#"{"id":4,"v":2}"#, #"{"note":"no key"}"#],
        [#"{"id":2,"v":3}"#],
    ]

    @Test("each key keeps its last line, in its page; lines without the key all stay; the index vouches for it")
    func keepsTheNewestLine() throws {
        let segments = try Segments(Self.pages)
        defer { segments.remove() }
        let result = try SegmentCompaction.run(segment: segments.segment, pages: 5, key: "id")
        #expect(segments.lines() == [
            #"{"id":3,"v":1}"#, #"{"note":"no key"}"#, #"{"id":1,"v":2}"#, #"{"id":4,"v":2}"#, #"{"note":"no key"}"#,
            #"{"id":2,"v":3}"#,
        ])
        #expect(result.items == 6 && result.dropped == 3)
        #expect(result.length == Int64(segments.bytes("0.jsonl")?.count ?? -1))
        // Five pages still (the first one empty now), and the checkpoint's state of them checks out.
        var state = Checkpoint.UnitState(id: "0")
        (state.pages, state.rereadPages, state.segment, state.pageDigest) = (2, 3, result.length, result.pageDigest)
        try segments.verify(state)
        #expect(segments.bytes("0.pages")?.count == 5 * SegmentIndex.recordSize)
        // The old segment waits for the checkpoint, then goes.
        #expect(segments.names.contains("0.precompact.jsonl") && segments.names.contains("0.precompact.pages"))
        SegmentCompaction.removePrecompacted(segment: segments.segment)
        #expect(segments.names == ["0.jsonl", "0.pages"])
    }

    @Test("the key inside lines with metadata (--with-meta: under item)")
    func keyUnderItem() throws {
        let segments = try Segments([
            [#"{"page":0,"item":{"id":"a","v":1}}"#, #"{"page":0,"item":{"id":"b","v":1}}"#],
            [#"{"page":0,"item":{"id":"a","v":2}}"#],
        ])
        defer { segments.remove() }
        let key = DriftCheck.linePath("id", withMeta: true)
        let result = try SegmentCompaction.run(segment: segments.segment, pages: 2, key: key)
        #expect(segments.lines() == [#"{"page":0,"item":{"id":"b","v":1}}"#, #"{"page":0,"item":{"id":"a","v":2}}"#])
        #expect(result.dropped == 1)
    }

    @Test("DriftCheck counts what compaction leaves: one line per key and every line without one")
    func driftCheckCountsTheCompactedLines() throws {
        var keys = DriftCheck(path: "id")
        let first = Self.pages[0...1].map { Array($0.map { $0 + "\n" }.joined().utf8) }
        for (index, page) in first.enumerated() { _ = keys.filter(page, index: index) }
        keys.startPass()
        for (index, page) in Self.pages[2...].enumerated() {
            let kept = keys.filter(Array(page.map { $0 + "\n" }.joined().utf8), index: index, newest: true)
            #expect(kept.kept == page.count, "the re-read writes every line")
        }
        #expect(keys.keptTotal == 9 && keys.itemsAfterCompaction == 6 && keys.droppedInThisRun == 3)
        #expect(keys.drifted, "2 twice in the re-read")
    }

    @Test("a resumed unit: only the dropped lines written in this run leave this run's item count")
    func droppedInThisRun() throws {
        var keys = DriftCheck(path: "id")
        keys.restore(Array((Self.pages[0] + Self.pages[1]).map { $0 + "\n" }.joined().utf8))
        keys.startPass()
        for (index, page) in Self.pages[2...].enumerated() {
            _ = keys.filter(Array(page.map { $0 + "\n" }.joined().utf8), index: index, newest: true)
        }
        // Restored: 1, 2, 3, a line without the key. This run: 2, 1, 4, the line again, 2. Compaction drops the
        // restored 1 and 2 and this run's first 2.
        #expect(keys.itemsAfterCompaction == 6)
        #expect(keys.keptTotal - keys.itemsAfterCompaction == 3)
        #expect(keys.droppedInThisRun == 1)
    }

    /// The files a crash leaves after `renames` of the swap's four renames (0: the compacted files written, none
    /// renamed), given the old and new bytes of segment and index.
    static func crashed(
        _ segments: Segments, renames: Int, old: (segment: [UInt8], index: [UInt8]), new: (segment: [UInt8], index: [UInt8])
    ) throws {
        for name in segments.names { try segments.write(name, nil) }
        try segments.write("0.jsonl", renames >= 1 ? (renames >= 3 ? new.segment : nil) : old.segment)
        try segments.write("0.pages", renames >= 2 ? (renames >= 4 ? new.index : nil) : old.index)
        try segments.write("0.precompact.jsonl", renames >= 1 ? old.segment : nil)
        try segments.write("0.precompact.pages", renames >= 2 ? old.index : nil)
        try segments.write("0.compact.jsonl", renames < 3 ? new.segment : nil)
        try segments.write("0.compact.pages", renames < 4 ? new.index : nil)
    }

    @Test("a crash at any point of the swap: the old checkpoint gets the old segment back, the new one keeps the new")
    func crashesSettle() throws {
        let segments = try Segments(Self.pages)
        defer { segments.remove() }
        let oldState = try segments.state(pages: 2, reread: 3)
        let old = (segments.bytes("0.jsonl") ?? [], segments.bytes("0.pages") ?? [])
        _ = try SegmentCompaction.run(segment: segments.segment, pages: 5, key: "id")
        let newState = try segments.state(pages: 2, reread: 3)
        let new = (segments.bytes("0.jsonl") ?? [], segments.bytes("0.pages") ?? [])
        #expect(old.0 != new.0)
        var checkpoint = Checkpoint(fingerprint: "f", shard: "", withMeta: false)
        for renames in 0...4 {
            try Self.crashed(segments, renames: renames, old: old, new: new)
            checkpoint.units["0"] = oldState
            try SegmentCompaction.settle(checkpoint, in: segments.directory)
            #expect(segments.names == ["0.jsonl", "0.pages"], "after \(renames) renames")
            #expect(segments.bytes("0.jsonl") == old.0 && segments.bytes("0.pages") == old.1, "after \(renames)")
            try segments.verify(oldState)
        }
        // The checkpoint of the compacted segment was written: the precompacted files go.
        try Self.crashed(segments, renames: 4, old: old, new: new)
        checkpoint.units["0"] = newState
        try SegmentCompaction.settle(checkpoint, in: segments.directory)
        #expect(segments.names == ["0.jsonl", "0.pages"])
        #expect(segments.bytes("0.jsonl") == new.0)
        try segments.verify(newState)
        // The unit was merged since (the checkpoint no longer has it): nothing is put back.
        try Self.crashed(segments, renames: 4, old: old, new: new)
        checkpoint.units["0"] = nil
        try SegmentCompaction.settle(checkpoint, in: segments.directory)
        #expect(segments.names == ["0.jsonl", "0.pages"])
        #expect(segments.bytes("0.jsonl") == new.0)
    }
}
