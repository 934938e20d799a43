import Foundation
import Testing
import TrawlTestServer
import TrawlTestSupport

/// curl's flags in `trawl get` give up none of trawl's safety: secrets stay out of -v, names from the server stay
/// in the output directory, files are not written through planted links, unknown options are named as such.
@Suite("trawl get: curl's flags keep trawl's safety", .endToEnd)
struct CurlSafetyCLITests {
    @Test("an unknown option is reported as one, before the URL is looked at")
    func unknownOptionFirst() async throws {
        for arguments in [["--frobnicate", "3", "http://127.0.0.1:9/"], ["-T", "f", "http://127.0.0.1:9/"],
                          ["--retyr", "3", "http://127.0.0.1:9/"]] {
            let result = try await trawl(["get"] + arguments)
            #expect(result.status == 2, "\(arguments): \(result.stderr)")
            #expect(result.stderr.hasPrefix("Error: unknown option '\(arguments[0])'"), "\(result.stderr)")
            #expect(!result.stderr.contains("scheme"), "\(result.stderr)")
            #expect(result.stderr.contains("Usage: trawl get"))
        }
    }

    @Test("a -x proxy that is down is named as the proxy (credentials hidden), exit 7; the hint names -x")
    func proxyDown() async throws {
        let result = try await trawl(["get", "-s", "-x", "http://user:pw@127.0.0.1:9", "http://127.0.0.1:9/x"])
        #expect(result.status == 7, "\(result.stderr)")
        #expect(result.stderr.contains("the proxy http://REDACTED@127.0.0.1:9 refused the connection"), "\(result.stderr)")
        #expect(result.stderr.contains("-x names it"), "\(result.stderr)")
        #expect(!result.stderr.contains("pw"), "\(result.stderr)")
    }

    @Test("-v shows both heads on stderr with credentials as <redacted>; stdout is only the body")
    func verboseRedacts() async throws {
        try await TestServer.with { server in
            let result = try await trawl(
                ["get", "-sv", "-u", "alice:s3cret", "-H", "X-Api-Key: k3y", "-b", "sid=c00kie",
                 server.url("/headers?Set-Cookie=sid%3Dnew")])
            #expect(result.status == 0, "\(result.stderr)")
            #expect(result.stdout == "{}")
            #expect(result.stderr.contains("> GET /headers?Set-Cookie=sid%3Dnew HTTP/1.1"), "\(result.stderr)")
            #expect(result.stderr.contains("> Authorization: <redacted>"), "\(result.stderr)")
            #expect(result.stderr.contains("> X-Api-Key: <redacted>"), "\(result.stderr)")
            #expect(result.stderr.contains("> Cookie: <redacted>"), "\(result.stderr)")
            #expect(result.stderr.contains("< HTTP/1.1 200 OK"), "\(result.stderr)")
            #expect(result.stderr.contains("< Set-Cookie: <redacted>"), "\(result.stderr)")
            for secret in ["s3cret", "k3y", "c00kie", "YWxpY2U6czNjcmV0", "sid=new"] {
                #expect(!result.stderr.contains(secret), "\(secret) printed: \(result.stderr)")
            }
        }
    }

    @Test("-O -J: a server's name with directories, .. or controls lands inside --output-dir, as a plain name")
    func remoteHeaderNameStaysInside() async throws {
        try await TestServer.with { server in
            let workspace = try Workspace()
            defer { workspace.remove() }
            try FileManager.default.createDirectory(
                atPath: workspace.path("out"), withIntermediateDirectories: true)
            let name = "../../escaped.txt".addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? ""
            let result = try await trawl(
                ["get", "-s", "-OJ", "--output-dir", "out", server.url("/download/100?filename=\(name)")],
                in: workspace)
            #expect(result.status == 0, "\(result.stderr)")
            #expect(workspace.exists("out/escaped.txt"))
            #expect(!workspace.exists("escaped.txt"))
            #expect(!FileManager.default.fileExists(
                atPath: workspace.directory.deletingLastPathComponent().appendingPathComponent("escaped.txt").path))
            let dotted = try await trawl(["get", "-s", "-O", server.url("/bytes/..")], in: workspace)
            #expect(dotted.status == 23, "\(dotted.stderr)")
        }
    }

    @Test("--etag-save and -c refuse a link planted at their path; the target is untouched")
    func plantedLinks() async throws {
        try await TestServer.with { server in
            let workspace = try Workspace()
            defer { workspace.remove() }
            try workspace.write("victim.txt", "precious\n")
            for flag in ["--etag-save", "-c"] {
                try? FileManager.default.removeItem(atPath: workspace.path("planted"))
                try FileManager.default.createSymbolicLink(
                    atPath: workspace.path("planted"), withDestinationPath: workspace.path("victim.txt"))
                let result = try await trawl(
                    ["get", "-s", flag, "planted", server.url("/headers?ETag=%22x%22&Set-Cookie=a%3D1")],
                    in: workspace)
                #expect(result.status == 23, "\(flag): \(result.stderr)")
                #expect(result.stderr.contains("planted"), "\(flag): \(result.stderr)")
                #expect(workspace.text("victim.txt") == "precious\n", "\(flag)")
            }
        }
    }

    @Test("-b and --etag-compare files: sizes bounded, control characters refused")
    func hostileInputFiles() async throws {
        try await TestServer.with { server in
            let workspace = try Workspace()
            defer { workspace.remove() }
            try workspace.write("big.txt", String(repeating: "#", count: (1 << 20) + 1))
            let big = try await trawl(["get", "-s", "-b", "big.txt", server.url("/said?h=cookie")], in: workspace)
            #expect(big.status == 26, "\(big.stderr)")
            #expect(big.stderr.contains("larger than 1 MiB"), "\(big.stderr)")
            try workspace.write("etag.txt", "\"a\"\u{1B}]0;x\u{07}\n")
            let etag = try await trawl(
                ["get", "-s", "--etag-compare", "etag.txt", server.url("/said?h=if-none-match")], in: workspace)
            #expect(etag.status == 26, "\(etag.stderr)")
            #expect(!etag.stderr.unicodeScalars.contains { $0.value == 0x1B }, "\(etag.stderr)")
        }
    }
}
