import Testing
import TrawlTestSupport
@testable import trawl

@Suite("What reaches the terminal", .endToEnd)
struct TerminalTextTests {
    @Test("escape sequences and other controls a server sends are shown escaped; newlines and tabs stay")
    func controlsEscaped() {
        let hostile = "HTTP 500: \u{1B}]0;owned\u{07}\u{1B}[2J\rdone\u{7F}\u{9B}31m\nnext\tline"
        let shown = TerminalText.safe(hostile)
        #expect(shown == "HTTP 500: \\u{1B}]0;owned\\u{7}\\u{1B}[2J\\u{D}done\\u{7F}\\u{9B}31m\nnext\tline")
        #expect(!shown.unicodeScalars.contains { $0.value == 0x1B || $0.value == 0x0D || $0.value == 0x9B })
        #expect(TerminalText.safe("plain text, café ⚓") == "plain text, café ⚓")
    }

    @Test("credentials in URLs are shown as REDACTED: userinfo and the usual query parameter names")
    func credentialsRedacted() {
        let text = "GET https://al:pw@api.test/x?access_token=a1&client_secret=b2&sig=c3&password=d4&page=2 failed"
        let shown = TerminalText.safe(text)
        for secret in ["al:pw", "a1", "b2", "c3", "d4"] { #expect(!shown.contains(secret), "\(secret)") }
        #expect(shown.contains("page=2"))
        // Signed URLs and session ids too (found by the hostile sweep).
        let signed = TerminalText.safe(
            "GET https://b.s3.test/k?X-Amz-Credential=e1&X-Amz-Signature=e2&X-Amz-Security-Token=e3&session_id=e4&X-Goog-Signature=e5")
        for secret in ["e1", "e2", "e3", "e4", "e5"] { #expect(!signed.contains("=" + secret), "\(secret): \(signed)") }
    }

    /// Found by the hostile sweep: a server's 1 MB next URL was printed whole, twice.
    @Test("a run of more than 2,048 characters without a space is cut, with a count of the rest")
    func longWordsCut() {
        let url = "http://h.test/p?x=" + String(repeating: "a", count: 1_000_000)
        let shown = TerminalText.safe("error: the page at \(url) failed\n  page at \(url)")
        #expect(shown.utf8.count < 5_000)
        #expect(shown.contains("…[\(url.count - 2048) more characters] failed\n  page at http://h.test/p?x=aaa"))
        #expect(TerminalText.safe("short words stay") == "short words stay")
        // Server text with spaces (found by the second sweep): each line is cut at 8,192 characters.
        let spaced = TerminalText.safe("error: keys " + String(repeating: "ab ", count: 100_000) + "\nnext line")
        #expect(spaced.utf8.count < 9_000)
        #expect(spaced.hasSuffix("more characters]\nnext line"))
    }

    @Test("the printed retry command hides credential header values, whatever the spelling of the flag")
    func retryHeaders() {
        let arguments = [
            "fetch", "-H", "Authorization: Bearer x", "--header", "X-Api-Key: y", "--header=Cookie: z",
            "-HX-Auth-Token: w", "-H", "Accept: json",
        ]
        let shown = Fetch.redactingHeaders(arguments)
        #expect(shown == [
            "fetch", "-H", "Authorization: REDACTED", "--header", "X-Api-Key: REDACTED", "--header=Cookie: REDACTED",
            "-HX-Auth-Token: REDACTED", "-H", "Accept: json",
        ])
        // Found by the hostile sweep: a --sensitive-header name's value was printed as given.
        let marked = Fetch.redactingHeaders(
            ["fetch", "-H", "X-Foo: SECRETFOO", "--sensitive-header", "X-Foo", "-H", "X-Bar: b"], sensitive: ["x-foo"])
        #expect(marked == ["fetch", "-H", "X-Foo: REDACTED", "--sensitive-header", "X-Foo", "-H", "X-Bar: b"])
    }
}
