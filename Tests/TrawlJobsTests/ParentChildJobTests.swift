import Foundation
import Testing
import TrawlTestSupport
import TrawlTestServer

@testable import Trawl
@testable import TrawlJobs

/// A job of `users` (the given parents, 2 per page) and `kids` (`{users.kids}` children of each, 3 per page).
func familyJob(
    _ server: TestServer, parents: String, kidsQuery: String = "", include: String = "[login, kids]"
) -> String {
    let encoded = parents.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? ""
    return """
        settings: {backoff_ms: 5, attempts: 2}
        sources:
          - name: users
            url: "\(server.url("/family/list?per_page=2&items=\(encoded)"))"
            paginate: {style: page, total_pages: total_pages}
            items: items
          - name: kids
            parent: users
            url: "\(server.url("/family/kids/{users.login}?n={users.kids}&per_page=3\(kidsQuery)"))"
            paginate: {style: page, total_pages: total_pages}
            items: items
            include_from_parent: \(include)
        """
}

/// The lines `kids` writes for a parent: `{"_parent":{"login":L,"kids":N},"parent":SEGMENT,"k":I}`.
func kidLines(_ login: String, _ count: Int, segment: String? = nil) -> String {
    (0..<count).map {
        "{\"_parent\":{\"login\":\"\(login)\",\"kids\":\(count)},\"parent\":\"\(segment ?? login)\",\"k\":\($0)}\n"
    }.joined()
}

@Suite("Dependent sources (parent → child)", .hangGuard)
struct ParentChildJobTests {
    func run(_ text: String, in directory: String, shard: Shard? = nil, name: String = "out.jsonl")
        async throws -> JobReport
    {
        let job = try Job.parse(text, environment: [:])
        let options = JobRunOptions(output: .file(directory + "/" + name), environment: [:])
        return try await JobRunner(job: job, options: options, shard: shard).run()
    }

    @Test("parents with 0, 1 and many children: each child unit walked, in parent order, _parent first")
    func zeroOneMany() async throws {
        try await TestServer.with { server in
            let directory = try temporaryDirectory()
            defer { try? FileManager.default.removeItem(atPath: directory) }
            let parents = #"[{"login":"a","kids":0},{"login":"b","kids":1},{"login":"c","kids":7}]"#
            let report = try await run(familyJob(server, parents: parents), in: directory)
            #expect(report.complete)
            #expect(report.failures.isEmpty)
            #expect(report.units.total == 4)
            #expect(report.units.done == 4)
            let expected = #"{"login":"a","kids":0}"# + "\n" + #"{"login":"b","kids":1}"# + "\n"
                + #"{"login":"c","kids":7}"# + "\n" + kidLines("b", 1) + kidLines("c", 7)
            #expect(fileText(directory + "/out.jsonl") == expected)
            // c's 7 children are 3 pages; a's none is one empty page.
            let kids = server.requestLog.filter { $0.target.hasPrefix("/family/kids/") }
            #expect(kids.filter { $0.target.hasPrefix("/family/kids/c?") }.count == 3)
            #expect(kids.filter { $0.target.hasPrefix("/family/kids/a?") }.count == 1)

            // No parents at all: no children, an empty output.
            let none = try await run(familyJob(server, parents: "[]"), in: directory, name: "none.jsonl")
            #expect(none.complete)
            #expect(none.units.total == 1)
            #expect(fileText(directory + "/none.jsonl") == "")
        }
    }

