import Foundation
import Testing
import TrawlTestSupport
import Trawl
import TrawlTestServer

/// `/feed/NAME` through a route: a bare array of `{"id","seq","updated_at","rev"}` with an `ETag`.
private struct Feed: GetRoute {
    typealias Output = [FeedItem]
    let name: String
    var extra: QueryParameters = [:]
    var path: RoutePath { "feed/\(name)" }
    var query: QueryParameters { (["per_page": 10] as QueryParameters).merging(extra) }
}

private struct FeedItem: Codable, Sendable, Equatable {
    var id: Int
    var rev: Int
}

private func temporaryDirectory() -> String {
    FileManager.default.temporaryDirectory.appendingPathComponent("trawl-cache-\(UUID())").path
}

private func statuses(_ server: TestServer) -> [Int] {
    server.requestLog.filter { $0.target.hasPrefix("/feed/") }.map(\.status)
}

@Suite("ResponseCache: conditional requests in API.send and pages", .hangGuard)
struct ResponseCacheTests {
    @Test("API.send revalidates: a 304 answers with the stored body, decoded as the 200 was")
    func sendReusesStoredBody() async throws {
        try await withServer { server in
            let directory = temporaryDirectory()
            defer { try? FileManager.default.removeItem(atPath: directory) }
            server.feedAdd("s", count: 5)
            var api = api(server)
            api.cache = try DiskResponseCache(directory: directory, isPrivate: false)
            let first = try await api.send(Feed(name: "s"))
            let second = try await api.send(Feed(name: "s"))
            #expect(first == (0..<5).map { FeedItem(id: $0, rev: 0) })
            #expect(second == first)
            #expect(statuses(server) == [200, 304])
            server.feedTouch("s", id: 2)
            let third = try await api.send(Feed(name: "s"))
            #expect(statuses(server) == [200, 304, 200])
            #expect(third.last == FeedItem(id: 2, rev: 1))
        }
    }

    @Test("a renewed bearer token keeps its pages' cache key when the adapter names its principal")
    func principalKeysTheCache() {
        func request(_ token: String) -> Request {
            var request = Request(url: "https://api.example.com/teams?page=2")
            request.headers["Authorization"] = "Bearer " + token
            return request
        }
        let principal = "oauth2 https://auth.example.com/token app read"
        #expect(ResponseCacheKey(request("run-1"), principal: principal)
            == ResponseCacheKey(request("run-2"), principal: principal))
        #expect(ResponseCacheKey(request("run-1")) != ResponseCacheKey(request("run-2")))
        // Another principal (another client) never shares the stored pages.
        #expect(ResponseCacheKey(request("run-1"), principal: principal)
            != ResponseCacheKey(request("run-1"), principal: "oauth2 https://auth.example.com/token other read"))
        #expect(ResponseCacheKey(request("run-1"), principal: principal).carriesCredentials)
    }

    @Test("a shared cache never stores a response to a credentialed request; a private one does")
    func credentialsOnlyInPrivateCache() async throws {
        try await withServer { server in
            server.feedAdd("p", count: 3)
            for isPrivate in [false, true] {
                let directory = temporaryDirectory()
                defer { try? FileManager.default.removeItem(atPath: directory) }
                server.resetRequestLog()
                var api = api(server)
                api.headers = ["Authorization": "Bearer s3cret"]
                api.cache = try DiskResponseCache(directory: directory, isPrivate: isPrivate)
                _ = try await api.send(Feed(name: "p"))
                _ = try await api.send(Feed(name: "p"))
                #expect(statuses(server) == (isPrivate ? [200, 304] : [200, 200]), "private: \(isPrivate)")
                let stored = (try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []
                #expect(stored.isEmpty == !isPrivate, "private: \(isPrivate)")
                // What is stored names neither the URL nor the token.
                for name in stored {
                    let text = String(decoding: FileManager.default.contents(atPath: directory + "/" + name) ?? Data(),
                        as: UTF8.self)
                    #expect(!text.contains("s3cret") && !text.contains("/feed/p"))
                }
            }
        }
    }

    @Test("no-store on the response is honoured by API.send")
    func noStoreInSend() async throws {
        try await withServer { server in
            let directory = temporaryDirectory()
            defer { try? FileManager.default.removeItem(atPath: directory) }
            server.feedAdd("n", count: 2)
            var api = api(server)
            api.cache = try DiskResponseCache(directory: directory, isPrivate: false)
            _ = try await api.send(Feed(name: "n", extra: ["no_store": 1]))
            _ = try await api.send(Feed(name: "n", extra: ["no_store": 1]))
            #expect(statuses(server) == [200, 200])
            #expect(((try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []).isEmpty)
        }
    }

    @Test("a walk's pages revalidate through the API's cache: 304s give the same items")
    func pagesRevalidate() async throws {
        try await withServer { server in
            let directory = temporaryDirectory()
            defer { try? FileManager.default.removeItem(atPath: directory) }
            server.feedAdd("w", count: 25)
            var api = api(server)
            api.cache = try DiskResponseCache(directory: directory, isPrivate: false)
            func walk() async throws -> [FeedItem] {
                var items: [FeedItem] = []
                for try await item in try await api.items(
                    of: Feed(name: "w"), as: FeedItem.self, at: .root, style: .link())
                {
                    items.append(item)
                }
                return items
            }
            let first = try await walk()
            let second = try await walk()
            #expect(first.map(\.id) == Array(0..<25))
            #expect(second == first)
            #expect(statuses(server) == [200, 200, 200, 304, 304, 304])
        }
    }
}
