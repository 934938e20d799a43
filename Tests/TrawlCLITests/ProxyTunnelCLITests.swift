import Foundation
import Testing
import TrawlTestSupport
import TrawlTestServer

/// HTTPS through a forward proxy (`https_proxy`, a CONNECT tunnel): what the user sees is the origin's answer,
/// never the proxy's `200 Connection established`; a proxy that refuses the tunnel is a proxy error.
@Suite("CLI: HTTPS through a CONNECT proxy", .endToEnd)
struct ProxyTunnelCLITests {
    @Test("a 404 through the tunnel is the origin's 404 (exit 22 with -f), a 200 is the origin's body")
    func originStatusThroughTunnel() async throws {
        try await withPrivateCAServer { server, workspace in
            let proxy = try ConnectProxy()
            defer { proxy.stop() }
            let environment = ["https_proxy": proxy.url]
            let missing = try await trawl(
                ["get", "-sf", "--cacert", server.caFile, server.url("/missing")], in: workspace,
                environment: environment)
            #expect(missing.status == 22, "\(missing.stderr)")
            #expect(missing.stderr.contains("404"), "\(missing.stderr)")
            let shown = try await trawl(
                ["get", "-s", "-i", "--cacert", server.caFile, server.url("/missing")], in: workspace,
                environment: environment)
            #expect(shown.stdout.hasPrefix("HTTP/"), "\(shown.stdout)")
            #expect(shown.stdout.contains(" 404"), "\(shown.stdout)")
            #expect(!shown.stdout.contains("Connection established"), "\(shown.stdout)")
            #expect(shown.stdout.contains("no such page"), "\(shown.stdout)")
            let found = try await trawl(
                ["get", "-s", "--cacert", server.caFile, server.url("/items")], in: workspace,
                environment: environment)
            #expect(found.status == 0, "\(found.stderr)")
            #expect(found.stdout.contains(#""items":[1,2,3]"#), "\(found.stdout)")
            #expect(proxy.tunnelCount >= 3)
        }
    }

    @Test("-x names the proxy as curl's does (no variable needed); --noproxy and --proxy-user are taken")
    func proxyFlag() async throws {
        try await withPrivateCAServer { server, workspace in
            let proxy = try ConnectProxy()
            defer { proxy.stop() }
            let scheme = proxy.url.replacingOccurrences(of: "http://", with: "")
            for flag in [["-x", proxy.url], ["--proxy", scheme], ["-x", proxy.url, "--proxy-user", "u:p"]] {
                let result = try await trawl(
                    ["get", "-sf", "--cacert", server.caFile] + flag + [server.url("/items")], in: workspace)
                #expect(result.status == 0, "\(flag): \(result.stderr)")
                #expect(result.stdout.contains(#""items":[1,2,3]"#), "\(flag): \(result.stdout)")
            }
            #expect(proxy.tunnelCount >= 3)
            let before = proxy.tunnelCount
            let direct = try await trawl(
                ["get", "-sf", "--cacert", server.caFile, "-x", proxy.url, "--noproxy", "127.0.0.1",
                 server.url("/items")], in: workspace)
            #expect(direct.status == 0, "\(direct.stderr)")
            #expect(proxy.tunnelCount == before, "--noproxy reached the server directly")
        }
    }

    @Test("a Link walk through the tunnel gets every page")
    func linkWalkThroughTunnel() async throws {
        try await withPrivateCAServer { server, workspace in
            let proxy = try ConnectProxy()
            defer { proxy.stop() }
            let result = try await trawl(
                ["fetch", "--url", server.url("/page/1"), "--items", "items", "--paginate", "link",
                 "--cacert", server.caFile, "-o", "out.jsonl", "-q"],
                in: workspace, environment: ["https_proxy": proxy.url])
            #expect(result.status == 0, "\(result.stderr)")
            #expect(workspace.text("out.jsonl") == "1\n2\n3\n4\n5\n", "\(workspace.text("out.jsonl"))")
            #expect(proxy.tunnelCount >= 1)
        }
    }

    /// Found by the hostile sweep: the refusal also threw away the page that named the http page.
    @Test("an https page naming an http next page: refused, exit 1; the page itself is kept, and a resume refuses again")
    func downgradeRefusedPageKept() async throws {
        try await withPrivateCAServer { server, workspace in
            let arguments = ["fetch", "--url", server.url("/page/down"), "--items", "items", "--paginate", "link",
                             "--cacert", server.caFile, "-o", "out.jsonl", "-q", "--state", "st"]
            for _ in 0..<2 {
                let result = try await trawl(arguments, in: workspace)
                #expect(result.status == 1, "\(result.stderr)")
                #expect(result.stderr.contains("refused, as it would send the request unencrypted"), "\(result.stderr)")
                #expect(!result.stderr.contains("nothing of the unit is kept"), "\(result.stderr)")
                #expect(workspace.text("out.jsonl") == "1\n2\n", "\(workspace.text("out.jsonl"))")
            }
        }
    }

    @Test("a proxy that refuses the tunnel (407, 502) is a proxy error naming the proxy, exit 56",
          arguments: ["407 Proxy Authentication Required", "502 Bad Gateway"])
    func refusedTunnel(refusal: String) async throws {
        let proxy = try ConnectProxy(refusal: refusal)
        defer { proxy.stop() }
        let workspace = try Workspace()
        defer { workspace.remove() }
        let result = try await trawl(
            ["get", "-s", "https://127.0.0.1:9/items"], in: workspace, environment: ["https_proxy": proxy.url])
        #expect(result.status == 56, "curl's code for a refused tunnel: \(result.stderr)")
        #expect(result.stderr.contains("the proxy \(proxy.url)"), "\(result.stderr)")
        #expect(result.stderr.contains(String(refusal.prefix(3))), "\(result.stderr)")
        #expect(!result.stderr.contains("check that the server is up"), "\(result.stderr)")
    }

    @Test("a 407 from the proxy of a plain http request names the proxy, in get and fetch")
    func plainRequestRefused() async throws {
        let proxy = try ConnectProxy(refusal: "407 Proxy Authentication Required")
        defer { proxy.stop() }
        let workspace = try Workspace()
        defer { workspace.remove() }
        let environment = ["http_proxy": proxy.url]
        let get = try await trawl(["get", "-s", "http://127.0.0.1:9/items"], in: workspace, environment: environment)
        #expect(get.status == 7, "\(get.stderr)")
        #expect(get.stderr.contains("the proxy \(proxy.url) refused the request (407"), "\(get.stderr)")
        let fetch = try await trawl(
            ["fetch", "--url", "http://127.0.0.1:9/items", "--items", "items", "--paginate", "link", "-o", "out.jsonl",
             "-q", "--backoff-ms", "1"],
            in: workspace, environment: environment)
        #expect(fetch.status == 1, "\(fetch.stderr)")
        #expect(fetch.stderr.contains("the proxy \(proxy.url) refused the request (407"), "\(fetch.stderr)")
    }
}
