import Testing
@testable import TrawlBench
import TrawlEngine
import TrawlTestSupport

@Suite("bench: requests checked once", .hangGuard)
struct ReadyRequestsTests {
    @Test func anInvalidRequestFailsOnEverySendAsTheClientSaysAndTheOthersGoOut() async throws {
        let client = Client()
        var bad = Request(url: "http://127.0.0.1:1/bad")
        bad.headers = ["X-Bad": "a\r\nInjected: 1"]
        // Port 1 on loopback refuses: the valid request is sent (prepared) and fails to connect.
        let good = Request(url: "http://127.0.0.1:1/good")
        let ready = ReadyRequests([good, bad], client: client)
        #expect(ready.request(0).url == good.url && ready.request(3).url == bad.url)
        for index in 0..<4 {
            do {
                _ = try await ready.send(index, through: client)
                Issue.record("request \(index) succeeded")
            } catch let error as TrawlError {
                #expect(error.code == (index % 2 == 0 ? .connectFailed : .invalidHeader), "\(error)")
                #expect(error.url == (index % 2 == 0 ? good.url : bad.url))
            }
        }
    }
}
