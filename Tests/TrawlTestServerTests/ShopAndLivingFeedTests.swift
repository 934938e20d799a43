import Foundation
import Testing
import TrawlTestSupport
import TrawlEngine
import TrawlTestServer

// `/shop/…` (OAuth2 client credentials, customers and their orders, a feed paged by seq) and living feeds, as
// `trawl serve` runs them. Requests go through the engine's async client: nothing here blocks a thread.

/// Sends one request to `server`.
private func exchange(
    _ server: TestServer, _ target: String, method: HTTPMethod = .get, headers: HTTPHeaders = [:],
    form: String? = nil
) async throws -> Response {
    let body = form.map { RequestBody.string($0, contentType: "application/x-www-form-urlencoded") }
    return try await Client().send(Request(url: server.url(target), method: method, headers: headers, body: body))
}

/// A JSON array of flat objects (the server's compact JSON) as the texts of its elements.
private func elements(_ response: Response) throws -> [String] {
    _ = try #require(try JSONSerialization.jsonObject(with: Data(response.body)) as? [Any])
    let text = response.bodyText
    guard text != "[]" else { return [] }
    return text.dropFirst(2).dropLast(2).components(separatedBy: "},{").map { "{" + $0 + "}" }
}

private func object(_ response: Response) throws -> [String: Any] {
    try #require(try JSONSerialization.jsonObject(with: Data(response.body)) as? [String: Any])
}

/// A token from `/shop/token` (HTTP Basic).
private func shopToken(_ server: TestServer) async throws -> String {
    let basic = Data("\(TestServer.shopClientID):\(TestServer.shopClientSecret)".utf8).base64EncodedString()
    let response = try await exchange(
        server, "/shop/token", method: .post, headers: ["Authorization": "Basic \(basic)"],
        form: "grant_type=client_credentials")
    #expect(response.status == 200, "\(response.bodyText)")
    return try #require(try object(response)["access_token"] as? String)
}

/// The URL of `Link: <URL>; rel="next"`, nil without one.
private func nextLink(_ response: Response) -> String? {
    guard let link = response.headers["Link"], let open = link.firstIndex(of: "<"),
        let close = link.firstIndex(of: ">")
    else { return nil }
    return String(link[link.index(after: open)..<close])
}

/// Polls `condition` every 20 ms for up to `timeout`.
private func eventually(timeout: Duration = .seconds(10), _ condition: () -> Bool) async throws -> Bool {
    let deadline = ContinuousClock.now + timeout
    while ContinuousClock.now < deadline {
        if condition() { return true }
        try await Task.sleep(for: .milliseconds(20))
    }
    return condition()
}

extension TrawlTestServerTests {
    @Suite("The demo shop and living feeds", .hangGuard)
    struct ShopAndLivingFeedTests {
        @Test("/shop/token: POST only, client_credentials only, the demo client only; form or Basic")
        func tokenEndpoint() async throws {
            try await withServer { server in
                #expect(try await exchange(server, "/shop/token").status == 405)
                let wrongGrant = try await exchange(
                    server, "/shop/token", method: .post, form: "grant_type=password&client_id=demo")
                #expect(wrongGrant.status == 400)
                let wrongSecret = try await exchange(
                    server, "/shop/token", method: .post,
                    form: "grant_type=client_credentials&client_id=demo&client_secret=nope")
                #expect(wrongSecret.status == 401)
                #expect(try object(wrongSecret)["error"] as? String == "invalid_client")
                let posted = try await exchange(
                    server, "/shop/token", method: .post,
                    form: "grant_type=client_credentials&client_id=demo&client_secret=demo-secret")
                #expect(posted.status == 200)
                let body = try object(posted)
                #expect(body["token_type"] as? String == "Bearer")
                #expect(body["expires_in"] as? Int == 3600)
                #expect(posted.headers["Cache-Control"] == "no-store")
                let basic = try await shopToken(server)
                #expect(basic != body["access_token"] as? String)
            }
        }

        @Test("every other /shop/ path answers 401 without a token the shop issued, 200 with one")
        func bearerRequired() async throws {
            try await withServer { server in
                for path in ["/shop/customers", "/shop/customers/2/orders", "/shop/feed/events"] {
                    let bare = try await exchange(server, path)
                    #expect(bare.status == 401, "\(path)")
                    #expect(bare.headers["WWW-Authenticate"]?.hasPrefix("Bearer") == true, "\(path)")
                    let forged = try await exchange(server, path, headers: ["Authorization": "Bearer demo-forged"])
                    #expect(forged.status == 401, "\(path)")
                }
                let token = try await shopToken(server)
                let auth: HTTPHeaders = ["Authorization": "Bearer \(token)"]
                for path in ["/shop/customers", "/shop/customers/2/orders", "/shop/feed/events"] {
                    #expect(try await exchange(server, path, headers: auth).status == 200, "\(path)")
                }
                #expect(try await exchange(server, "/shop/nothing", headers: auth).status == 404)
            }
        }

