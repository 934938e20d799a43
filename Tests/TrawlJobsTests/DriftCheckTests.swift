import Foundation
import Testing
import TrawlJSON
import TrawlTestSupport

@testable import TrawlJobs

/// ``DriftCheck`` without sockets: which lines a unit writes once it has a primary key, and what counts as drift.
@Suite("drift check", .hangGuard)
struct DriftCheckTests {
    private func lines(_ ids: [Int]) -> [UInt8] {
        Array(ids.map { "{\"id\":\($0),\"v\":\"x\"}\n" }.joined().utf8)
    }

    private func ids(_ bytes: [UInt8]) -> [Int] {
        String(decoding: bytes, as: UTF8.self).split(separator: "\n").compactMap { line in
            (try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])?["id"] as? Int
        }
    }

    @Test("a key written once is dropped after; a key twice in one pass is drift, named with its page")
    func repeatsDroppedAndNamed() {
        var check = DriftCheck(path: "id")
        let first = check.filter(lines([1, 2, 3]), index: 0)
        #expect(ids(first.lines) == [1, 2, 3] && first.kept == 3)
        let second = check.filter(lines([3, 4, 5]), index: 1)
        #expect(ids(second.lines) == [4, 5] && second.kept == 2)
        #expect(check.duplicatesDropped == 1 && check.drifted)
        #expect(check.repeatedPages == [1] && check.repeatedKeys == ["3"])
        #expect(check.pagesText() == "page index 1")
        #expect(check.distinctInPass == 5 && check.keptTotal == 5)
    }

    @Test("a new pass forgets the repeats but keeps the keys written; the re-read (newest) writes every line")
    func newPassForgetsRepeats() {
        var check = DriftCheck(path: "id")
        _ = check.filter(lines([1, 2, 4]), index: 0)
        check.startPass()
        #expect(!check.drifted && check.distinctInPass == 0)
        var other = check
        let again = check.filter(lines([1, 2, 3, 4]), index: 0)
        #expect(ids(again.lines) == [3])
        #expect(!check.drifted && check.distinctInPass == 4 && check.duplicatesDropped == 3)
        // The re-read after drift: every line, each key counted once in the pass; compaction keeps 4 lines.
        let newest = other.filter(lines([1, 2, 3, 4]), index: 0, newest: true)
        #expect(ids(newest.lines) == [1, 2, 3, 4] && other.duplicatesDropped == 0)
        #expect(!other.drifted && other.distinctInPass == 4 && other.itemsAfterCompaction == 4 && other.keptTotal == 7)
    }

    @Test("items without the key are all written; equal keys of other JSON types are other keys")
    func unkeyedAndTyped() {
        var check = DriftCheck(path: "id")
        let page = Array("{\"v\":1}\n{\"v\":1}\n{\"id\":\"1\"}\n{\"id\":1}\n{\"id\":null}\n".utf8)
        #expect(check.filter(page, index: 0).kept == 5)
        #expect(check.duplicatesDropped == 0 && !check.drifted)
    }

    @Test("past the cap the unit stops checking: every item is written, overCap says so")
    func capBoundsMemory() {
        var check = DriftCheck(path: "id", cap: 2)
        let out = check.filter(lines([1, 2, 3, 3, 1]), index: 0)
        #expect(check.overCap)
        #expect(ids(out.lines) == [1, 2, 3, 3, 1], "unchecked past the cap")
        #expect(check.written.isEmpty, "the digests go: the memory is bounded by the cap")
        #expect(check.distinct == nil, "the distinct count is unknown, not wrong")
        #expect(DriftCheck.keyCap == 1_000_000)
    }

    @Test("a resumed unit's segment restores its keys: a key written before the kill is dropped, and a repeat is drift")
    func restoredAcrossResume() throws {
        var check = DriftCheck(path: "id")
        // As the segment is read: 1 MB at a time, in pieces that split lines; items without the key count too.
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("trawl-drift-\(UUID()).jsonl")
        defer { try? FileManager.default.removeItem(at: url) }
        let segment = lines(Array(1...60_000)) + Array("{\"v\":1}\n".utf8)
        #expect(segment.count > 1 << 20, "the segment is read in more than one piece")
        try Data(segment).write(to: url)
        try check.restore(segment: url.path)
        #expect(check.distinct == 60_001 && check.keptTotal == 60_001 && check.distinctInPass == 60_000)
        let next = check.filter(lines([60_000, 60_001]), index: 7)
        #expect(ids(next.lines) == [60_001])
        #expect(check.duplicatesDropped == 1 && check.repeatedPages == [7] && check.repeatedKeys == ["60000"])
        #expect(throws: JobError.self) { try check.restore(segment: url.path + ".missing") }
    }

    @Test("with metadata lines the key is read under item")
    func metaPath() {
        #expect(DriftCheck.linePath("id", withMeta: true) == JSONKeyPath("item.id"))
        #expect(DriftCheck.linePath("a.b", withMeta: false) == JSONKeyPath("a.b"))
        var check = DriftCheck(path: DriftCheck.linePath("id", withMeta: true))
        let page = Array("{\"page\":0,\"item\":{\"id\":7}}\n{\"page\":1,\"item\":{\"id\":7}}\n".utf8)
        #expect(check.filter(page, index: 1).kept == 1)
    }
}
