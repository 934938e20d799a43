import Testing
import TrawlTestSupport

@testable import TrawlTestServer

extension TrawlTestServerTests {
    @Suite("Parsing helpers", .hangGuard)
    struct ParsingTests {
        @Test func targetSplitsPathAndQuery() {
            let target = RequestTarget("/headers?A=1&b=x%20y&A=%zz&flag&e=a=b")
            #expect(target.path == "/headers")
            #expect(target.rawQuery == "A=1&b=x%20y&A=%zz&flag&e=a=b")
            #expect(target.query.map(\.name) == ["A", "b", "A", "flag", "e"])
            #expect(target.query.map(\.value) == ["1", "x y", "%zz", "", "a=b"])
            #expect(target.value("A") == "1")
            #expect(target.flag("flag"))
            #expect(!target.flag("missing"))
            #expect(target.segments == ["headers"])
            #expect(RequestTarget("/bytes/10").segments == ["bytes", "10"])
            #expect(RequestTarget("/").segments == [""])
            #expect(RequestTarget("/a?").rawQuery == "")
        }

        @Test func percentDecodingHandlesUTF8() {
            #expect(RequestTarget.percentDecode("caf%C3%A9%2B+") == "café++")
            #expect(RequestTarget.percentDecode("100%") == "100%")
        }

        @Test func jsonStringsAreEscaped() {
            #expect(JSONText.string("a\"b\\c\n\u{1}") == #""a\"b\\c\n\u0001""#)
            #expect(JSONText.object([("k", "1"), ("s", JSONText.string("v"))]) == #"{"k":1,"s":"v"}"#)
        }
    }
}