        @Test("customers: 40 in pages with total_pages; orders: a bare array with Link, 404 for no customer")
        func customersAndOrders() async throws {
            try await withServer { server in
                let auth: HTTPHeaders = ["Authorization": "Bearer \(try await shopToken(server))"]
                var customers: [[String: Any]] = []
                for page in 1...4 {
                    let response = try await exchange(server, "/shop/customers?per_page=10&page=\(page)", headers: auth)
                    let body = try object(response)
                    #expect(body["total_pages"] as? Int == 4)
                    #expect(body["page"] as? Int == page)
                    customers += try #require(body["customers"] as? [[String: Any]])
                }
                #expect(customers.map { $0["id"] as? Int } == (1...40).map { Optional($0) })
                #expect(Set(customers.compactMap { $0["name"] as? String }).count == 40)
                let first = try await exchange(server, "/shop/customers?per_page=3", headers: auth)
                #expect(first.bodyText.hasPrefix("{\"customers\":[" + TestServer.shopCustomers[0] + ","))

                // Customer 2 has 6 orders: 5 and a Link, then 1 and none.
                #expect(TestServer.shopOrders(customer: 2).count == 6)
                let page1 = try await exchange(server, "/shop/customers/2/orders?per_page=5", headers: auth)
                #expect(try elements(page1) == Array(TestServer.shopOrders(customer: 2).prefix(5)))
                let next = try #require(nextLink(page1))
                #expect(next.hasSuffix("/shop/customers/2/orders?page=2&per_page=5"))
                let page2 = try await Client().send(Request(url: next, headers: auth))
                #expect(try elements(page2) == [TestServer.shopOrders(customer: 2)[5]])
                #expect(nextLink(page2) == nil)
                // Customer 7 has none.
                #expect(try await exchange(server, "/shop/customers/7/orders", headers: auth).bodyText == "[]")
                for path in ["/shop/customers/41/orders", "/shop/customers/0/orders", "/shop/customers/x/orders"] {
                    #expect(try await exchange(server, path, headers: auth).status == 404, "\(path)")
                }
            }
        }

        @Test("/shop/feed pages by seq: an item changed between two pages is not skipped")
        func feedPagedBySeq() async throws {
            try await withServer { server in
                let auth: HTTPHeaders = ["Authorization": "Bearer \(try await shopToken(server))"]
                server.feedAdd("events", count: 25)
                let page1 = try await exchange(server, "/shop/feed/events?per_page=10", headers: auth)
                #expect(try elements(page1) == (0..<10).compactMap { server.feedLine("events", id: $0) }
                    .map { String($0.dropLast()) })
                let next = try #require(nextLink(page1))
                #expect(next.hasSuffix("/shop/feed/events?after=9&per_page=10"))
                // Item 3 changes: it moves to the end; page 2 still starts at item 10 (paged by number, it would
                // start at item 11, and item 10 would be lost).
                server.feedTouch("events", id: 3)
                var lines: [String] = []
                var url: String? = next
                while let current = url {
                    let page = try await Client().send(Request(url: current, headers: auth))
                    lines += try elements(page)
                    url = nextLink(page)
                }
                let expected = (Array(10..<25) + [3]).compactMap { server.feedLine("events", id: $0) }
                #expect(lines == expected.map { String($0.dropLast()) })
            }
        }

        @Test("a living feed starts with its items when first asked for, then grows and changes by itself")
        func livingFeed() async throws {
            let living = TestServer.LivingFeeds(initialItems: 250, interval: .milliseconds(50), added: 5, touched: 2)
            let server = try await TestServer.start(livingFeeds: living)
            do {
                #expect(server.feedLines("orders").isEmpty)
                let first = try await exchange(server, "/feed/orders?per_page=1000")
                let items = try #require(try JSONSerialization.jsonObject(with: Data(first.body)) as? [[String: Any]])
                #expect(items.count == 250)
                #expect(items.map { $0["id"] as? Int } == (0..<250).map { Optional($0) })
                #expect(items.map { $0["seq"] as? Int } == (0..<250).map { Optional($0) })
                #expect(items.allSatisfy { $0["rev"] as? Int == 0 })
                #expect(try await eventually { server.feedLines("orders").count >= 260 })
                let now = server.feedLines("orders")
                #expect(now.contains { $0.contains("\"rev\":1") || $0.contains("\"rev\":2") })
                #expect(now.filter { $0.contains("\"rev\":0") }.count < now.count)
                // A feed nobody asked for does not exist, and so does not grow.
                #expect(server.feedLines("never").isEmpty)
                try await server.shutdown()
            } catch {
                try? await server.shutdown()
                throw error
            }
        }

        @Test("without living feeds (tests) a feed stays empty until a test adds to it")
        func stillFeed() async throws {
            try await withServer { server in
                let response = try await exchange(server, "/feed/orders")
                #expect(response.bodyText == "[]")
                #expect(server.feedLines("orders").isEmpty)
            }
        }

        @Test("updated_at and Last-Modified stay real dates past January (a living feed gets there in hours)")
        func datesPastJanuary() async throws {
            try await withServer { server in
                server.feedAdd("long", count: 50_000)
                // Item 49999: 49999 minutes after 2024-01-01T00:00Z, a Sunday.
                let line = try #require(server.feedLine("long", id: 49_999))
                #expect(line.contains("\"updated_at\":\"2024-02-04T17:19:00Z\""))
                let last = try await exchange(server, "/feed/long?since_seq=49999")
                #expect(last.headers["Last-Modified"] == "Sun, 04 Feb 2024 17:19:00 GMT")
                let first = try await exchange(server, "/feed/long?per_page=1")
                #expect(first.headers["Last-Modified"] == "Mon, 01 Jan 2024 00:00:00 GMT")
            }
        }
    }
}
