import Foundation
import Testing
import TrawlTestSupport
import TrawlTestServer

@testable import Trawl
@testable import TrawlJobs

/// GraphQL sources (`graphql:`) and walks paged in the JSON request body (`paginate: {…, in: body}`), against the
/// test server's `POST /graphql` and `POST /bodypaged`.
@Suite("GraphQL and body pagination", .hangGuard)
struct GraphQLJobTests {
    static let nodesQuery =
        "query($first: Int, $after: String) { items(first: $first, after: $after) { nodes { id name } pageInfo { hasNextPage endCursor } } }"
    static let edgesQuery =
        "query($first: Int, $after: String) { items(first: $first, after: $after) { edges { cursor node { id name } } pageInfo { hasNextPage endCursor } } }"

    func graphQLJob(_ server: TestServer, query: String = nodesQuery, target: String, connection: String = "data.items")
        -> String
    {
        """
        settings: {backoff_ms: 5, attempts: 2}
        sources:
          - name: items
            url: "\(server.url(target))"
            graphql:
              query: "\(query)"
              variables: {first: 10}
              connection: \(connection)
        """
    }

    func run(_ text: String, in directory: String, name: String = "out.jsonl", state: String? = nil)
        async throws -> JobReport
    {
        let job = try Job.parse(text, environment: [:])
        let options = JobRunOptions(output: .file(directory + "/" + name), stateDirectory: state, environment: [:])
        return try await JobRunner(job: job, options: options).run()
    }

    static func lines(_ ids: ClosedRange<Int>) -> String {
        ids.map { "{\"id\":\($0),\"name\":\"item-\($0)\"}\n" }.joined()
    }

    @Test("nodes and edges: every item once, in order, the cursor sent in variables.after", arguments: ["nodes", "edges"])
    func exactWalk(form: String) async throws {
        try await TestServer.with { server in
            let directory = try temporaryDirectory()
            defer { try? FileManager.default.removeItem(atPath: directory) }
            let query = form == "nodes" ? Self.nodesQuery : Self.edgesQuery
            let report = try await run(graphQLJob(server, query: query, target: "/graphql?n=25"), in: directory)
            #expect(report.complete, "\(report.failures)")
            #expect(report.failures.isEmpty)
            #expect(fileText(directory + "/out.jsonl") == Self.lines(1...25))
            let posts = server.requestLog.filter { $0.target.hasPrefix("/graphql") }
            #expect(posts.count == 3)
            #expect(posts.allSatisfy { $0.method == "POST" })
        }
    }

