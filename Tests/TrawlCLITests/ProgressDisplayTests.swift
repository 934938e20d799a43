import Foundation
import Testing
import TrawlTestSupport
import Trawl
import TrawlJobs

@testable import trawl

@Suite("trawl's progress line and retry command, without a process", .endToEnd)
struct ProgressDisplayTests {
    /// A job of 3 units: one planned (60 pages), one cursor chain still walking, one not started.
    func midway() -> JobProgress {
        var progress = JobProgress()
        progress.unitsTotal = 3
        progress.unitsDone = 1
        progress.pagesDone = 80
        progress.pagesPlanned = 60
        progress.unitsPlanned = 1
        progress.unitsOpenEnded = 1
        progress.items = 8000
        progress.bytes = 2_500_000
        progress.requests = 90
        progress.retries = 2
        progress.errors = 3
        progress.waits = 1
        progress.elapsed = .seconds(10)
        return progress
    }

    @Test("pages and items count as they are read; the committed count lags and says so, and the ETA uses reads")
    func fetchedBeforeCommitted() {
        // One planned unit of 240 pages: 60 read, none committed yet (its pages commit in order).
        var progress = JobProgress()
        progress.unitsTotal = 1
        progress.unitsPlanned = 1
        progress.pagesPlanned = 240
        progress.pagesFetched = 60
        progress.itemsFetched = 6000
        progress.elapsed = .seconds(10)
        let line = JobProgressDisplay.line(progress)
        #expect(line.hasPrefix("units 0/1  pages 60/240  items 6000  committed 0 pages  "), "\(line)")
        #expect(line.hasSuffix("ETA 30s  10.0s"), "\(line)")
        progress.pagesDone = 60
        progress.items = 6000
        #expect(!JobProgressDisplay.line(progress).contains("committed"))
    }

    @Test("no page total until every unit's page count is known")
    func totalOnlyWhenKnown() {
        var progress = midway()
        #expect(progress.pagesTotal == nil)
        let line = JobProgressDisplay.line(progress)
        #expect(line.hasPrefix("units 1/3  pages 80  items 8000  2.5 MB  9 req/s  retries 2  errors 3  waits 1  "))
        #expect(!line.contains("pages 80/"))
        // ETA from units while the page total is unknown: a third done in 10 s.
        #expect(line.hasSuffix("ETA 20s  10.0s"), "\(line)")

        // The chain ends (40 pages) and the last unit plans 100: now the total is known.
        progress.unitsOpenEnded = 0
        progress.unitsPlanned = 3
        progress.pagesPlanned = 60 + 40 + 100
        #expect(progress.pagesTotal == 200)
        let known = JobProgressDisplay.line(progress)
        #expect(known.hasPrefix("units 1/3  pages 80/200  items 8000"), "\(known)")
        #expect(known.hasSuffix("ETA 15s  10.0s"), "\(known)")

        // Units merged by an earlier run are not waited for.
        var resumed = JobProgress()
        resumed.unitsTotal = 4
        resumed.unitsSkipped = 3
        resumed.unitsDone = 3
        resumed.unitsPlanned = 1
        resumed.pagesPlanned = 5
        resumed.pagesDone = 2
        resumed.elapsed = .seconds(1)
        #expect(JobProgressDisplay.line(resumed).hasPrefix("units 3/4  pages 2/5  items 0"))
    }

    @Test("terminal: redrawn in place, the last one ends the line; plain: one line each; quiet: nothing")
    func modes() {
        let progress = midway()
        let line = JobProgressDisplay.line(progress)
        #expect(JobProgressDisplay.render(progress, mode: .live, final: false) == "\r\u{1B}[2K" + line)
        #expect(JobProgressDisplay.render(progress, mode: .live, final: true) == "\r\u{1B}[2K" + line + "\n")
        #expect(JobProgressDisplay.render(progress, mode: .plain, final: false) == line + "\n")
        #expect(JobProgressDisplay.render(progress, mode: .plain, final: true) == line + "\n")
        #expect(JobProgressDisplay.render(progress, mode: .quiet, final: false) == nil)
        #expect(JobProgressDisplay.render(progress, mode: .quiet, final: true) == nil)
        #expect(JobProgressDisplay(mode: .live).interval == .milliseconds(250))
        #expect(JobProgressDisplay(mode: .plain).interval == .seconds(5))
        #expect(JobProgressDisplay(mode: .quiet).interval == nil)
        #expect(JobProgressDisplay(quiet: true).mode == .quiet)
    }

    @Test("the retry command drops --restart and adds the state directory")
    func retryArguments() {
        #expect(
            Fetch.retryArguments(["fetch", "job.yaml", "--restart", "-o", "out.jsonl"], addingState: "out.state")
                == ["fetch", "job.yaml", "-o", "out.jsonl", "--state", "out.state"])
        #expect(
            Fetch.retryArguments(["fetch", "job.yaml", "--state", "st", "--restart"], addingState: nil)
                == ["fetch", "job.yaml", "--state", "st"])
        // After `--`, arguments are positional: left as they are, and the state goes before them.
        #expect(
            Fetch.retryArguments(["fetch", "--restart", "--", "--restart"], addingState: "s")
                == ["fetch", "--state", "s", "--", "--restart"])
    }
}
