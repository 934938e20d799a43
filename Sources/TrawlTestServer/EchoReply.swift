/// The `/echo` endpoint's JSON reply, for tests that check what a client sent.
///
/// ```swift
/// let echo = try JSONDecoder().decode(EchoReply.self, from: Data(response.body))
/// #expect(echo.header("Authorization").isEmpty)
/// ```
public struct EchoReply: Decodable, Sendable {
    public let method: String
    public let path: String
    public let query: String
    /// `[name, value]` pairs in the order received, repeats kept.
    public let headers: [[String]]
    public let bodyLength: Int
    public let body: String

    /// Every value of header `name` (case-insensitive), in order.
    public func header(_ name: String) -> [String] {
        headers.filter { $0.first?.lowercased() == name.lowercased() }.compactMap { $0.count > 1 ? $0[1] : nil }
    }
}
