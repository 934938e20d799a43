import Testing
import TrawlTestSupport
@testable import Trawl

@Suite("Link header (RFC 8288)", .hangGuard)
struct LinkHeaderTests {
    @Test func githubStyle() {
        let value = #"<https://api.github.com/repositories/1/issues?page=3>; rel="next", "#
            + #"<https://api.github.com/repositories/1/issues?page=9>; rel="last", "#
            + #"<https://api.github.com/repositories/1/issues?page=1>; rel="first", "#
            + #"<https://api.github.com/repositories/1/issues?page=1>; rel="prev""#
        let links = LinkHeader(value)
        #expect(links.links.count == 4)
        #expect(links.next == "https://api.github.com/repositories/1/issues?page=3")
        #expect(links.last == "https://api.github.com/repositories/1/issues?page=9")
        #expect(links.first == "https://api.github.com/repositories/1/issues?page=1")
        #expect(links.previous == "https://api.github.com/repositories/1/issues?page=1")
    }

    @Test func commasAndSemicolonsInsideTargetsAndQuotes() {
        let value = #"<http://x/a?ids=1,2;3>; rel="next"; title="a, \"b\"; c", <http://x/z>; rel=last"#
        let links = LinkHeader(value)
        #expect(links.links.count == 2)
        #expect(links.next == "http://x/a?ids=1,2;3")
        #expect(links.links[0].parameter("TITLE") == #"a, "b"; c"#)
        #expect(links.last == "http://x/z")
    }

    @Test func multipleRelationsCaseAndWhitespace() {
        let links = LinkHeader("  < http://x/2 > ;REL = \"Next  LAST\" ;anchor=\"#s\";hreflang=en  ,")
        #expect(links.links.count == 1)
        #expect(links.links[0].relations == ["next", "last"])
        #expect(links.next == "http://x/2")
        #expect(links.last == "http://x/2")
        #expect(links.links[0].parameter("anchor") == "#s")
        #expect(links.links[0].parameter("hreflang") == "en")
        #expect(links.target(rel: "NEXT") == "http://x/2")
    }

    @Test func relativeTargetsResolveAgainstTheBase() {
        let links = LinkHeader(
            #"</items?page=3>; rel="next", <page4>; rel="last", <//cdn.example.com/x>; rel="alternate""#,
            baseURL: "https://api.example.com/v1/items?page=2")
        #expect(links.next == "https://api.example.com/items?page=3")
        #expect(links.last == "https://api.example.com/v1/page4")
        #expect(links.target(rel: "alternate") == "https://cdn.example.com/x")
    }

