import Foundation
import Testing
import TrawlTestServer

// `trawl serve` for newcomers: `serve --help` lists every endpoint; the binary's feeds start full and change by
// themselves.

@Suite("trawl serve and docs/daily-job.yaml", .timeLimit(.minutes(3)))
struct ServeDailyJobCLITests {
    static func lines(_ text: String) -> [String] { text.split(separator: "\n").map(String.init) }

    @Test("trawl serve --help lists every endpoint line as it is, at 80 columns, and the demo client")
    func serveHelpListsEndpoints() async throws {
        let workspace = try Workspace()
        defer { workspace.remove() }
        let result = try await trawl(["serve", "--help"], in: workspace, environment: ["COLUMNS": "80"])
        #expect(result.status == 0, "\(result.stderr)")
        let shown = Set(Self.lines(result.stdout))
        let endpoints = Self.lines(TestServer.endpointHelp)
        #expect(endpoints.count > 40)
        for line in endpoints {
            #expect(shown.contains(line), "serve --help lacks: \(line)")
        }
        for fact in ["/shop/token", "client_id demo", "demo-secret", "--feed-interval", "--feed-items",
                     "docs/daily-job.yaml"] {
            #expect(result.stdout.contains(fact), "\(fact)")
        }
    }

    @Test("trawl serve: a feed starts with 250 items and grows by itself; /shop answers 401 without a token")
    func serveBinaryFeeds() async throws {
        let workspace = try Workspace()
        defer { workspace.remove() }
        let serve = try TrawlProcess(
            ["serve", "--port", "0", "--threads", "1", "--feed-interval", "0.2"], in: workspace, environment: [:])
        do {
            let listening = try await waitUntil(serve, timeout: .seconds(30)) {
                serve.stdout.contains("listening on http://127.0.0.1:")
            }
            #expect(listening, "\(serve.stderr)")
            let base = try #require(
                serve.stdout.split(separator: "\n").first(where: { $0.contains("listening on ") })?
                    .split(separator: " ").last.map(String.init))

            func count(_ name: String) async throws -> Int {
                let result = try await trawl(["get", base + "/feed/\(name)?per_page=100000"], in: workspace)
                #expect(result.status == 0, "\(result.stderr)")
                return (try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [Any])?.count ?? -1
            }
            #expect(try await count("orders") == 250)
            var grown = false
            for _ in 0..<200 where !grown {
                try await Task.sleep(for: .milliseconds(100))
                grown = try await count("orders") > 250
            }
            #expect(grown, "the feed did not grow")

            let refused = try await trawl(["get", base + "/shop/customers"], in: workspace)
            #expect(refused.status == 1)
            #expect(refused.stderr.contains("HTTP 401"), "\(refused.stderr)")
        } catch {
            serve.kill()
            try await serve.wait()
            throw error
        }
        serve.kill()
        try await serve.wait()
        #expect(serve.wasKilled, "trawl serve ended by itself: \(serve.stderr)")
    }
}
