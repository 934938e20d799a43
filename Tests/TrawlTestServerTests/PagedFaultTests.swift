import Foundation
import Testing
import TrawlTestSupport
import TrawlTestServer

#if canImport(Glibc)
import Glibc
#endif

/// The second page of `/paged/STYLE` (10 per page), with `query` appended.
private func secondPage(_ style: String, _ query: String = "") -> String {
    let position: String
    switch style {
    case "offset": position = "offset=10"
    case "cursor": position = "starting_after=9"
    default: position = "page=2"
    }
    return "/paged/\(style)?n=35&per_page=10&limit=10&\(position)" + (query.isEmpty ? "" : "&" + query)
}

private let styles = ["page", "offset", "cursor", "next", "link"]

/// Reads what follows a head until the peer closes or resets; returns the bytes and the error, if any.
private func readUntilClosed(_ client: RawHTTPClient) -> (bytes: [UInt8], error: RawHTTPClient.SocketError?) {
    var bytes: [UInt8] = []
    do {
        while true {
            let part = try client.readSome()
            if part.isEmpty { return (bytes, nil) }
            bytes += part
        }
    } catch let error as RawHTTPClient.SocketError {
        return (bytes, error)
    } catch {
        return (bytes, nil)
    }
}

/// Expects a normal 200 page with a body that parses as JSON.
private func expectValidPage(_ response: RawHTTPClient.Response, sourceLocation: SourceLocation = #_sourceLocation) {
    #expect(response.status == 200, sourceLocation: sourceLocation)
    #expect(response.header("Content-Length") == String(response.body.count), sourceLocation: sourceLocation)
    #expect((try? JSONSerialization.jsonObject(with: Data(response.body))) != nil, sourceLocation: sourceLocation)
}

extension TrawlTestServerTests {
    @Suite("Paged API: transient faults, tagged items, request log", .hangGuard)
    struct PagedFaultTests {
        @Test(arguments: styles)
        func tooManyRequestsOnceThenNormal(style: String) async throws {
            try await withServer { server in
                let target = secondPage(style, "fault_429=2")
                let first = try RawHTTPClient.fetch(port: server.port, target)
                #expect(first.status == 429)
                #expect(first.header("Retry-After") == "1")
                let error = try first.json()
                #expect(error["error"] is String)
                #expect(error["page"] as? Int == 2)
                let second = try RawHTTPClient.fetch(port: server.port, target)
                expectValidPage(second)
                #expect(second.header("Retry-After") == nil)
                // Other pages of the same listing are not affected.
                let firstPage = target.replacingOccurrences(of: "page=2&", with: "page=1&")
                    .replacingOccurrences(of: "offset=10", with: "offset=0")
                    .replacingOccurrences(of: "&starting_after=9", with: "")
                #expect(try RawHTTPClient.fetch(port: server.port, firstPage).status == 200)
            }
        }

        @Test func retryAfterSecondsAndHTTPDate() async throws {
            try await withServer { server in
                let seconds = try RawHTTPClient.fetch(port: server.port, secondPage("page", "fault_429=2&retry_after=7"))
                #expect(seconds.status == 429)
                #expect(seconds.header("Retry-After") == "7")
                let before = Date()
                let dated = try RawHTTPClient.fetch(
                    port: server.port, secondPage("page", "fault_429=2&retry_after=30&retry_after_date=1"))
                #expect(dated.status == 429)
                let text = try #require(dated.header("Retry-After"))
                let formatter = DateFormatter()
                formatter.locale = Locale(identifier: "en_US_POSIX")
                formatter.timeZone = TimeZone(identifier: "GMT")
                formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss 'GMT'"
                let date = try #require(formatter.date(from: text), "not an IMF-fixdate: \(text)")
                #expect(formatter.string(from: date) == text)
                let ahead = date.timeIntervalSince(before)
                #expect(ahead > 25 && ahead < 35, "Retry-After \(text) is \(ahead) s ahead")
            }
        }

