import Foundation
import Testing
import TrawlTestSupport
import TrawlTestServer

private func withServer(_ body: (TestServer) async throws -> Void) async throws {
    try await TestServer.with(body)
}

@Suite("trawl command line", .endToEnd)
struct CLITests {
    @Test("trawl demo runs the bulk job against the embedded API and verifies its output")
    func demoVerifiesItsOutput() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("trawl-demo-\(UUID())").path
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let result = try await trawl(["demo", "--scale", "0.1", "-q", "-o", directory])
        #expect(result.status == 0, "\(result.stdout)\n\(result.stderr)")
        #expect(result.stdout.components(separatedBy: ": OK").count == 4, "\(result.stdout)")
        #expect(result.stdout.contains("units: 22 done"))
        #expect(result.stdout.contains("items/s"))
        #expect(result.stdout.contains("output: \(directory)/"))
        let repos = try String(contentsOfFile: directory + "/repos.jsonl", encoding: .utf8)
        #expect(repos.split(separator: "\n").count == 10 * 800)
        #expect(!FileManager.default.fileExists(atPath: directory + "/.state"))
    }

    @Test func getPrintsTheBody() async throws {
        try await withServer { server in
            let result = try await trawl(["get", server.url("/headers?X-A=1")])
            #expect(result.status == 0)
            #expect(result.stdout == "{}")
        }
    }

    @Test func getIncludesTheHeadWithDashI() async throws {
        try await withServer { server in
            let result = try await trawl(["get", "-i", server.url("/headers?X-A=1&X-A=2")])
            #expect(result.stdout.hasPrefix("HTTP/1.1 200 OK\r\n"), "the status line as received")
            #expect(result.stdout.contains("X-A: 1\r\nX-A: 2\r\n"))
        }
    }

    @Test func getSendsMethodHeadersAndBody() async throws {
        try await withServer { server in
            let result = try await trawl(["get", "-X", "PUT", "-H", "X-Test: yes", "-d", "hello", server.url("/echo")])
            #expect(result.status == 0, "\(result.stderr)")
            // /echo answers with what it received: the method, the header with its value, the body.
            let echo = try JSONDecoder().decode(EchoReply.self, from: Data(result.stdout.utf8))
            #expect(echo.method == "PUT")
            #expect(echo.header("X-Test") == ["yes"])
            #expect(echo.body == "hello")
            #expect(echo.header("Content-Length") == ["5"])
        }
    }

    @Test func getWritesToAFile() async throws {
        try await withServer { server in
            let path = FileManager.default.temporaryDirectory.appendingPathComponent("trawl-get-\(UUID())").path
            defer { try? FileManager.default.removeItem(atPath: path) }
            let result = try await trawl(["get", server.url("/bytes/300000"), "-o", path])
            #expect(result.status == 0)
            let data = try #require(FileManager.default.contents(atPath: path))
            #expect(firstDifference([UInt8](data), (0..<300_000).map { TestServer.patternByte(at: $0) }) == nil)
            #expect(result.stdout.isEmpty, "the body goes to the file, not to stdout")
        }
    }

    /// curl's rule: an error status is a response (exit 0, the body out); -f makes it exit 22 without the body.
    @Test func httpErrorStatusExitsZeroOrTwentyTwoWithFail() async throws {
        try await withServer { server in
            let result = try await trawl(["get", server.url("/status/404")])
            #expect(result.status == 0)
            #expect(result.stdout == #"{"status":404}"#)
            let failed = try await trawl(["get", "-f", server.url("/status/404")])
            #expect(failed.status == 22)
            #expect(failed.stdout.isEmpty)
            #expect(failed.stderr == "error: GET \(server.url("/status/404")): the requested URL returned error: 404\n")
        }
    }

    @Test func transportErrorsExitWithCurlsCodeAndTheReason() async throws {
        try await withServer { server in
            let result = try await trawl(["get", server.url("/short/1000")])
            #expect(result.status == 18, "curl's partial file")
            #expect(result.stderr.hasPrefix("error: GET \(server.url("/short/1000")): the body ended after 1000 bytes"))
        }
    }

    /// A usage error since issue 22 (it was exit 1): decided before anything is sent.
    @Test func badHeaderExitsTwo() async throws {
        let result = try await trawl(["get", "-H", "X-A: a\rb", "http://127.0.0.1:9/"])
        #expect(result.status == 2)
        #expect(result.stderr.contains("contains control character U+000D (CR)"))
    }

    @Test func badUsageExitsTwo() async throws {
        // Exit 2, and the message names the mistake (not some other refusal that also exits 2).
        let cases: [([String], String)] = [
            (["get"], "Error: Missing expected argument '<urls> ...'"),
            (["get", "-H", "no-colon", "http://127.0.0.1:9/"], "Error: header 'no-colon' must look like 'Name: value'"),
            (["bench", "-n", "0"], "Error: -n must be at least 1"),
            (["frobnicate"], "Error: Unexpected argument 'frobnicate'"),
        ]
        for (arguments, message) in cases {
            let result = try await trawl(arguments)
            #expect(result.status == 2, "\(arguments): \(result.stderr)")
            #expect(result.stderr.hasPrefix(message + "\n"), "\(arguments): \(result.stderr)")
            #expect(result.stderr.contains("Usage: trawl "), "\(arguments): \(result.stderr)")
        }
    }

    @Test func benchReportsJSON() async throws {
        try await withServer { server in
            let result = try await trawl(["bench", "-n", "300", "-c", "8", "--json", server.url("/json/small")])
            #expect(result.status == 0)
            let object = try #require(
                try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any])
            #expect(object["requests"] as? Int == 300)
            #expect(object["failed"] as? Int == 0)
            #expect((object["requests_per_s"] as? Double ?? 0) > 0)
            let latency = try #require(object["latency_ms"] as? [String: Double])
            #expect(Set(latency.keys) == ["p50", "p90", "p99", "p999", "max"])
        }
    }

    @Test func benchWithoutURLUsesTheEmbeddedServer() async throws {
        let result = try await trawl(["bench", "-n", "200", "-c", "4"])
        #expect(result.status == 0)
        #expect(result.stdout.contains("trawl bench: 200 requests, 4 concurrent"))
        #expect(result.stdout.contains("errors        none"))
    }

    @Test func benchCountsErrorsByKind() async throws {
        let result = try await trawl(["bench", "-n", "20", "-c", "2", "--json", "http://127.0.0.1:9/"])
        #expect(result.status == 1)
        #expect(result.stdout.contains(#""connectFailed":20"#))
    }
}
