import Foundation
import Testing
import TrawlTestSupport

@testable import TrawlJobs

/// The live progress (`JobProgress`) of items and pages read, next to what the output holds: items dropped by the
/// primary key and a bisected window's pages leave the counts the progress line shows, so it ends at the output's.
@Suite("progress counts of what is read and what is kept", .hangGuard)
struct ProgressCountTests {
    /// `pages` pages of `items` items each read and committed.
    func read(_ metrics: JobMetrics, pages: Int, items: Int) {
        for _ in 0..<pages {
            metrics.pageFetched(source: "s", host: "http://h", bytes: 10, items: items, latency: .milliseconds(1))
            metrics.pageCommitted(source: "s", host: "http://h", items: items)
        }
    }

    @Test("a drifted listing: the first pass's repeats and the answers the re-read replaced leave the items read")
    func driftLeavesTheItemsRead() {
        let metrics = JobMetrics()
        // First pass: 4 pages of 10 items read, 1 repeat dropped as read (9 written on one page).
        read(metrics, pages: 4, items: 10)
        metrics.duplicatesDropped(source: "s", 1)
        // The re-read: 4 pages of 10 read and written; compaction drops the first pass's 39 lines.
        read(metrics, pages: 4, items: 10)
        metrics.supersededDropped(source: "s", host: "http://h", dropped: 39, writtenInThisRun: 39)
        let progress = metrics.progress
        #expect(progress.itemsFetched == 40, "each key once: \(progress.itemsFetched)")
        #expect(progress.pagesFetched == 8, "the pages read are requests made")
        let totals = metrics.finishedReport().totals
        #expect(totals.duplicatesDropped == 40)
        #expect(totals.items == 80 - 39, "what the pages committed, less what compaction dropped")
    }

    @Test("a bisected window: its pages and items leave the counts read and written; the halves count again")
    func bisectedWindowLeavesTheCounts() {
        let metrics = JobMetrics()
        read(metrics, pages: 5, items: 10)
        metrics.windowDiscarded(source: "s", host: "http://h", pages: 5, items: 50)
        var progress = metrics.progress
        #expect(progress.pagesFetched == 0 && progress.itemsFetched == 0 && progress.pagesDone == 0)
        read(metrics, pages: 6, items: 10)
        progress = metrics.progress
        #expect(progress.pagesFetched == 6 && progress.pagesDone == 6 && progress.itemsFetched == 60)
        #expect(metrics.finishedReport().totals.items == 60)
    }
}
