import Foundation
import Testing
import TrawlTestSupport
import TrawlTestServer

/// Credentials and the pages a server names: two test servers on two ports are two origins; the first names the
/// second in its next links, as a hostile or careless API could.
@Suite("trawl fetch: credentials never follow a next link to another origin", .endToEnd)
struct CredentialOriginCLITests {
    let credentialArguments = [
        "-H", "Authorization: Bearer s3cret", "-H", "Cookie: session=abc", "-H", "X-Api-Key: k3y",
        "-H", "X-Auth-Token: t0ken", "-H", "X-Tenant-Pass: p4ss", "-H", "Accept: application/json",
        "--sensitive-header", "X-Tenant-Pass",
    ]
    let credentialNames = ["authorization", "cookie", "x-api-key", "x-auth-token", "x-tenant-pass"]

    /// Runs a fetch of STYLE on `home` whose links name `other` from page `from` on.
    func walk(
        _ style: String, home: TestServer, other: TestServer, from: Int = 2, extra: [String] = [],
        userInfo: String = "", query: String = ""
    ) async throws -> (RunResult, String) {
        let workspace = try Workspace()
        defer { workspace.remove() }
        var url = home.url(
            "/paged/\(style)?n=50&per_page=10&next_origin=\(other.baseURL)&next_origin_from=\(from - 1)\(query)")
        if !userInfo.isEmpty { url = "http://\(userInfo)@" + url.dropFirst("http://".count) }
        let items = style == "next" ? "results" : ""
        let result = try await trawl(
            ["fetch", "--url", url, "--items", items, "--paginate", style == "next" ? "next:next" : "link",
             "-o", "out.jsonl", "-q"] + credentialArguments + extra,
            in: workspace)
        return (result, workspace.text("out.jsonl"))
    }

    @Test("a Link or next URL to another origin gets no credentials, for that page and every page after it",
          arguments: [("link", ""), ("link", "&total=0"), ("next", "")])
    func crossOriginStripped(style: String, query: String) async throws {
        try await TestServer.with { home in
            try await TestServer.with { other in
                // `link` with a total plans pages 2-5 from page 1's next and last links; the others are serial.
                let (result, output) = try await walk(style, home: home, other: other, query: query)
                #expect(result.status == 0, "\(result.stderr)")
                #expect(output == itemLines(0..<50))
                let homePages = home.requestLog
                let otherPages = other.requestLog
                #expect(homePages.count == 1)
                #expect(otherPages.count == 4)
                for name in credentialNames {
                    #expect(homePages.allSatisfy { $0.headers[name] != nil }, "\(name) on the first page")
                    #expect(otherPages.allSatisfy { $0.headers[name] == nil }, "\(name) leaked to the other origin")
                }
                // Headers that are not credentials still go.
                #expect(otherPages.allSatisfy { $0.headers["accept"] == "application/json" })
            }
        }
    }

    /// Found by the hostile sweep: a 302 to another origin kept every credential but the three of RFC 9110.
    @Test("a redirect to another origin gets no credentials either (get; fetch's first page and the pages after it)")
    func redirectToAnotherOriginStripped() async throws {
        try await TestServer.with { home in
            try await TestServer.with { other in
                let workspace = try Workspace()
                defer { workspace.remove() }
                func redirecting(to target: String) -> String {
                    home.url("/redirect?to=" + (target.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? ""))
                }
                let listing = other.url("/paged/link?n=30&per_page=10&total=0")
                var result = try await trawl(
                    ["get", redirecting(to: listing), "-o", "got.json", "-s"] + credentialArguments, in: workspace)
                #expect(result.status == 0, "\(result.stderr)")
                result = try await trawl(
                    ["fetch", "--url", redirecting(to: listing), "--items", "", "--paginate", "link", "-o", "a.jsonl",
                     "-q"] + credentialArguments, in: workspace)
                #expect(result.status == 0, "\(result.stderr)")
                #expect(other.requestLog.count >= 4)
                for name in credentialNames {
                    #expect(other.requestLog.allSatisfy { $0.headers[name] == nil }, "\(name) followed the redirect")
                }
                #expect(other.requestLog.allSatisfy { $0.headers["accept"] == "application/json" })
                #expect(workspace.text("a.jsonl") == itemLines(0..<30))
            }
        }
    }