    @Test("hostile parent values stay one percent-encoded path segment; a missing one fails only its child")
    func hostileParentValues() async throws {
        try await TestServer.with { server in
            let directory = try temporaryDirectory()
            defer { try? FileManager.default.removeItem(atPath: directory) }
            let hostile: [(login: String, segment: String)] = [
                ("../admin", "..%2Fadmin"), ("a/b?x=1#f", "a%2Fb%3Fx%3D1%23f"), ("..", "%2E%2E"), (".", "%2E"),
                ("%2F", "%252F"), ("ü", "%C3%BC"), ("evil.com@x:1", "evil.com%40x%3A1"),
            ]
            let items = hostile.map { "{\"login\":\(JSONValue.string($0.login).jsonText),\"kids\":1}" }
            let parents = "[" + (items + [#"{"kids":1}"#]).joined(separator: ",") + "]"
            let report = try await run(familyJob(server, parents: parents, include: "[kids]"), in: directory)
            let targets = server.requestLog.map(\.target).filter { $0.hasPrefix("/family/kids/") }
            #expect(targets.count == hostile.count)
            for (login, segment) in hostile {
                #expect(targets.contains { $0.hasPrefix("/family/kids/\(segment)?") }, "\(login)")
            }
            #expect(!server.requestLog.contains { $0.target.hasPrefix("/admin") || $0.status == 404 })
            let lines = fileText(directory + "/out.jsonl").split(separator: "\n")
            for (_, segment) in hostile {
                #expect(lines.contains("{\"_parent\":{\"kids\":1},\"parent\":\"\(segment)\",\"k\":0}"), "\(segment)")
            }
            #expect(report.failures.count == 1)
            #expect(report.failures.first?.error.contains("no string or number at 'login'") == true)
        }
    }

    @Test("--shard splits child units by their parent values: every child exactly once across the shards")
    func shardsSplitChildren() async throws {
        try await TestServer.with { server in
            let directory = try temporaryDirectory()
            defer { try? FileManager.default.removeItem(atPath: directory) }
            let logins = (0..<20).map { "u\($0)" }
            let parents = "[" + logins.map { "{\"login\":\"\($0)\",\"kids\":2}" }.joined(separator: ",") + "]"
            let text = familyJob(server, parents: parents)
            var all: [Substring] = []
            var kidsPerShard: [Int] = []
            for index in 0..<2 {
                let name = "shard\(index).jsonl"
                let report = try await run(text, in: directory, shard: try Shard(index: index, count: 2), name: name)
                #expect(report.complete)
                let lines = fileText(directory + "/" + name).split(separator: "\n")
                kidsPerShard.append(lines.filter { $0.hasPrefix("{\"_parent\"") }.count)
                all += lines
            }
            let expected = logins.map { "{\"login\":\"\($0)\",\"kids\":2}\n" }.joined()
                + logins.map { kidLines($0, 2) }.joined()
            #expect(all.map(String.init).sorted() == expected.split(separator: "\n").map(String.init).sorted())
            #expect(kidsPerShard.allSatisfy { $0 > 0 })
        }
    }

    @Test("children start as their parent's pages arrive, before the parent source has ended")
    func childrenStartEarly() async throws {
        try await TestServer.with { server in
            let directory = try temporaryDirectory()
            defer { try? FileManager.default.removeItem(atPath: directory) }
            let parents = "[" + (0..<8).map { "{\"login\":\"s\($0)\",\"kids\":1}" }.joined(separator: ",") + "]"
            // A serial parent walk (no total: page after page until an empty one), 150 ms a page.
            let text = familyJob(server, parents: parents)
                .replacingOccurrences(of: "/family/list?per_page=2&", with: "/family/list?per_page=2&delay=150&")
                .replacingOccurrences(of: "paginate: {style: page, total_pages: total_pages}\n    items: items\n  - name: kids",
                    with: "paginate: page\n    items: items\n  - name: kids")
            let report = try await run(text, in: directory)
            #expect(report.complete)
            let log = server.requestLog
            let lastParentPage = try #require(log.last { $0.target.hasPrefix("/family/list") })
            let firstChild = try #require(log.first { $0.target.hasPrefix("/family/kids/") })
            #expect(firstChild.receivedAt < lastParentPage.receivedAt)
            #expect(log.filter { $0.target.hasPrefix("/family/list") }.count == 5)
        }
    }

    @Test("the job's fingerprint covers parent: and include_from_parent:")
    func fingerprint() throws {
        let server = "http://127.0.0.1:9"
        let base = """
            sources:
              - {name: users, url: "\(server)/u", paginate: link, items: ""}
              - {name: kids, parent: users, url: "\(server)/k/{users.id}", paginate: link, items: ""
            """
        let plain = try Job.parse(base + "}", environment: [:]).fingerprint
        let included = try Job.parse(base + ", include_from_parent: [id]}", environment: [:]).fingerprint
        #expect(plain != included)
    }

    @Test("parent: errors: unknown, itself, a cycle, two levels, past 1,024 sources, a matrix, a value outside the url")
    func parentErrors() throws {
        func problem(_ child: String, parentExtra: String = "") -> String {
            let text = """
                sources:
                  - {name: users, url: "https://api.example.com/users", paginate: link, items: ""\(parentExtra)}
                  - {name: kids, paginate: link, items: "", \(child)}
                """
            do {
                _ = try Job.parse(text, environment: [:])
                return "parsed"
            } catch {
                return error.description
            }
        }
        let url = #"url: "https://api.example.com/u/{users.login}/kids""#
        #expect(problem("parent: users, \(url)") == "parsed")
        #expect(problem(#"parent: people, url: "https://api.example.com/u/{people.login}""#)
            .contains("'people' names no source"))
        #expect(problem(#"parent: kids, url: "https://api.example.com/u/{kids.login}""#).contains("its own parent"))
        #expect(problem("parent: users, \(url)", parentExtra: ", parent: kids").contains("a cycle"))
        let three = """
            sources:
              - {name: a, url: "https://x.example.com/a", paginate: link, items: ""}
              - {name: b, parent: a, url: "https://x.example.com/b/{a.id}", paginate: link, items: ""}
              - {name: c, parent: b, url: "https://x.example.com/c/{b.id}", paginate: link, items: ""}
            """
        do {
            _ = try Job.parse(three, environment: [:])
            Issue.record("two levels of parent parsed")
        } catch {
            #expect(error.description.contains("only one level of parent"))
        }
        // A child unit's id has 10 bits for its source: a child source past the 1,024th is refused, not aliased.
        let many = (0..<1_024).map {
            #"  - {name: s\#($0), url: "https://x.example.com/\#($0)", paginate: link, items: ""}"#
        }
        let far = "sources:\n" + many.joined(separator: "\n")
            + "\n" + #"  - {name: late, parent: s0, url: "https://x.example.com/l/{s0.id}", paginate: link, items: ""}"#
        do {
            _ = try Job.parse(far, environment: [:])
            Issue.record("a child source at position 1,024 parsed")
        } catch {
            #expect(error.description.contains("one of the first 1024 sources"), "\(error)")
        }
        let matrix = #"url: "https://api.example.com/u/{users.login}/{x}", matrix: {x: [1]}"#
        #expect(problem("parent: users, \(matrix)").contains("takes no matrix"))
        let header = problem("parent: users, \(url), headers: {X-Login: \"{users.login}\"}")
        #expect(header.contains("only be used in the url"))
        #expect(problem(#"parent: users, url: "https://{users.host}/kids""#).contains("origin"))
        #expect(problem(#"parent: users, url: "https://api.example.com/kids""#).contains("names no field of 'users'"))
        #expect(problem(#"url: "https://api.example.com/k", include_from_parent: [id]"#).contains("needs a parent"))
        // A child's first page is known only during the run: its pagination and items cannot be detected.
        for (auto, other) in [("paginate: auto", #"items: """#), ("items: auto", "paginate: link")] {
            let text = """
                sources:
                  - {name: users, url: "https://api.example.com/users", paginate: link, items: ""}
                  - {name: kids, parent: users, \(url), \(other), \(auto)}
                """
            do {
                _ = try Job.parse(text, environment: [:])
                Issue.record("a child source with \(auto) parsed")
            } catch {
                #expect(error.description.contains("a source with a parent needs paginate: and items:"), "\(error)")
            }
        }
    }
}

extension JSONValue {
    var jsonText: String { String(decoding: json, as: UTF8.self) }
}
