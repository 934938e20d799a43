import TrawlEngine

/// The run's requests, each checked once by the client (`Client.prepare`), so that a request sent thousands of
/// times does not check its URL and headers again on every send. One that fails the check is sent as given, and
/// each send fails with the client's error, as before.
struct ReadyRequests: Sendable {
    private let requests: [Request]
    private let prepared: [PreparedSend?]

    init(_ requests: [Request], client: Client) {
        self.requests = requests
        prepared = requests.map { try? client.prepare($0) }
    }

    /// The request at `index`, round-robin over the run's requests.
    func request(_ index: Int) -> Request { requests[index % requests.count] }

    func send(_ index: Int, through client: Client) async throws -> Response {
        let slot = index % requests.count
        if let ready = prepared[slot] { return try await client.send(ready) }
        return try await client.send(requests[slot])
    }
}
