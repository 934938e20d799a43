import Foundation
import Testing
import TrawlTestSupport
import TrawlTestServer

extension TrawlTestServerTests {
    /// The listings that change under a walk (issue 39): `/drifting/NAME` and `/feed/NAME`'s `[since, until)`.
    @Suite("Changing listings", .hangGuard)
    struct ChangingListingTests {
        private func ids(_ body: [UInt8], items: String? = "items") throws -> [Int] {
            let json = try JSONSerialization.jsonObject(with: Data(body))
            let container: Any = items.flatMap { (json as? [String: Any])?[$0] } ?? json
            let list = try #require(container as? [[String: Any]])
            return list.compactMap { $0["id"] as? Int }
        }

        @Test func driftingInsertsAfterTheFirstRequest() async throws {
            try await withServer { server in
                let first = try RawHTTPClient.fetch(port: server.port, "/drifting/a?offset=0&limit=10&insert=2")
                #expect(try ids(first.body) == Array(1...10))
                #expect(String(decoding: first.body, as: UTF8.self).hasSuffix("\"offset\":0,\"total\":30}"))
                let second = try RawHTTPClient.fetch(port: server.port, "/drifting/a?offset=10&limit=10&insert=2")
                #expect(try ids(second.body) == Array(9...18))
                #expect(String(decoding: second.body, as: UTF8.self).hasSuffix("\"total\":32}"))
                // No `every`: the listing changed once.
                let head = try RawHTTPClient.fetch(port: server.port, "/drifting/a?offset=0&limit=3&insert=2")
                #expect(try ids(head.body) == [32, 31, 1])
                // Another name counts its own requests.
                let other = try RawHTTPClient.fetch(port: server.port, "/drifting/b?page=1&per_page=5&delete=1")
                #expect(try ids(other.body) == Array(1...5))
            }
        }

        @Test func driftingDeletesAndRepeats() async throws {
            try await withServer { server in
                let target = "/drifting/d?offset=0&limit=4&n=10&delete=1&every=1"
                var heads: [[Int]] = []
                for _ in 0..<3 { heads.append(try ids(RawHTTPClient.fetch(port: server.port, target).body)) }
                #expect(heads == [[1, 2, 3, 4], [2, 3, 4, 5], [3, 4, 5, 6]])
            }
        }

        @Test func feedUntilIsExclusive() async throws {
            try await withServer { server in
                server.feedAdd("w", count: 10)  // ids and seq 0...9: updated_at 00:00 ... 00:09
                let window = "/feed/w?per_page=50&since=2024-01-01T00:03:00Z&until=2024-01-01T00:06:00Z"
                let items = try ids(RawHTTPClient.fetch(port: server.port, window).body, items: nil)
                #expect(items.count == 3, "[00:03, 00:06): seq 3, 4, 5")
                let seqWindow = "/feed/w?per_page=50&since_seq=6&until_seq=6"
                #expect(try ids(RawHTTPClient.fetch(port: server.port, seqWindow).body, items: nil).isEmpty)
                // Two adjacent windows hold every item once.
                let low = try ids(RawHTTPClient.fetch(port: server.port, "/feed/w?per_page=50&until_seq=5").body, items: nil)
                let high = try ids(RawHTTPClient.fetch(port: server.port, "/feed/w?per_page=50&since_seq=5").body, items: nil)
                #expect((low + high).sorted() == Array(0...9))
                #expect(Set(low).isDisjoint(with: high))
            }
        }
    }
}
