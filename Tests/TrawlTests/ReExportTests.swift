import Testing
import Trawl

@Suite("Trawl module")
struct ReExportTests {
    /// `import Trawl` alone must give users the engine's types (routes and pagination build on them).
    @Test func engineTypesAreReachableThroughTrawl() {
        var request = Request(url: "http://127.0.0.1:1/items", method: .post, body: .string("{}"))
        request.headers.add("Accept", "application/json")
        #expect(request.headers["accept"] == "application/json")
        #expect(TrawlError.Code.timeout != TrawlError.Code.stalled)
    }
}
