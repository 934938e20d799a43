import Testing

@testable import TrawlEngine

/// `URLCheck.portText` reads UTF-8 bytes; it must find exactly the port the Character-based version it replaced
/// found (kept here as the reference), for every authority shape: userinfo with `@` and `:`, IPv6 literals, empty
/// and non-numeric ports, paths, queries and fragments holding `:` and `@`, non-ASCII hosts.
struct URLCheckPortTests {
    /// The Character-based reader before, verbatim.
    static func reference(_ url: String) -> Substring? {
        guard let schemeEnd = url.firstRange(of: "://") else { return nil }
        let rest = url[schemeEnd.upperBound...]
        let authority = rest.prefix { $0 != "/" && $0 != "?" && $0 != "#" }
        let hostAndPort = authority.lastIndex(of: "@").map { authority[authority.index(after: $0)...] } ?? authority
        let afterHost: Substring
        if hostAndPort.hasPrefix("[") {
            guard let close = hostAndPort.firstIndex(of: "]") else { return nil }
            afterHost = hostAndPort[hostAndPort.index(after: close)...]
        } else {
            guard let colon = hostAndPort.firstIndex(of: ":") else { return nil }
            afterHost = hostAndPort[colon...]
        }
        guard afterHost.hasPrefix(":"), afterHost.count > 1 else { return nil }
        return afterHost.dropFirst()
    }

    @Test func examples() {
        #expect(URLCheck.portText("http://h:8080/x") == "8080")
        #expect(URLCheck.portText("http://u:p@h:81?q=a:b") == "81")
        #expect(URLCheck.portText("http://[::1]:9/") == "9")
        #expect(URLCheck.portText("http://[::1]/") == nil)
        #expect(URLCheck.portText("http://h:/") == nil)
        #expect(URLCheck.portText("http://h/a:b@c:1") == nil)
        #expect(URLCheck.portText("http://h:x1#:2") == "x1")
        #expect(URLCheck.portText("h:80") == nil)
        #expect(URLCheck.portText("http://a@b@h:7") == "7")
        #expect(URLCheck.problem(in: "http://host:99999/")?.message == "the port 99999 is out of range (1-65535)")
        #expect(URLCheck.problem(in: "http://u:p@host:8080/a:b") == nil)
    }

    @Test func agreesWithTheCharacterBasedReader() {
        let pieces = [
            "http", "https", "://", ":/", ":", "/", "//", "?", "#", "@", "[", "]", "::1", "h", "host.example", "é",
            "ü.example", "80", "65535", "99999", "x", "u:p", "%3A", " ", "-", "1",
        ]
        var generator = SystemRandomNumberGenerator()
        var seen = 0
        for _ in 0..<20_000 {
            let count = Int.random(in: 1...9, using: &generator)
            var url = ""
            if Bool.random(using: &generator) { url = ["http://", "https://", "ftp://"].randomElement(using: &generator)! }
            for _ in 0..<count { url += pieces.randomElement(using: &generator)! }
            let expected = Self.reference(url)
            #expect(URLCheck.portText(url) == expected, "\(url)")
            if expected != nil { seen += 1 }
        }
        #expect(seen > 1000)  // the generator reaches ports, not only URLs without one
    }
}