    @Test("a page that comes back to the first origin after leaving it stays without credentials")
    func strippedForTheRestOfTheWalk() async throws {
        try await TestServer.with { home in
            try await TestServer.with { other in
                let workspace = try Workspace()
                defer { workspace.remove() }
                // Page 1 on home names page 2 on other, whose links name home again.
                let url = home.url(
                    "/paged/link?n=30&per_page=10&total=0&next_origin=\(other.baseURL)&next_origin_from=1"
                        + "&back_origin=\(home.baseURL)&back_from=2")
                let result = try await trawl(
                    ["fetch", "--url", url, "--items", "", "--paginate", "link", "-o", "out.jsonl", "-q",
                     "-H", "Authorization: Bearer s3cret"],
                    in: workspace)
                #expect(result.status == 0, "\(result.stderr)")
                #expect(workspace.text("out.jsonl") == itemLines(0..<30))
                #expect(home.requestLog.map { $0.headers["authorization"] } == ["Bearer s3cret", nil])
                #expect(other.requestLog.count == 1)
                #expect(other.requestLog.allSatisfy { $0.headers["authorization"] == nil })
            }
        }
    }

    @Test("--trusted-origin lets the named origin have the credentials")
    func trustedOrigin() async throws {
        try await TestServer.with { home in
            try await TestServer.with { other in
                let (result, output) = try await walk(
                    "link", home: home, other: other, extra: ["--trusted-origin", other.baseURL])
                #expect(result.status == 0, "\(result.stderr)")
                #expect(output == itemLines(0..<50))
                #expect(other.requestLog.count == 4)
                #expect(other.requestLog.allSatisfy { $0.headers["authorization"] == "Bearer s3cret" })
                #expect(other.requestLog.allSatisfy { $0.headers["x-tenant-pass"] == "p4ss" })
            }
        }
    }

    @Test("userinfo in the URL goes to every page of its origin, and to no other")
    func userInfo() async throws {
        try await TestServer.with { home in
            try await TestServer.with { other in
                let (result, output) = try await walk(
                    "link", home: home, other: other, from: 3, userInfo: "al%40ice:pa55", query: "&total=0")
                #expect(result.status == 0, "\(result.stderr)")
                #expect(output == itemLines(0..<50))
                let basic = "Basic " + Data("al@ice:pa55".utf8).base64EncodedString()
                #expect(home.requestLog.count == 2)
                // The -H Authorization wins over the userinfo; without it the userinfo's credentials go.
                #expect(home.requestLog.allSatisfy { $0.headers["authorization"] == "Bearer s3cret" })
                #expect(other.requestLog.allSatisfy { $0.headers["authorization"] == nil })
                home.resetRequestLog()
                other.resetRequestLog()
                let workspace = try Workspace()
                defer { workspace.remove() }
                let url = "http://al%40ice:pa55@" + home.url(
                    "/paged/link?n=30&per_page=10&total=0&next_origin=\(other.baseURL)&next_origin_from=2"
                ).dropFirst("http://".count)
                let plain = try await trawl(
                    ["fetch", "--url", url, "--items", "", "--paginate", "link", "-o", "out.jsonl", "-q"],
                    in: workspace)
                #expect(plain.status == 0, "\(plain.stderr)")
                #expect(home.requestLog.map { $0.headers["authorization"] } == [basic, basic])
                #expect(other.requestLog.allSatisfy { $0.headers["authorization"] == nil })
                #expect(!plain.stderr.contains("pa55"))
            }
        }
    }

