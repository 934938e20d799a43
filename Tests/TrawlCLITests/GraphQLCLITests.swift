import Foundation
import Testing
import TrawlTestSupport
import TrawlTestServer

/// `trawl fetch URL --graphql-query …` and `--paginate-in body` against the test server.
@Suite("CLI GraphQL and body pagination", .endToEnd)
struct GraphQLCLITests {
    static let query =
        "query($first: Int, $after: String) { items(first: $first, after: $after) { edges { node { id name } } pageInfo { hasNextPage endCursor } } }"

    @Test("--graphql-query @FILE walks the connection: every item once, in order, exit 0")
    func walk() async throws {
        try await TestServer.with { server in
            let workspace = try Workspace()
            defer { workspace.remove() }
            try workspace.write("items.graphql", Self.query)
            let result = try await trawl(
                ["fetch", "-q", server.url("/graphql?n=25"), "--graphql-query", "@items.graphql",
                 "--graphql-connection", "data.items", "--graphql-variables", #"{"first": 10}"#, "-o", "out.jsonl"],
                in: workspace)
            #expect(result.status == 0, "\(result.stderr)")
            #expect(workspace.text("out.jsonl") == itemLines(1..<26))
        }
    }

    @Test("errors in a 200 answer: exit 1 with the message, the earlier pages' items kept")
    func errors() async throws {
        try await TestServer.with { server in
            let workspace = try Workspace()
            defer { workspace.remove() }
            let result = try await trawl(
                ["fetch", "-q", server.url("/graphql?n=25&errors_at=3&error=quota%20exceeded"), "--graphql-query",
                 Self.query, "--graphql-connection", "data.items", "--graphql-variables", #"{"first": 10}"#,
                 "-o", "out.jsonl"], in: workspace)
            #expect(result.status == 1)
            #expect(result.stderr.contains("quota exceeded"), "\(result.stderr)")
            #expect(workspace.text("out.jsonl") == itemLines(1..<21))
        }
    }

    @Test("--paginate-in body with -d: the cursor in the body; a body that is no JSON object is exit 2")
    func bodyCursor() async throws {
        try await TestServer.with { server in
            let workspace = try Workspace()
            defer { workspace.remove() }
            let result = try await trawl(
                ["fetch", "-q", server.url("/bodypaged?n=25"), "-X", "POST", "-d", #"{"page":{"size":10}}"#,
                 "--paginate", "cursor:meta.next", "--cursor-param", "page.cursor", "--paginate-in", "body",
                 "--items", "items", "-o", "out.jsonl"], in: workspace)
            #expect(result.status == 0, "\(result.stderr)")
            #expect(workspace.text("out.jsonl") == (1...25).map { "{\"id\":\($0)}\n" }.joined())
            let refused = try await trawl(
                ["fetch", server.url("/bodypaged"), "-X", "POST", "-d", "[1]", "--paginate", "cursor:meta.next",
                 "--cursor-param", "page.cursor", "--paginate-in", "body", "--items", "items"], in: workspace)
            #expect(refused.status == 2)
            #expect(refused.stderr.contains("--paginate-in body"), "\(refused.stderr)")
            #expect(refused.stderr.contains("-d/--data"))
        }
    }

    @Test("zero configuration: -d with a GraphQL query, the Relay connection detected in the first answer")
    func detected() async throws {
        try await TestServer.with { server in
            let workspace = try Workspace()
            defer { workspace.remove() }
            let body = #"{"query": "query($after: String) { items(first: 10, after: $after) { edges { node { id name } } pageInfo { hasNextPage endCursor } } }", "variables": {}}"#
            let result = try await trawl(
                ["fetch", server.url("/graphql?n=25"), "-X", "POST", "-H", "Content-Type: application/json",
                 "-d", body, "-o", "out.jsonl", "--state", "state"], in: workspace)
            #expect(result.status == 0, "\(result.stderr)")
            // The items are the edges' nodes: the line names no --items (which would read the edges whole).
            #expect(result.stderr.contains("detected: --graphql-connection data.items ("), "\(result.stderr)")
            #expect(result.stderr.contains("give the body's query as --graphql-query"), "\(result.stderr)")
            #expect(!result.stderr.contains("--items"), "\(result.stderr)")
            #expect(workspace.text("out.jsonl") == itemLines(1..<26))
            // The first page is fetched once (detection's copy replayed), then pages 2 and 3.
            #expect(server.requestLog.filter { $0.target.hasPrefix("/graphql") }.count == 3)
        }
    }

    @Test("the command line sends -d, --graphql-query and -H as given: {name} there is text unless a --matrix axis")
    func bracesAreText() async throws {
        try await TestServer.with { server in
            let workspace = try Workspace()
            defer { workspace.remove() }
            // A compact query: `nodes{id}` once failed as "'{id}' names no matrix parameter".
            let query = "query($first: Int, $after: String) { items(first: $first, after: $after) "
                + "{ nodes{id} pageInfo{hasNextPage endCursor} } }"
            let body = #"{"query": "\#(query)", "variables": {"first": 4}}"#
            let idLines = itemLines(1..<10)  // (the server answers id and name whatever the selection)
            let detected = try await trawl(
                ["fetch", server.url("/graphql?n=9&by=d"), "-d", body, "-H", "X-Tag: {id}", "-o", "d.jsonl"],
                in: workspace)
            #expect(detected.status == 0, "\(detected.stderr)")
            #expect(workspace.text("d.jsonl") == idLines)
            let flags = try await trawl(
                ["fetch", server.url("/graphql?n=9&by=q"), "--graphql-query", query, "--graphql-connection", "data.items",
                 "--graphql-variables", #"{"first": 4}"#, "-o", "q.jsonl"], in: workspace)
            #expect(flags.status == 0, "\(flags.stderr)")
            #expect(workspace.text("q.jsonl") == idLines)
            // --detect's job file keeps the compact query working: a space after the brace (not inside strings).
            let snippet = try await trawl(["fetch", server.url("/graphql?n=9&by=s"), "-d", body, "--detect"], in: workspace)
            #expect(snippet.stdout.contains("nodes{ id} pageInfo{ hasNextPage endCursor}"), "\(snippet.stdout)")
            try workspace.write("compact.yaml", snippet.stdout)
            let job = try await trawl(["fetch", "compact.yaml", "-o", "s.jsonl"], in: workspace)
            #expect(job.status == 0, "\(job.stderr)")
            #expect(workspace.text("s.jsonl") == idLines)
            let tagged = server.requestLog.filter { $0.target.hasSuffix("by=d") }
            #expect(tagged.count == 3 && tagged.allSatisfy { $0.headers["x-tag"] == "{id}" }, "\(tagged)")
            // A --matrix axis still expands in a header; another name beside it stays text.
            let matrix = try await trawl(
                ["fetch", "--url", server.url("/paged/page?n={n}&per_page=10"), "--items", "items", "--paginate", "page",
                 "--matrix", "n=3,4", "-H", "X-Tag: {n}-{other}", "-o", "m.jsonl"], in: workspace)
            #expect(matrix.status == 0, "\(matrix.stderr)")
            let tags = server.requestLog.filter { $0.target.hasPrefix("/paged/") }.compactMap { $0.headers["x-tag"] }
            #expect(Set(tags) == ["3-{other}", "4-{other}"], "\(tags)")
            // A mistake in a -H or -d template is said with that flag, not as the job-file field it became.
            let unset = try await trawl(
                ["fetch", server.url("/paged/page?n=3"), "--items", "items", "-H",
                 "Authorization: Bearer ${TRAWL_TEST_NEVER_SET}"], in: workspace)
            #expect(unset.status == 2, "\(unset.stderr)")
            #expect(
                unset.stderr.contains("-H 'Authorization: …': environment variable TRAWL_TEST_NEVER_SET is not set"),
                "\(unset.stderr)")
            let dollar = try await trawl(
                ["fetch", server.url("/paged/page?n=3"), "--items", "items", "-d", #"{"a": "${"}"#], in: workspace)
            #expect(dollar.status == 2, "\(dollar.stderr)")
            #expect(dollar.stderr.contains(#"-d/--json: '${"' is not an environment variable reference"#), "\(dollar.stderr)")
            #expect(!(unset.stderr + dollar.stderr).contains("sources[0]"), "\(unset.stderr)\(dollar.stderr)")
            // In the URL, a name that is no axis is a usage error in the command line's words.
            for (extra, remedy) in [
                ([String](), "give --matrix foo=VALUE,VALUE"), (["--matrix", "n=3,4"], "the --matrix axes are n"),
            ] {
                let url = server.url("/paged/page?n=3&x={foo}") + (extra.isEmpty ? "" : "&m={n}")
                let refused = try await trawl(["fetch", "--url", url, "--items", "items"] + extra, in: workspace)
                #expect(refused.status == 2, "\(refused.stderr)")
                #expect(refused.stderr.contains("the URL's '{foo}' names no --matrix axis (\(remedy)"), "\(refused.stderr)")
                #expect(!refused.stderr.contains("sources[0]"), "\(refused.stderr)")
            }
        }
    }

    @Test("a detected connection is pinned as said: the GraphQL flags, and --detect's job file, give the same items")
    func detectedPlanPins() async throws {
        try await TestServer.with { server in
            let workspace = try Workspace()
            defer { workspace.remove() }
            let edges = "query($first: Int, $after: String) { items(first: $first, after: $after) "
                + "{ edges { cursor node { id name } } pageInfo { hasNextPage endCursor } } }"
            let nodes = edges.replacingOccurrences(of: "edges { cursor node { id name } }", with: "nodes { id name }")
            for (name, query) in [("edges", edges), ("nodes", nodes)] {
                let url = server.url("/graphql?n=23&by=\(name)")
                let body = #"{"query": "\#(query)", "variables": {"first": 7}}"#
                let detected = try await trawl(["fetch", url, "--json", body, "-o", "\(name)-0.jsonl"], in: workspace)
                #expect(detected.status == 0, "\(detected.stderr)")
                #expect(workspace.text("\(name)-0.jsonl") == itemLines(1..<24), "\(name)")
                // What the detected line says to give instead of --json.
                let flags = try await trawl(
                    ["fetch", url, "--graphql-query", query, "--graphql-variables", #"{"first": 7}"#,
                     "--graphql-connection", "data.items", "-o", "\(name)-1.jsonl"], in: workspace)
                #expect(flags.status == 0, "\(flags.stderr)")
                #expect(!flags.stderr.contains("detected:"), "\(flags.stderr)")
                #expect(workspace.text("\(name)-1.jsonl") == itemLines(1..<24), "\(name)")
                // --detect prints a job file that walks the same connection.
                let snippet = try await trawl(["fetch", url, "--json", body, "--detect"], in: workspace)
                #expect(snippet.status == 0, "\(snippet.stderr)")
                #expect(snippet.stdout.contains("    graphql:\n"), "\(snippet.stdout)")
                #expect(snippet.stdout.contains(#"      variables: {"first":7}"#), "\(snippet.stdout)")
                #expect(!snippet.stdout.contains("items:"), "\(snippet.stdout)")
                try workspace.write("\(name).yaml", snippet.stdout)
                let job = try await trawl(["fetch", "\(name).yaml", "-o", "\(name)-2.jsonl"], in: workspace)
                #expect(job.status == 0, "\(job.stderr)")
                #expect(workspace.text("\(name)-2.jsonl") == itemLines(1..<24), "\(name): \(snippet.stdout)")
            }
        }
    }

    @Test("as in curl: -d without -X is a POST; --json is a POST with Content-Type and Accept application/json")
    func curlBodyFlags() async throws {
        try await TestServer.with { server in
            let workspace = try Workspace()
            defer { workspace.remove() }
            let body = #"{"query": "query($after: String) { items(first: 10, after: $after) { nodes { id name } pageInfo { hasNextPage endCursor } } }"}"#
            for (flag, path) in [("-d", "/graphql?n=25&by=d"), ("--json", "/graphql?n=25&by=json")] {
                let result = try await trawl(["fetch", server.url(path), flag, body, "-o", "out.jsonl"], in: workspace)
                #expect(result.status == 0, "\(flag): \(result.stderr)")
                #expect(result.stderr.contains("detected: --graphql-connection data.items"), "\(result.stderr)")
                #expect(workspace.text("out.jsonl") == itemLines(1..<26), "\(flag)")
                let requests = server.requestLog.filter { $0.target.hasPrefix(path) }
                #expect(requests.count == 3 && requests.allSatisfy { $0.method == "POST" }, "\(flag): \(requests)")
                #expect(requests.allSatisfy { $0.headers["content-type"] == "application/json" }, "\(flag)")
                if flag == "--json" { #expect(requests.allSatisfy { $0.headers["accept"] == "application/json" }) }
            }
            // -X still decides, a -H Content-Type still wins over --json's, and -d with --json is a usage error.
            let put = try await trawl(
                ["fetch", server.url("/graphql?n=5&by=put"), "-X", "PUT", "--json", body, "-H", "Content-Type: text/x",
                 "--items", "data.items.nodes", "--paginate", "link"], in: workspace)
            let sent = server.requestLog.filter { $0.target.hasPrefix("/graphql?n=5&by=put") }
            #expect(sent.first?.method == "PUT" && sent.first?.headers["content-type"] == "text/x", "\(sent) \(put.stderr)")
            let both = try await trawl(["fetch", server.url("/graphql"), "-d", body, "--json", body], in: workspace)
            #expect(both.status == 2)
            #expect(both.stderr.contains("-d/--data and --json both give the body"), "\(both.stderr)")
        }
    }

    @Test("fetch --help lists the GraphQL flags; --graphql-query without a connection is exit 2")
    func flags() async throws {
        let help = try await trawl(["fetch", "--help"])
        #expect(help.stdout.contains("--graphql-query"))
        #expect(help.stdout.contains("--graphql-connection"))
        #expect(help.stdout.contains("--paginate-in"))
        let missing = try await trawl(["fetch", "http://127.0.0.1:9/graphql", "--graphql-query", "{ x { nodes { id } } }"])
        #expect(missing.status == 2)
        #expect(missing.stderr.contains("--graphql-connection"), "\(missing.stderr)")
    }
}