        @Test(arguments: styles)
        func serviceUnavailableOnceThenNormal(style: String) async throws {
            try await withServer { server in
                let target = secondPage(style, "fault_5xx=2")
                let first = try RawHTTPClient.fetch(port: server.port, target)
                #expect(first.status == 503)
                #expect(try first.json()["error"] is String)
                expectValidPage(try RawHTTPClient.fetch(port: server.port, target))
            }
        }

        @Test(arguments: styles)
        func resetSendsHalfTheBodyThenRST(style: String) async throws {
            try await withServer { server in
                let target = secondPage(style, "fault_reset=2&tag=r")
                let client = try RawHTTPClient(port: server.port)
                try client.request(target)
                let head = try client.readHead()
                #expect(head.status == 200)
                let announced = try #require(head.header("Content-Length").flatMap { Int($0) })
                let (received, error) = readUntilClosed(client)
                #expect(received.count < announced)
                #expect(error?.code == ECONNRESET)
                let second = try RawHTTPClient.fetch(port: server.port, target)
                expectValidPage(second)
                #expect(second.body.count == announced)
                #expect(Array(second.body.prefix(received.count)) == received)
            }
        }

        @Test(arguments: styles)
        func truncSendsHalfTheBodyThenFIN(style: String) async throws {
            try await withServer { server in
                let target = secondPage(style, "fault_trunc=2")
                let client = try RawHTTPClient(port: server.port)
                try client.request(target)
                let head = try client.readHead()
                #expect(head.status == 200)
                #expect(head.header("Connection") == nil)
                let announced = try #require(head.header("Content-Length").flatMap { Int($0) })
                let (received, error) = readUntilClosed(client)
                #expect(error == nil)
                #expect(received.count == announced / 2)
                let second = try RawHTTPClient.fetch(port: server.port, target)
                expectValidPage(second)
                #expect(second.body.count == announced)
                #expect(Array(second.body.prefix(received.count)) == received)
            }
        }

        @Test(arguments: ["page", "link"])
        func dripSendsTheBodySlowly(style: String) async throws {
            try await withServer { server in
                let target = secondPage(style, "fault_drip=2&drip_ms=400")
                let client = try RawHTTPClient(port: server.port)
                let start = ContinuousClock.now
                try client.request(target)
                let head = try client.readHead()
                #expect(head.status == 200)
                let length = try #require(head.header("Content-Length").flatMap { Int($0) })
                var pieces = 0
                var body: [UInt8] = []
                while body.count < length {
                    let part = try client.readSome(limit: length - body.count)
                    guard !part.isEmpty else { break }
                    pieces += 1
                    body += part
                }
                #expect(ContinuousClock.now - start >= .milliseconds(350))
                #expect(pieces >= 3)
                let second = try RawHTTPClient.fetch(port: server.port, target)
                expectValidPage(second)
                #expect(second.body == body)
            }
        }