    @Test("trusted_origins and sensitive_headers in a job file")
    func jobFileSettings() async throws {
        try await TestServer.with { home in
            try await TestServer.with { other in
                let workspace = try Workspace()
                defer { workspace.remove() }
                let url = home.url("/paged/link?n=30&per_page=10&next_origin=\(other.baseURL)&next_origin_from=1")
                try workspace.write("job.yaml", """
                    settings:
                      sensitive_headers: [X-Tenant-Pass]
                    sources:
                      - name: things
                        url: "\(url)"
                        headers: {X-Tenant-Pass: p4ss, Authorization: "Bearer s3cret", X-Plain: v}
                        paginate: link
                        items: ""
                    """)
                var result = try await trawl(["fetch", "job.yaml", "-o", "out.jsonl", "-q"], in: workspace)
                #expect(result.status == 0, "\(result.stderr)")
                #expect(workspace.text("out.jsonl") == itemLines(0..<30))
                #expect(other.requestLog.allSatisfy {
                    $0.headers["x-tenant-pass"] == nil && $0.headers["authorization"] == nil
                        && $0.headers["x-plain"] == "v"
                })
                other.resetRequestLog()
                try workspace.write("job.yaml", workspace.text("job.yaml").replacingOccurrences(
                    of: "settings:\n", with: "settings:\n  trusted_origins: [\"\(other.baseURL)\"]\n"))
                result = try await trawl(["fetch", "job.yaml", "-o", "out2.jsonl", "-q"], in: workspace)
                #expect(result.status == 0, "\(result.stderr)")
                #expect(other.requestLog.count == 2)
                #expect(other.requestLog.allSatisfy { $0.headers["authorization"] == "Bearer s3cret" })
            }
        }
    }

    @Test("--stop-on-status 404 ends a walk cleanly at DRF's end-of-list answer, and only after the first page")
    func stopOnStatus() async throws {
        try await TestServer.with { server in
            let workspace = try Workspace()
            defer { workspace.remove() }
            // No total: the walk asks for page 4, which answers 404 (as DRF does past the last page).
            let url = server.url("/paged/page?n=100&per_page=10&total=0&fault_404=4&fault_times=99")
            var result = try await trawl(
                ["fetch", "--url", url, "--items", "items", "--paginate", "page", "-o", "out.jsonl", "-q",
                 "--stop-on-status", "404"],
                in: workspace)
            #expect(result.status == 0, "\(result.stderr)")
            #expect(workspace.text("out.jsonl") == itemLines(0..<30))
            // Without the flag the 404 is a failed page.
            result = try await trawl(
                ["fetch", "--url", url, "--items", "items", "--paginate", "page", "-o", "out2.jsonl", "-q",
                 "--restart"],
                in: workspace)
            #expect(result.status == 1)
            // On the first page it is a failure too: the collection is not there at all.
            let missing = server.url("/paged/page?n=100&per_page=10&total=0&fault_404=1&fault_times=99")
            result = try await trawl(
                ["fetch", "--url", missing, "--items", "items", "--paginate", "page", "-o", "out3.jsonl", "-q",
                 "--stop-on-status", "404"],
                in: workspace)
            #expect(result.status == 1)
            result = try await trawl(
                ["fetch", "--url", url, "--items", "items", "--paginate", "page", "-o", "out4.jsonl", "-q",
                 "--stop-on-status", "99"],
                in: workspace)
            #expect(result.status != 0)
            #expect(result.stderr.contains("--stop-on-status"))
        }
    }

    @Test("secrets written literally never reach the state, the report or stderr, and a resume still has them")
    func literalSecretsRedacted() async throws {
        try await TestServer.with { server in
            let workspace = try Workspace()
            defer { workspace.remove() }
            // `token=T` makes every page demand `Authorization: Bearer T`; page 3 fails once.
            let url = server.url("/paged/link?n=50&per_page=10&total=0&token=L1TERAL&api_key=K3YVALUE&fault_5xx=3")
            let arguments = [
                "fetch", "--url", url, "--items", "", "--paginate", "link", "-o", "out.jsonl", "--state", "st",
                "--attempts", "1", "--report", "report.json", "-H", "Authorization: Bearer L1TERAL",
                "-H", "X-Api-Key: HDRSECRET",
            ]
            let failed = try await trawl(arguments, in: workspace)
            #expect(failed.status == 1, "\(failed.stderr)")
            var persisted = failed.stderr + failed.stdout + workspace.text("report.json")
            let state = try FileManager.default.subpathsOfDirectory(atPath: workspace.path("st"))
            #expect(!state.isEmpty)
            for file in state { persisted += workspace.text("st/" + file) }
            for secret in ["L1TERAL", "K3YVALUE", "HDRSECRET"] {
                #expect(!persisted.contains(secret), "\(secret) was written or printed")
            }
            #expect(failed.stderr.contains("REDACTED"))
            let resumed = try await trawl(arguments, in: workspace)
            #expect(resumed.status == 0, "\(resumed.stderr)")
            #expect(workspace.text("out.jsonl") == itemLines(0..<50))
        }
    }
}
