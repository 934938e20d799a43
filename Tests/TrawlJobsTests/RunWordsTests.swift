import Foundation
import Testing
import TrawlJSON
import TrawlTestSupport

@testable import TrawlJobs

/// What a run says about itself: the resume line, and why a walk is short of the total its server announced.
@Suite("The resume line and the completeness check's words and counts", .hangGuard)
struct RunWordsTests {
    func unit(pages: Int, total: Int?, done: Bool = false) -> Checkpoint.UnitState {
        var state = Checkpoint.UnitState(id: "u")
        state.pages = pages
        state.pageTotal = total
        if done { state.status = .done }
        return state
    }

    @Test("resuming: pages to go when every unit to go knows its page count, else units with pages unknown")
    func resumeLine() {
        let planned = JobRunner.resumeLine(
            run: "r1", kept: 12, unitsDone: 0,
            pending: [unit(pages: 12, total: 25), unit(pages: 3, total: 3, done: true)])
        #expect(planned == "resuming run r1: 12 pages kept, 13 to go")
        let chain = JobRunner.resumeLine(
            run: "r1", kept: 2, unitsDone: 0, pending: [unit(pages: 2, total: nil)])
        #expect(chain == "resuming run r1: 2 pages kept, 1 unit to go (pages unknown)")
        let notStarted = JobRunner.resumeLine(
            run: "r2", kept: 1, unitsDone: 3, pending: [unit(pages: 1, total: 4), nil, nil])
        #expect(notStarted == "resuming run r2: 1 page kept and 3 units done, 3 units to go (pages unknown)")
        let finishedUnits = JobRunner.resumeLine(
            run: "r3", kept: 5, unitsDone: 1, pending: [unit(pages: 5, total: nil, done: true)])
        #expect(finishedUnits == "resuming run r3: 5 pages kept and 1 unit done, 0 to go")
    }

    @Test("short of the total: distinct by the primary key when counted, else written items, said so")
    func shortOfTotalWords() {
        let header = "the X-Total-Count header"
        #expect(JobRunner.shortOfTotal(expected: 50, from: header, written: 50, pages: 5, distinct: nil) == nil)
        #expect(
            JobRunner.shortOfTotal(expected: 50, from: header, written: 40, pages: 4, distinct: nil)
                == "the server announced 50 items (the X-Total-Count header); 40 items were written (4 pages); "
                + "with no primary key, written items were compared, not distinct ones")
        let key = JSONKeyPath("id")
        #expect(
            JobRunner.shortOfTotal(
                expected: 50, from: "'count' in the body", written: 55, pages: 6, distinct: (key, 45))
                == "the server announced 50 items ('count' in the body); 55 items were written (6 pages), 45 distinct "
                + "by the primary key id")
        #expect(JobRunner.shortOfTotal(expected: 50, from: nil, written: 55, pages: 6, distinct: (key, 50)) == nil)
        #expect(
            JobRunner.shortOfTotal(expected: 50, from: nil, written: 49, pages: 1, distinct: (key, nil))
                == "the server announced 50 items; 49 items were written (1 page); distinct items by the primary "
                + "key id are not known (more than 1000000 keys), so written items were compared")
        #expect(JobRunner.shortOfTotal(expected: 50, from: nil, written: 50, pages: 1, distinct: (key, nil)) == nil)
    }

    @Test("distinct items: by the key's JSON, under item with metadata, whole lines without the key; bounded")
    func distinctItems() {
        // Counting only (an incremental source's): every line is written, the distinct ones counted.
        var plain = DriftCheck(path: "id", filters: false)
        let all = Array(#"{"id":1,"v":1}"#.utf8) + [10] + Array(#"{"id":1,"v":2}"#.utf8) + [10]
            + Array(#"{"id":"1"}"#.utf8) + [10] + Array("{\"x\":1}\n{\"x\":1}\n{\"x\":2}\n".utf8)
        #expect(plain.filter(all, index: 0).kept == 6)
        #expect(plain.distinct == 4, "1, \"1\", and two distinct lines without the key")
        #expect(!plain.drifted && plain.duplicatesDropped == 0)
        // Filtering: the same count, one hash per item; the repeated key is not written.
        var filtering = DriftCheck(path: "id")
        #expect(filtering.filter(all, index: 0).kept == 5)
        #expect(filtering.distinct == 4)
        var meta = DriftCheck(path: DriftCheck.linePath("id", withMeta: true), filters: false)
        _ = meta.filter(
            Array(#"{"source":"s","page":0,"item":{"id":7}}"#.utf8) + [10]
                + Array(#"{"source":"s","page":1,"item":{"id":7}}"#.utf8) + [10], index: 0)
        #expect(meta.distinct == 1)
        var bounded = DriftCheck(path: "id", cap: 2, filters: false)
        _ = bounded.filter(Array("{\"id\":1}\n{\"id\":2}\n".utf8), index: 0)
        #expect(bounded.distinct == 2)
        _ = bounded.filter(Array("{\"id\":3}\n".utf8), index: 1)
        #expect(bounded.distinct == nil, "past the limit the count is unknown, not wrong")
        // A resumed unit: the lines of its segment count as written.
        var resumed = DriftCheck(path: "id")
        resumed.restore(Array("{\"id\":1}\n{\"id\":2}\n".utf8))
        #expect(resumed.filter(Array("{\"id\":2}\n{\"id\":3}\n".utf8), index: 2).kept == 1)
        #expect(resumed.distinct == 3)
    }
}