        @Test func faultTimesCountsPerTarget() async throws {
            try await withServer { server in
                let target = secondPage("page", "fault_5xx=2&fault_times=2")
                let statuses = try (0..<4).map { _ in try RawHTTPClient.fetch(port: server.port, target).status }
                #expect(statuses == [503, 503, 200, 200])
                let never = secondPage("page", "fault_5xx=2&fault_times=0")
                #expect(try RawHTTPClient.fetch(port: server.port, never).status == 200)
                // A page list selects several pages, each failing once on its own.
                let client = try RawHTTPClient(port: server.port)
                var seen: [Int] = []
                for round in 0..<2 {
                    for page in 1...4 {
                        try client.request("/paged/page?n=40&fault_5xx=1,3&page=\(page)")
                        let status = try client.readResponse().status
                        if round == 0 { seen.append(status) } else { #expect(status == 200) }
                    }
                }
                #expect(seen == [503, 200, 503, 200])
            }
        }

        @Test func countsArePerServer() async throws {
            let target = secondPage("page", "fault_429=2")
            let first = try await TestServer.with { server in
                try [429, 200].map { _ in try RawHTTPClient.fetch(port: server.port, target).status }
            }
            let second = try await TestServer.with { server in try RawHTTPClient.fetch(port: server.port, target).status }
            #expect(first == [429, 200])
            #expect(second == 429)
        }

        @Test func rateLimitHeaders() async throws {
            try await withServer { server in
                let target = secondPage("cursor", "ratelimit_page=2&retry_after=5")
                let now = Int(Date().timeIntervalSince1970)
                let first = try RawHTTPClient.fetch(port: server.port, target)
                expectValidPage(first)
                #expect(first.header("X-RateLimit-Remaining") == "0")
                let reset = try #require(first.header("X-RateLimit-Reset").flatMap { Int($0) })
                #expect(reset >= now + 4 && reset <= now + 7)
                #expect(first.header("RateLimit-Remaining") == nil)
                let second = try RawHTTPClient.fetch(port: server.port, target)
                expectValidPage(second)
                #expect(second.header("X-RateLimit-Remaining") == nil)
                #expect(second.body == first.body)

                let ietf = secondPage("link", "ratelimit_page=2&ratelimit_style=ietf&retry_after=3")
                let limited = try RawHTTPClient.fetch(port: server.port, ietf)
                expectValidPage(limited)
                #expect(limited.header("RateLimit-Remaining") == "0")
                #expect(limited.header("RateLimit-Reset") == "3")
                #expect(limited.header("X-RateLimit-Remaining") == nil)
                #expect(try RawHTTPClient.fetch(port: server.port, ietf).header("RateLimit-Remaining") == nil)
            }
        }

        /// The pages (of 1000) whose first request is answered with each status.
        private func firstStatuses(_ server: TestServer, query: String) throws -> [Int: Set<Int>] {
            let client = try RawHTTPClient(port: server.port)
            var result: [Int: Set<Int>] = [:]
            for page in 1...1000 {
                try client.request("/paged/page?n=1000&per_page=1&page=\(page)&\(query)")
                result[try client.readResponse().status, default: []].insert(page)
            }
            return result
        }

        @Test func rateSelectionIsDeterministicAndProportional() async throws {
            let query = "rate_5xx=0.1"
            let first = try await TestServer.with { try firstStatuses($0, query: query) }
            let again = try await TestServer.with { try firstStatuses($0, query: query) }
            #expect(first == again)
            let failed = first[503]?.count ?? 0
            #expect((50...150).contains(failed), "\(failed) of 1000 selected")
            #expect(failed + (first[200]?.count ?? 0) == 1000)

            let mixed = try await TestServer.with { try firstStatuses($0, query: "rate_429=0.1&rate_5xx=0.2") }
            #expect((50...150).contains(mixed[429]?.count ?? 0))
            #expect((140...260).contains(mixed[503]?.count ?? 0))
            #expect(Set(mixed.keys).isSubset(of: [200, 429, 503]))
        }

        @Test func rateSelectedPagesRecover() async throws {
            try await withServer { server in
                var broken: [String] = []
                for page in 1...200 {
                    let target = "/paged/link?n=2000&page=\(page)&rate_reset=0.05&rate_trunc=0.05"
                    let probe = try RawHTTPClient(port: server.port)
                    try probe.request(target, headers: [("Connection", "close")])
                    let head = try probe.readHead()
                    #expect(head.status == 200)
                    let length = try #require(head.header("Content-Length").flatMap { Int($0) })
                    if readUntilClosed(probe).bytes.count < length { broken.append(target) }
                }
                #expect((5...40).contains(broken.count), "\(broken.count) of 200 broken")
                // Every broken target answers normally the second time.
                for target in broken {
                    expectValidPage(try RawHTTPClient.fetch(port: server.port, target))
                }
                #expect(server.requestLog.count == 200 + broken.count)
            }
        }

        @Test(arguments: styles)
        func taggedItemsMatchSyntheticItems(style: String) async throws {
            try await withServer { server in
                let response = try RawHTTPClient.fetch(port: server.port, secondPage(style, "tag=a%20b%22c"))
                expectValidPage(response)
                let items = (10..<20).map { SyntheticItems.json(id: $0, tag: "a b\"c") }.joined(separator: ",")
                if style == "link" {
                    #expect(response.text == "[" + items + "]")
                } else {
                    #expect(response.text.contains(":[" + items + "]"))
                }
            }
        }

        @Test func syntheticItemsAreDeterministicAndWellFormed() throws {
            #expect(SyntheticItems.json(id: 3, tag: nil) == #"{"id":3,"name":"item-3"}"#)
            let isoFormatter = ISO8601DateFormatter()
            var actives = 0
            var dates = Set<String>()
            for id in 0..<500 {
                let text = SyntheticItems.json(id: id, tag: "books")
                #expect(text == SyntheticItems.json(id: id, tag: "books"))
                #expect(text != SyntheticItems.json(id: id, tag: "films"))
                let object = try #require(
                    try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any])
                #expect(object["id"] as? Int == id)
                #expect(object["name"] as? String == "item-\(id)")
                #expect(object["tag"] as? String == "books")
                let score = try #require(object["score"] as? Double)
                #expect(score >= 0 && score < 100)
                let created = try #require(object["created_at"] as? String)
                #expect(created.hasPrefix("2024-") && created.hasSuffix("Z") && created.count == 20)
                let date = try #require(isoFormatter.date(from: created), "bad date \(created)")
                #expect(isoFormatter.string(from: date) == created)
                dates.insert(created)
                let active = try #require(object["active"] as? Bool)
                if active { actives += 1 }
                #expect(Array(object.keys).count == 6)
            }
            #expect((150...350).contains(actives))
            #expect(dates.count > 450)
        }