    @Test func onlyTheFirstRelCountsAndValuelessParamsAreKept() {
        let links = LinkHeader(#"<http://x/1>; rel="prev"; rel="next"; crossorigin"#)
        #expect(links.links[0].relations == ["prev"])
        #expect(links.next == nil)
        #expect(links.links[0].parameter("crossorigin") == "")
    }

    @Test func malformedLinksAreSkippedAlone() {
        let value = #"garbage; rel="next", <http://x/ok>; rel="next", <http://x/unterminated; rel="last""#
        let links = LinkHeader(value)
        #expect(links.links.map(\.target) == ["http://x/ok"])
        #expect(links.last == nil)
        #expect(LinkHeader("").links.isEmpty)
        #expect(LinkHeader(" , ,").links.isEmpty)
        #expect(LinkHeader("<http://x/no-rel>").links[0].relations == [])
    }

    /// Found by the link-header fuzz target: a bare CR (or any control character) inside `<...>` reached the
    /// target, which becomes the next request's URL.
    @Test func targetsWithControlCharactersAreSkipped() {
        let value = "<http://x/a\r\nX-Injected: 1>; rel=\"next\", <http://x/\u{1E}b>; rel=last, <http://x/ok>; rel=next"
        let links = LinkHeader(value)
        #expect(links.links.map(\.target) == ["http://x/ok"])
        #expect(links.next == "http://x/ok")
        #expect(links.last == nil)
        #expect(LinkHeader("<http://x/\u{7F}>; rel=next").next == nil)
    }

    /// Found by the link-header fuzz target: a blank right after a prepended mark (U+0605) is one Character with
    /// it, so splitting the relations by Character kept the blank inside one.
    @Test func relationsSplitAtEveryBlankScalar() {
        let links = LinkHeader("<http://x/2>; rel=\"x\u{0605} next\"")
        #expect(links.links.count == 1)
        #expect(links.links[0].relations == ["x\u{0605}", "next"])
        #expect(links.next == "http://x/2")
        #expect(links.links[0].relations.allSatisfy { !$0.unicodeScalars.contains(" ") })
    }

    @Test func combinesRepeatedHeaderFields() {
        var headers = HTTPHeaders()
        headers.add("Link", #"<http://x/2>; rel="next""#)
        headers.add("link", #"<http://x/9>; rel="last""#)
        let links = LinkHeader(headers: headers)
        #expect(links.next == "http://x/2")
        #expect(links.last == "http://x/9")
    }
}

@Suite("Link targets that need no resolution", .hangGuard)
struct LinkAbsoluteTargetTests {
    @Test func absoluteTargets() {
        #expect(LinkHeader.isAbsoluteHTTP("https://api.github.com/x?page=2"))
        #expect(LinkHeader.isAbsoluteHTTP("HTTP://h/"))
        #expect(!LinkHeader.isAbsoluteHTTP("/x?page=2"))
        #expect(!LinkHeader.isAbsoluteHTTP("?page=2"))
        #expect(!LinkHeader.isAbsoluteHTTP("https://"))
        #expect(!LinkHeader.isAbsoluteHTTP("httpx://h/"))
        #expect(!LinkHeader.isAbsoluteHTTP("ftp://h/"))
        // A relative target still resolves against the base.
        let header = LinkHeader("</items?page=3>; rel=\"next\"", baseURL: "https://h.test/api/items?page=2")
        #expect(header.next == "https://h.test/items?page=3")
    }
}

/// Found by the hostile sweep: a next link with a control character in its target was skipped, so the walk ended
/// there with exit 0 and every later page missing.
@Suite("A next link that cannot be read is not the end of the list", .hangGuard)
struct UnreadableNextLinkTests {
    @Test("names(relation:) finds rel lists, quoted or not, and not text inside a target")
    func namesRelation() {
        #expect(LinkHeader.names(relation: "next", in: "<https://a/p2\u{1B}>; rel=\"next\""))
        #expect(LinkHeader.names(relation: "next", in: "<x>; REL = \"prev Next\", <y>; rel=last"))
        #expect(LinkHeader.names(relation: "next", in: "<x>; rel=next"))
        #expect(!LinkHeader.names(relation: "next", in: "<https://a/?rel=next>; rel=\"prev\""))
        #expect(!LinkHeader.names(relation: "next", in: "<x>; rel=\"nextpage\""))
    }

    @Test("a Link walk fails its page when the header names a next page it cannot read")
    func walkFails() {
        let style = PaginationStyle.link()
        let head = ResponseHead(
            status: 200, headers: ["Link": "<https://a.test/x?page=2\u{1B}[31m>; rel=\"next\""], url: "https://a.test/x",
            httpVersion: .http1_1)
        let page = PageResponse(
            request: Request(url: "https://a.test/x"), position: .url("https://a.test/x"), itemCount: 3, captured: [:],
            head: head)
        #expect(style.problem(in: page)?.contains("names a next page but its target cannot be read") == true)
        let last = ResponseHead(
            status: 200, headers: ["Link": "<https://a.test/x?page=1>; rel=\"prev\""], url: "https://a.test/x",
            httpVersion: .http1_1)
        #expect(style.problem(in: PageResponse(
            request: Request(url: "https://a.test/x"), position: .url("https://a.test/x"), itemCount: 3, captured: [:],
            head: last)) == nil)
    }
}
