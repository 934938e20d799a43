import Foundation
import Testing
import TrawlTestSupport
import TrawlTestServer

@Suite("trawl fetch: dependent sources survive kill -9", .endToEnd)
struct ParentResumeCLITests {
    /// 24 users (2 per page), each with 5 kids (2 per page, 20 ms a page): kids are fetched while users still are.
    func job(_ server: TestServer, logins: [String]) -> String {
        let parents = "[" + logins.map { "{\"login\":\"\($0)\",\"kids\":5}" }.joined(separator: ",") + "]"
        let encoded = parents.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? ""
        return """
            settings: {concurrency: 6, per_host: 6, backoff_ms: 5}
            sources:
              - name: users
                url: "\(server.url("/family/list?per_page=2&delay=10&items=\(encoded)"))"
                paginate: {style: page, total_pages: total_pages}
                items: items
              - name: kids
                parent: users
                url: "\(server.url("/family/kids/{users.login}?n={users.kids}&per_page=2&delay=20"))"
                paginate: {style: page, total_pages: total_pages}
                items: items
                include_from_parent: [login]
            """
    }

    @Test("a resume after kill -9 mid-children refetches no committed child and loses none")
    func resumeAfterKill() async throws {
        try await TestServer.with { server in
            let workspace = try Workspace()
            defer { workspace.remove() }
            let logins = (0..<24).map { String(format: "p%02d", $0) }
            try workspace.write("job.yaml", job(server, logins: logins))
            let command = ["fetch", "job.yaml", "-o", "out.jsonl", "--state", "st", "-q"]
            @Sendable func kidsRequests() -> [String] {
                server.requestLog.map(\.target).filter { $0.hasPrefix("/family/kids/") }
            }
            let child = try TrawlProcess(command, in: workspace, environment: [:])
            let killed = await killWhen(child) { kidsRequests().count >= 30 }
            try await child.wait()
            #expect(killed, "the job ended before the kill")

            // What the checkpoint holds as committed: units done (or merged into the output), pages of the others.
            let checkpoint = (try? jsonObject(workspace.data("st/checkpoint.json"))) ?? [:]
            let units = checkpoint["units"] as? [String: [String: Any]] ?? [:]
            let length = ((checkpoint["outputs"] as? [String: [String: Any]])?.values.first?["length"] as? Int) ?? 0
            var committed: [String: Int] = [:]  // login -> pages committed (Int.max: the whole unit)
            for unit in units.values {
                guard let id = unit["id"] as? String, let login = id.split(separator: "=").dropFirst().first?
                    .split(separator: " ").first.map(String.init), id.hasPrefix("kids ")
                else { continue }
                committed[login] = unit["status"] as? String == "done" ? Int.max : (unit["pages"] as? Int ?? 0)
            }
            let settled = String(decoding: workspace.data("out.jsonl").prefix(length), as: UTF8.self)
            for line in settled.split(separator: "\n") {
                if let parent = (try? jsonObject(line))?["parent"] as? String { committed[parent] = Int.max }
            }
            #expect(!committed.isEmpty, "no child was committed before the kill")
            let before = kidsRequests().count

            let resumed = try await trawl(command, in: workspace)
            #expect(resumed.status == 0, "\(resumed.stderr)")
            var expected = logins.map { "{\"login\":\"\($0)\",\"kids\":5}\n" }.joined()
            for login in logins {
                for k in 0..<5 {
                    expected += "{\"_parent\":{\"login\":\"\(login)\"},\"parent\":\"\(login)\",\"k\":\(k)}\n"
                }
            }
            #expect(firstDifference(Array(workspace.data("out.jsonl")), Array(expected.utf8)) == nil)
            let again = kidsRequests().dropFirst(before)
            #expect(!again.isEmpty)
            for target in again {
                let path = target.prefix { $0 != "?" }
                let login = String(path.dropFirst("/family/kids/".count))
                let page = target.split(separator: "&").compactMap { pair -> Int? in
                    let parts = pair.split(separator: "=")
                    return parts.count == 2 && parts[0].hasSuffix("page") && !parts[0].hasSuffix("per_page")
                        ? Int(parts[1]) : nil
                }.first ?? 1
                if let pages = committed[login] {
                    #expect(page > pages, "\(target) was fetched again though \(login) had \(pages) pages committed")
                }
            }
        }
    }

    @Test("an unknown parent and a cycle of parents are bad usage: exit 2, naming the key")
    func parentUsageErrors() async throws {
        let workspace = try Workspace()
        defer { workspace.remove() }
        let cases = [
            ("people", "'people' names no source"),
            ("kids", "its own parent"),
        ]
        for (parent, message) in cases {
            try workspace.write("job.yaml", """
                sources:
                  - {name: users, url: "http://127.0.0.1:9/users", paginate: link, items: ""}
                  - {name: kids, parent: \(parent), url: "http://127.0.0.1:9/k/{\(parent).id}",
                     paginate: link, items: ""}
                """)
            let result = try await trawl(["fetch", "job.yaml", "-o", "out.jsonl"], in: workspace)
            #expect(result.status == 2, "\(result.stderr)")
            #expect(result.stderr.contains("sources[1].parent") && result.stderr.contains(message), "\(result.stderr)")
        }
        try workspace.write("job.yaml", """
            sources:
              - {name: users, parent: kids, url: "http://127.0.0.1:9/u/{kids.id}", paginate: link, items: ""}
              - {name: kids, parent: users, url: "http://127.0.0.1:9/k/{users.id}", paginate: link, items: ""}
            """)
        let cycle = try await trawl(["fetch", "job.yaml", "-o", "out.jsonl"], in: workspace)
        #expect(cycle.status == 2)
        #expect(cycle.stderr.contains("a cycle"), "\(cycle.stderr)")
    }
}