        @Test func untaggedItemsAreUnchanged() async throws {
            try await withServer { server in
                let response = try RawHTTPClient.fetch(port: server.port, "/paged/link?n=5&per_page=3")
                #expect(response.text == #"[{"id":0,"name":"item-0"},{"id":1,"name":"item-1"},{"id":2,"name":"item-2"}]"#)
            }
        }

        @Test func requestLogRecordsTargetsAndStatuses() async throws {
            try await withServer { server in
                let start = ContinuousClock.now
                let targets = [
                    secondPage("page", "fault_429=2"), secondPage("page", "fault_429=2"), "/status/418", "/nowhere",
                ]
                for target in targets {
                    _ = try RawHTTPClient.fetch(port: server.port, target)
                }
                let log = server.requestLog
                #expect(log.map(\.target) == targets)
                #expect(log.map(\.status) == [429, 200, 418, 404])
                #expect(log.allSatisfy { $0.method == "GET" })
                #expect(log.allSatisfy { $0.receivedAt >= start && $0.receivedAt <= .now })
                #expect(zip(log, log.dropFirst()).allSatisfy { $0.receivedAt <= $1.receivedAt })
                server.resetRequestLog()
                #expect(server.requestLog.isEmpty)
                // The fault counts survive: the page stays healed.
                #expect(try RawHTTPClient.fetch(port: server.port, targets[0]).status == 200)
                #expect(server.requestLog.map(\.status) == [200])
            }
        }

        @Test func requestLogTimesTheHeadNotTheResponse() async throws {
            try await withServer { server in
                let before = ContinuousClock.now
                _ = try RawHTTPClient.fetch(port: server.port, "/paged/page?delay=2000")
                let entry = try #require(server.requestLog.first)
                #expect(entry.receivedAt - before < .milliseconds(1500))
                #expect(entry.status == 200)
            }
        }

        @Test func helpListsThePagedParameters() {
            for parameter in ["tag=", "fault_KIND", "rate_KIND", "ratelimit_page", "retry_after", "drip_ms", "fault_times"] {
                #expect(TestServer.endpointHelp.contains(parameter))
            }
        }
    }
}
