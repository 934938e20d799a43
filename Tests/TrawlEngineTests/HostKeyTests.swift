import Foundation
import Testing

import TrawlEngine

/// `Origin.hostKey(of:)` names the host of per-host limits, the report's `hosts` and the metrics' `host` label.
/// It reads plain hosts with the engine's byte parser; it must say what `URLComponents` said for them.
struct HostKeyTests {
    static func reference(_ url: String) -> String {
        guard let components = URLComponents(string: url), let host = components.host else { return url }
        let scheme = components.scheme ?? "http"
        let port = components.port ?? (scheme == "https" ? 443 : 80)
        return "\(scheme)://\(host):\(port)"
    }

    @Test func plainHostsAreNamedAsURLComponentsNamedThem() {
        let urls = [
            "http://127.0.0.1:8080/items?page=2", "https://api.example.com/v1/x", "http://localhost/", "http://h",
            "https://user:pw@api-2.example.org:8443/a?b=c#d", "http://a.b.c:80?x=1", "https://x.test:0443/p",
            "http://10.0.0.1:65535/items?next=http://other:1/", "https://h.example#frag",
        ]
        for url in urls { #expect(Origin.hostKey(of: url) == Self.reference(url), "\(url)") }
    }

    @Test func otherHostsStillGoThroughURLComponents() {
        for url in ["http://[::1]:8080/items", "http://%68ost/x", "not a url", "ftp://files.example/x"] {
            #expect(Origin.hostKey(of: url) == Self.reference(url), "\(url)")
        }
        // One host however it is written.
        #expect(Origin.hostKey(of: "HTTP://API.Example.com/x") == "http://api.example.com:80")
    }
}
