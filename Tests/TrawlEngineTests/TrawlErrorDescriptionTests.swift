import Testing
import TrawlTestSupport
@testable import TrawlEngine

private struct Cause: Error, CustomStringConvertible {
    let description: String
}

@Suite("TrawlError descriptions", .hangGuard)
struct TrawlErrorDescriptionTests {
    @Test("an underlying error is shown in brackets once, not again when the message already quotes it")
    func underlyingShownOnce() {
        let quoted = TrawlError(
            code: .invalidBody, message: "the page is not the expected JSON: invalid JSON at byte 0", method: "GET",
            url: "http://h/x", underlying: Cause(description: "invalid JSON at byte 0"))
        #expect("\(quoted)" == "GET http://h/x: the page is not the expected JSON: invalid JSON at byte 0")
        let other = TrawlError(
            code: .receiveFailed, message: "the connection was reset", method: "GET", url: "http://h/x",
            underlying: Cause(description: "ECONNRESET"))
        #expect("\(other)".hasSuffix("the connection was reset [ECONNRESET]"), "\(other)")
    }
}
