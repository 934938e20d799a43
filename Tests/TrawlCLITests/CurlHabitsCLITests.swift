import Foundation
import Testing
import TrawlTestSupport
import TrawlTestServer

/// `get` with curl's request habits: -u, -d and its relatives, --json, -G, -H 'Name:' / 'Name;', --max-redirs, -L.
@Suite("CLI curl habits", .endToEnd)
struct CurlHabitsCLITests {
    func echo(_ arguments: [String], in workspace: Workspace? = nil) async throws -> EchoReply {
        // A workspace made here is this call's own, removed when it returns.
        let own = workspace == nil ? try Workspace() : nil
        defer { own?.remove() }
        return try await TestServer.with { server in
            let run = try await trawl(["get", "-s"] + arguments + [server.url("/echo")], in: workspace ?? own!)
            #expect(run.status == 0, "\(run.stderr)")
            return try JSONDecoder().decode(EchoReply.self, from: Data(run.stdout.utf8))
        }
    }

    @Test("-d sends a form (CR and LF stripped from @FILE), joined with &; -H Content-Type wins")
    func dataIsAForm() async throws {
        let workspace = try Workspace()
        defer { workspace.remove() }
        try workspace.write("body.txt", "a=1\nb=2\r\n")
        let reply = try await echo(["-d", "x=1", "-d", "@body.txt"], in: workspace)
        #expect(reply.method == "POST")
        #expect(reply.body == "x=1&a=1b=2")
        #expect(reply.header("Content-Type") == ["application/x-www-form-urlencoded"])

        let typed = try await echo(["-d", "{}", "-H", "Content-Type: application/json"])
        #expect(typed.header("Content-Type") == ["application/json"])

        let binary = try await echo(["--data-binary", "@body.txt"], in: workspace)
        #expect(binary.body == "a=1\nb=2\r\n")
    }

    @Test("--data-urlencode: content, =content, name=content, @file, name@file")
    func dataURLEncode() async throws {
        let workspace = try Workspace()
        defer { workspace.remove() }
        try workspace.write("v.txt", "1 & 2\n")
        let reply = try await echo(
            ["--data-urlencode", "a b", "--data-urlencode", "=c=d", "--data-urlencode", "q=x y&z",
             "--data-urlencode", "@v.txt", "--data-urlencode", "n@v.txt", "--data-urlencode", "my.name[]=1 2"],
            in: workspace)
        // Only the content is encoded, never the name (curl sends the name as given).
        // A space is `+`, as curl 7.88 sends it.
        #expect(reply.body == "a+b&c%3Dd&q=x+y%26z&1+%26+2%0A&n=1+%26+2%0A&my.name[]=1+2")
    }

    @Test("--json sets both JSON headers; -G moves the data into the query")
    func jsonAndGet() async throws {
        let json = try await echo(["--json", #"{"a":1}"#])
        #expect(json.body == #"{"a":1}"#)
        #expect(json.header("Content-Type") == ["application/json"])
        #expect(json.header("Accept") == ["application/json"])

        let query = try await echo(["-G", "-d", "a=1", "--data-urlencode", "b=x y"])
        #expect(query.method == "GET")
        #expect(query.query == "a=1&b=x+y")
        #expect(query.bodyLength == 0)
    }

    @Test("-H 'Name:' removes a default header, -H 'Name;' sends it empty; -u sends basic authentication")
    func headersAndUser() async throws {
        let reply = try await echo(["-H", "User-Agent:", "-H", "Accept:", "-H", "X-Empty;", "-u", "alice:s3cret"])
        #expect(reply.header("User-Agent").isEmpty)
        #expect(reply.header("Accept").isEmpty)
        #expect(reply.header("X-Empty") == [""])
        #expect(reply.header("Authorization") == ["Basic " + Data("alice:s3cret".utf8).base64EncodedString()])

        let noPassword = try await trawl(["get", "-u", "alice", "http://127.0.0.1:9/"])
        #expect(noPassword.status == 2)
        #expect(noPassword.stderr.contains("USER:PASSWORD"))
        #expect(noPassword.stderr.contains("Usage: trawl get"))
    }

    @Test("--max-redirs caps the redirects followed and the hint names it; -L is accepted")
    func maxRedirects() async throws {
        try await TestServer.with { server in
            let capped = try await trawl(["get", "-s", "--max-redirs", "1", server.url("/redirect/3")])
            #expect(capped.status == 47)
            #expect(capped.stderr.contains("--max-redirs"))
            let followed = try await trawl(["get", "-s", "-L", "--max-redirs", "4", server.url("/redirect/3")])
            #expect(followed.status == 0, "\(followed.stderr)")
            // curl -L --max-redirs 0 fails on the first 3xx (its exit 47) rather than printing the redirect.
            let none = try await trawl(["get", "-s", "-L", "--max-redirs", "0", server.url("/redirect/1")])
            #expect(none.status == 47)
            #expect(none.stdout.isEmpty)
            #expect(none.stderr.contains("maximum 0"), "\(none.stderr)")
            #expect(none.stderr.contains("--max-redirs"))
        }
    }

    @Test("-H 'Name:' removes a default header in bench and extract too, as in get")
    func headerRemovalEverywhere() async throws {
        try await TestServer.with { server in
            let bench = try await trawl(
                ["bench", "-n", "1", "-c", "1", "--quiet", "-H", "User-Agent:", "-H", "X-Empty;", server.url("/echo")])
            #expect(bench.status == 0, "\(bench.stderr)")
            let extract = try await trawl(
                ["extract", "-p", "headers", "-H", "User-Agent:", "-H", "X-Empty;", server.url("/echo")])
            #expect(extract.status == 0, "\(extract.stderr)")
            let logged = server.requestLog.filter { $0.target == "/echo" }
            #expect(logged.count == 2)
            #expect(logged.allSatisfy { $0.headers["user-agent"] == nil })
            #expect(logged.allSatisfy { $0.headers["x-empty"] == "" })
        }
    }

    @Test("--connect-timeout takes seconds above 0; a value that cannot be milliseconds is a usage error")
    func connectTimeoutIsChecked() async throws {
        for command in [["get"], ["extract", "-p", "items"], ["bench", "-n", "1"]] {
            for value in ["1e300", "nan", "inf", "0", "-1"] {
                let result = try await trawl(command + ["--connect-timeout", value, "http://127.0.0.1:9/"])
                #expect(result.status == 2, "\(command) \(value): \(result.stderr)")
                #expect(result.stderr.contains("--connect-timeout"))
            }
        }
    }

    @Test("data from a file that cannot be read is a usage error with get's usage, found before anything is sent")
    func unreadableDataFile() async throws {
        let result = try await trawl(["get", "-d", "@no-such-file.txt", "http://127.0.0.1:9/"])
        #expect(result.status == 2)
        #expect(result.stderr.contains("'no-such-file.txt'"), "\(result.stderr)")
        #expect(result.stderr.contains("Usage: trawl get"))
    }
}
