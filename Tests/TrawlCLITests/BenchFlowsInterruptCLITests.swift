import Foundation
import Testing
import TrawlTestSupport
import TrawlTestServer

@Suite("trawl bench: Ctrl-C during paginated flows", .endToEnd)
struct BenchFlowsInterruptCLITests {
    @Test("Ctrl-C while pages are in flight ends the flows, prints the summary and exits 130")
    func ctrlCEndsPaginatedFlows() async throws {
        let workspace = try Workspace()
        defer { workspace.remove() }
        try await TestServer.with { server in
            // Each page takes 100 ms: the interrupt finds the workers waiting for pages (a cancelled page used to
            // end only its walk, and the worker started walk after walk, each ended at once, for ever).
            let child = try TrawlProcess(
                ["bench", "--json", "-d", "60", "-c", "4", "--items", "items", "--paginate", "page",
                 "--total-pages", "total_pages", server.url("/paged/page?n=1000&per_page=10&delay=100")],
                in: workspace, environment: [:])
            #expect(try await waitUntil(child) { server.requestLog.count >= 8 })
            let interrupted = ContinuousClock.now
            child.process.terminate(SIGINT)
            let status = try await child.wait(timeout: .seconds(30))
            #expect(ContinuousClock.now - interrupted < .seconds(20), "Ctrl-C ends the run at once")
            #expect(status == 130, "\(child.stderr)")
            let report = try jsonObject(Data(child.stdout.utf8))
            #expect(report["interrupted"] as? Bool == true)
            #expect((report["requests"] as? Int ?? 0) >= 4)
        }
    }
}