    @Test("the cursor, page or offset at a key path of the JSON body: every item once, in order")
    func bodyStyles() async throws {
        let styles = [
            ("{style: cursor, cursor: meta.next, param: page.cursor, in: body}", #"{"page": {"size": 10}}"#),
            ("{style: page, param: page.number, size_param: page.size, size: 10, total: meta.total, in: body}",
             #"{"filter": "x"}"#),
            ("{style: offset, param: offset, limit_param: limit, limit: 10, total: meta.total, in: body}", "{}"),
        ]
        try await TestServer.with { server in
            let directory = try temporaryDirectory()
            defer { try? FileManager.default.removeItem(atPath: directory) }
            for (index, (paginate, body)) in styles.enumerated() {
                let text = """
                    settings: {backoff_ms: 5, attempts: 2}
                    sources:
                      - name: items
                        url: "\(server.url("/bodypaged?n=25"))"
                        method: POST
                        body: '\(body)'
                        paginate: \(paginate)
                        items: items
                    """
                let report = try await run(text, in: directory, name: "out\(index).jsonl")
                #expect(report.complete, "\(paginate): \(report.failures)")
                let expected = (1...25).map { "{\"id\":\($0)}\n" }.joined()
                #expect(fileText(directory + "/out\(index).jsonl") == expected, "\(paginate)")
            }
        }
    }

    @Test("errors in a 200 answer fail the unit with the message; the pages before it are kept, the page is not")
    func errorsInAnswer() async throws {
        try await TestServer.with { server in
            let directory = try temporaryDirectory()
            defer { try? FileManager.default.removeItem(atPath: directory) }
            let report = try await run(graphQLJob(server, target: "/graphql?n=25&errors_at=2"), in: directory)
            #expect(!report.complete)
            #expect(report.failures.count == 1)
            let error = report.failures.first?.error ?? ""
            #expect(error.contains("GraphQL answer holds errors"), "\(error)")
            #expect(error.contains("Something went wrong on page 2"), "\(error)")
            #expect(fileText(directory + "/out.jsonl") == Self.lines(1...10))
        }
    }

    @Test("a huge, nested error message with control characters is bounded and escaped")
    func hostileErrorMessage() async throws {
        try await TestServer.with { server in
            let directory = try temporaryDirectory()
            defer { try? FileManager.default.removeItem(atPath: directory) }
            let report = try await run(graphQLJob(server, target: "/graphql?n=25&errors_at=1&huge=1"), in: directory)
            #expect(!report.complete)
            let error = report.failures.first?.error ?? ""
            #expect(error.contains("GraphQL answer holds errors"), "\(error)")
            #expect(error.utf8.count < 2_000, "\(error.utf8.count) bytes")
            #expect(!error.unicodeScalars.contains { $0.value < 0x20 })
            #expect(error.contains("\\u001B"))
            #expect(fileText(directory + "/out.jsonl") == "")
        }
    }

    @Test("hasNextPage true with a null cursor fails clearly instead of ending or looping")
    func trueWithoutCursor() async throws {
        try await TestServer.with { server in
            let directory = try temporaryDirectory()
            defer { try? FileManager.default.removeItem(atPath: directory) }
            let report = try await run(graphQLJob(server, target: "/graphql?n=25&null_cursor_at=2"), in: directory)
            #expect(!report.complete)
            let error = report.failures.first?.error ?? ""
            #expect(error.contains("hasNextPage' is true but there is no next cursor"), "\(error)")
            #expect(server.requestLog.filter { $0.target.hasPrefix("/graphql") }.count == 2)
        }
    }

    @Test("a connection path absent from the answer fails the unit naming the path")
    func absentConnection() async throws {
        try await TestServer.with { server in
            let directory = try temporaryDirectory()
            defer { try? FileManager.default.removeItem(atPath: directory) }
            let report = try await run(
                graphQLJob(server, target: "/graphql?n=25", connection: "data.nothing"), in: directory)
            #expect(!report.complete)
            let error = report.failures.first?.error ?? ""
            #expect(error.contains("no value at 'data.nothing.nodes'"), "\(error)")
            #expect(fileText(directory + "/out.jsonl") == "")
        }
    }

    @Test("data.rateLimit with remaining 0 pauses the host until resetAt, as rate-limit headers do")
    func rateLimitPauses() async throws {
        try await TestServer.with { server in
            let directory = try temporaryDirectory()
            defer { try? FileManager.default.removeItem(atPath: directory) }
            let query = Self.nodesQuery.replacingOccurrences(of: "} } }", with: "} } rateLimit { remaining resetAt } }")
            let report = try await run(
                graphQLJob(server, query: query, target: "/graphql?n=35&remaining=3&reset_in=2"), in: directory)
            #expect(report.complete, "\(report.failures)")
            #expect(fileText(directory + "/out.jsonl") == Self.lines(1...35))
            // Pages 3 and 4 say remaining 0 or less: each pauses the host.
            #expect(report.totals.rateLimitWaits >= 1)
            #expect(report.totals.rateLimitWaitSeconds > 0)
        }
    }

    @Test("extensions.cost with a bucket short of the next query's cost pauses the host, as rateLimit does")
    func queryCostPauses() async throws {
        try await TestServer.with { server in
            let directory = try temporaryDirectory()
            defer { try? FileManager.default.removeItem(atPath: directory) }
            // Cost 50 a page from a bucket of 100: page 1 leaves 50 (enough), pages 2 and 3 leave 0 (each pauses
            // the host for 50 / 1000 s).
            let report = try await run(
                graphQLJob(server, target: "/graphql?n=25&cost=50&bucket=100&restore=1000"), in: directory)
            #expect(report.complete, "\(report.failures)")
            #expect(fileText(directory + "/out.jsonl") == Self.lines(1...25))
            #expect(report.totals.rateLimitWaits >= 1)
            #expect(report.totals.rateLimitWaitSeconds > 0)
            #expect(report.totals.cappedWaits == 0)
            // A restore rate of 0 would mean waiting for ever: the pause is capped at max_wait_s, and counted.
            let hostile = graphQLJob(server, target: "/graphql?n=25&cost=50&bucket=50&restore=0")
                .replacingOccurrences(of: "attempts: 2}", with: "attempts: 2, max_wait_s: 0.05}")
            let capped = try await run(hostile, in: directory, name: "capped.jsonl")
            #expect(capped.complete, "\(capped.failures)")
            #expect(fileText(directory + "/capped.jsonl") == Self.lines(1...25))
            #expect(capped.totals.cappedWaits >= 1)
        }
    }

    @Test("a THROTTLED error is asked again after the pause, not failed; out of attempts it fails the page")
    func throttledRetried() async throws {
        try await TestServer.with { server in
            let directory = try temporaryDirectory()
            defer { try? FileManager.default.removeItem(atPath: directory) }
            let once = try await run(
                graphQLJob(server, target: "/graphql?n=25&cost=10&bucket=20&restore=1000&throttled_at=2"), in: directory)
            #expect(once.complete, "\(once.failures)")
            #expect(once.failures.isEmpty)
            #expect(fileText(directory + "/out.jsonl") == Self.lines(1...25))
            #expect(once.totals.retries == 1)
            // The refused answer says the bucket holds 0 of the 10 its query costs: the host pauses.
            #expect(once.totals.rateLimitWaits >= 1)
            // Refused on every attempt (2): the page fails with the server's message; the page before it is kept.
            let always = try await run(
                graphQLJob(server, target: "/graphql?n=25&throttled_at=2&throttled_times=9"), in: directory,
                name: "always.jsonl")
            #expect(!always.complete)
            #expect(always.failures.first?.error.contains("Throttled") == true, "\(always.failures)")
            #expect(always.totals.retries == 1)
            #expect(fileText(directory + "/always.jsonl") == Self.lines(1...10))
        }
    }

    @Test("a hostile cost answer is a bounded wait: rate 0, a tiny rate or a huge cost never sleep past the cap")
    func hostileQueryCost() {
        func wait(_ cost: String, _ available: String, _ rate: String?) -> Duration? {
            var captured: [JSONKeyPath: JSONValue] = [
                GraphQLAnswer.costRequested: .number(cost), GraphQLAnswer.costAvailable: .number(available),
            ]
            if let rate { captured[GraphQLAnswer.costRestoreRate] = .number(rate) }
            return RateLimitSignal.wait(graphQL: captured)
        }
        #expect(wait("52", "12", "50.0") == .milliseconds(800))
        #expect(wait("52", "988", "50.0") == nil, "enough in the bucket")
        #expect(wait("52", "52", "50.0") == nil)
        let longest = Duration.boundedSeconds(Duration.longestBoundedSeconds)
        for (cost, rate) in [("52", "0"), ("52", "1e-9"), ("1e300", "50"), ("52", "-5")] {
            #expect(wait(cost, "0", rate).map { $0 <= longest && $0 > .seconds(1_000) } == true, "\(cost) \(rate)")
        }
        #expect(wait("52", "0", nil) == longest, "no restore rate: the longest wait, which the scheduler caps")
        #expect(wait("1e400", "0", "50").map { $0 <= longest } ?? true, "a cost past Double: no wait, or bounded")
        // The scheduler caps what it imposes at max_wait (120 s by default), as it caps Retry-After.
        #expect(JobSettings().maxWait == .seconds(120))
    }

    @Test("a run stopped by an error resumes at the failed page: the union is exact")
    func resume() async throws {
        try await TestServer.with { server in
            let directory = try temporaryDirectory()
            defer { try? FileManager.default.removeItem(atPath: directory) }
            let text = graphQLJob(server, target: "/graphql?n=35&errors_at=3&errors_times=1")
            let first = try await run(text, in: directory, state: directory + "/state")
            #expect(!first.complete)
            #expect(fileText(directory + "/out.jsonl") == Self.lines(1...20))
            let second = try await run(text, in: directory, state: directory + "/state")
            #expect(second.complete, "\(second.failures)")
            #expect(fileText(directory + "/out.jsonl") == Self.lines(1...35))
            // Pages 1 and 2 were not asked again: 3 + page 3 again + page 4.
            #expect(server.requestLog.filter { $0.target.hasPrefix("/graphql") }.count == 5)
        }
    }

    @Test("docs/jobs.md's graphql.yaml and body-paging.yaml run as written against the test server")
    func docsExamples() async throws {
        let manual = try docsFile("jobs.md")
        let graphQL = try codeBlock("yaml", after: "## GraphQL and pagination in the request body", in: manual)
        let bodyPaging = try codeBlock("yaml", after: "`trawl serve`'s `POST /bodypaged` answers all three", in: manual)
        #expect(graphQL.hasPrefix("# graphql.yaml"))
        #expect(bodyPaging.hasPrefix("# body-paging.yaml"))
        try await TestServer.with { server in
            let directory = try temporaryDirectory()
            defer { try? FileManager.default.removeItem(atPath: directory) }
            let base = server.url("/")
            let served = { (text: String) in text.replacingOccurrences(of: "http://127.0.0.1:8080/", with: base) }
            let job = try Job.parse(served(graphQL), environment: ["TOKEN": "t0ken"])
            let report = try await JobRunner(
                job: job, options: JobRunOptions(output: .file(directory + "/items.jsonl"), environment: ["TOKEN": "t0ken"])
            ).run()
            #expect(report.complete, "\(report.failures)")
            #expect(fileText(directory + "/items.jsonl") == Self.lines(1...25))
            let paged = try Job.parse(served(bodyPaging), environment: [:])
            let three = try await JobRunner(
                job: paged, options: JobRunOptions(output: .directory(directory + "/out"), environment: [:])
            ).run()
            #expect(three.complete, "\(three.failures)")
            let expected = (1...25).map { "{\"id\":\($0)}\n" }.joined()
            for name in ["by_cursor", "by_page", "by_offset"] {
                #expect(fileText(directory + "/out/\(name).jsonl") == expected, "\(name)")
            }
        }
    }

    @Test("body pagination needs a JSON object body: anything else is refused naming the key")
    func nonObjectBody() throws {
        let text = """
            sources:
              - name: items
                url: "http://127.0.0.1:9/bodypaged"
                method: POST
                body: '[1, 2]'
                paginate: {style: cursor, cursor: meta.next, param: page.cursor, in: body}
                items: items
            """
        #expect {
            try Job.parse(text, environment: [:])
        } throws: { error in
            let error = error as? JobFileError
            return error?.code == .neverSendable && "\(error!)".contains("sources[0].body")
        }
    }

    @Test("the body is set at the key path, objects made on the way, and bounded")
    func settingBody() throws {
        let request = Request(
            url: "http://x.test/", method: .post, body: .string(#"{"q":"x","page":{"size":5}}"#))
        let edited = try #require(request.settingBody("page.cursor", to: .string("abc")))
        #expect(String(decoding: edited.body?.bytes ?? [], as: UTF8.self) == #"{"page":{"cursor":"abc","size":5},"q":"x"}"#)
        #expect(Request(url: "http://x.test/", method: .post, body: .string("[1]")).settingBody("a", to: .null) == nil)
        let huge = String(repeating: "x", count: PaginationStyle.maxPagedBodyBytes)
        #expect(request.settingBody("page.cursor", to: .string(huge)) == nil)
    }
}
