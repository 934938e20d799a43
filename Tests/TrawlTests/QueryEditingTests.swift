import Foundation
import Testing

@testable import Trawl

/// `QueryEditing.url(_:setting:to:)` works on UTF-8 bytes; it must build exactly the URL the Character-based
/// version it replaced built (kept here as the reference), for every URL shape a server or a user can produce.
struct QueryEditingTests {
    /// The Character-based editor before, verbatim.
    static func reference(_ url: String, setting name: String, to value: String) -> String {
        var base = Substring(url)
        var fragment: Substring = ""
        if let hash = base.firstIndex(of: "#") {
            fragment = base[hash...]
            base = base[..<hash]
        }
        var query: Substring = ""
        if let mark = base.firstIndex(of: "?") {
            query = base[base.index(after: mark)...]
            base = base[..<mark]
        }
        let encodedName = PercentEncoding.queryComponent(name)
        let pair = encodedName + "=" + PercentEncoding.queryComponent(value)
        var pairs: [String] = []
        var placed = false
        for existing in query.split(separator: "&") {
            let key = existing.split(separator: "=", maxSplits: 1).first.map(String.init) ?? ""
            if key == encodedName || key.removingPercentEncoding == name {
                if !placed { pairs.append(pair) }
                placed = true
            } else {
                pairs.append(String(existing))
            }
        }
        if !placed { pairs.append(pair) }
        return base + "?" + pairs.joined(separator: "&") + fragment
    }

    @Test func examples() {
        #expect(QueryEditing.url("https://a.example/p", setting: "page", to: "2") == "https://a.example/p?page=2")
        #expect(QueryEditing.url("https://a.example/p?page=1&x=y", setting: "page", to: "2")
            == "https://a.example/p?page=2&x=y")
        #expect(QueryEditing.url("https://a.example/p?x=y&page=1&page=3#top", setting: "page", to: "a b")
            == "https://a.example/p?x=y&page=a%20b#top")
        #expect(QueryEditing.url("https://a.example/p?p%61ge=1", setting: "page", to: "2") == "https://a.example/p?page=2")
        #expect(QueryEditing.url("https://a.example/p?&&x&", setting: "page", to: "2") == "https://a.example/p?x&page=2")
        // The one intended difference from the reference: a separator followed by a combining mark is still a
        // separator (URLs are bytes; the Character-based version saw one Character and no `?`).
        #expect(QueryEditing.url("https://a.example/p?\u{301}x=1", setting: "page", to: "2")
            == "https://a.example/p?\u{301}x=1&page=2")
        #expect(Self.reference("https://a.example/p?\u{301}x=1", setting: "page", to: "2")
            != "https://a.example/p?\u{301}x=1&page=2")
    }

    /// Generated URLs of the pieces that matter (separators, leading and repeated `=`, percent escapes valid and
    /// not, non-ASCII, fragments with `?` and `&`) against the reference.
    @Test func agreesWithTheCharacterBasedEditor() {
        let pieces = ["page", "p%61ge", "page=", "=page", "==page=1", "=", "&", "&&", "?", "#", "#x?page=1&a", "x=y",
                      "%", "%zz", "%C3%A9", "é", "e\u{301}", "page=1", "PAGE=2", "a=b=c", "\u{212A}", "K", " ", "+"]
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<4_000 {
            var url = "https://api.example.com/items"
            for _ in 0..<Int.random(in: 0...6, using: &generator) { url += pieces.randomElement(using: &generator)! }
            let name = ["page", "é", "K", "a b", "p=x", ""].randomElement(using: &generator)!
            let value = ["2", "", "a&b", "é", "#"].randomElement(using: &generator)!
            let expected = Self.reference(url, setting: name, to: value)
            let built = QueryEditing.url(url, setting: name, to: value)
            #expect(built == expected, "url \(url) name \(name) value \(value)")
            if built != expected { return }
        }
    }
}
