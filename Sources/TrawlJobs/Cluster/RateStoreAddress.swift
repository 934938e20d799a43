/// Where a job's shared rate budget lives: a Redis server named by `redis://HOST[:PORT][/DB]` (`--rate-store`,
/// `settings.rate_store`). Every process that names the same store and runs the same job shares one token bucket
/// per host and the host pauses.
///
/// ```swift
/// let store = try RateStoreAddress.parse("redis://127.0.0.1:6379/2")   // host 127.0.0.1, port 6379, db 2
/// ```
public struct RateStoreAddress: Sendable, Hashable, CustomStringConvertible {
    public var host: String
    public var port: Int
    public var database: Int

    public init(host: String, port: Int = 6379, database: Int = 0) {
        self.host = host
        self.port = port
        self.database = database
    }

    public var description: String { "redis://\(host.contains(":") ? "[\(host)]" : host):\(port)/\(database)" }

    /// Parses `redis://HOST[:PORT][/DB]` (IPv6 hosts in brackets); the port defaults to 6379, the database to 0.
    public static func parse(_ text: String) throws(JobSpecError) -> RateStoreAddress {
        let usage = "write it as redis://HOST:PORT or redis://HOST:PORT/DB, e.g. redis://127.0.0.1:6379/0"
        guard text.hasPrefix("redis://") else {
            throw JobSpecError("'\(text)' is not a redis:// address", hint: usage)
        }
        var rest = Substring(text.dropFirst("redis://".count))
        if rest.contains("@") {
            throw JobSpecError(
                "'\(text)' carries credentials, which trawl does not send to a rate store",
                hint: "run the store on a private network without a password, or front it with a local proxy")
        }
        var database = 0
        if let slash = rest.firstIndex(of: "/") {
            let text = rest[rest.index(after: slash)...]
            guard let number = Int(text), number >= 0 else {
                throw JobSpecError("the database '\(text)' in '\(rest)' is not a number", hint: usage)
            }
            database = number
            rest = rest[..<slash]
        }
        var host: Substring
        var portText: Substring?
        if rest.hasPrefix("[") {
            guard let close = rest.firstIndex(of: "]") else { throw JobSpecError("'\(text)' has no ']'", hint: usage) }
            host = rest[rest.index(after: rest.startIndex)..<close]
            let after = rest[rest.index(after: close)...]
            if after.hasPrefix(":") { portText = after.dropFirst() } else if !after.isEmpty {
                throw JobSpecError("'\(text)' has '\(after)' after the host", hint: usage)
            }
        } else if let colon = rest.lastIndex(of: ":") {
            host = rest[..<colon]
            portText = rest[rest.index(after: colon)...]
        } else {
            host = rest
        }
        guard !host.isEmpty, !host.contains(where: { $0.isWhitespace || $0 == "?" || $0 == "#" }) else {
            throw JobSpecError("'\(text)' names no host", hint: usage)
        }
        var port = 6379
        if let portText {
            guard let number = Int(portText), (1...65535).contains(number) else {
                throw JobSpecError("the port '\(portText)' in '\(text)' is not a port (1-65535)", hint: usage)
            }
            port = number
        }
        return RateStoreAddress(host: String(host), port: port, database: database)
    }
}
