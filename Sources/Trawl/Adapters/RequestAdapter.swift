/// A step that changes each request before it is sent. The API runs its adapters in order; an adapter
/// that throws stops the request, and the caller gets the error (as `APIError.Kind.adapter`).
///
/// ```swift
/// struct RequestID: RequestAdapter {
///     func adapt(_ request: inout Request, context: inout AdapterContext) async throws {
///         request.headers["X-Request-ID"] = UUID().uuidString
///     }
/// }
/// api.adapters = [BearerTokenAdapter { await tokens.current }, RequestID()]
/// ```
public protocol RequestAdapter: Sendable {
    func adapt(_ request: inout Request, context: inout AdapterContext) async throws
}

/// What adapters know about the request they change.
///
/// ```swift
/// guard context.authentication != .none else { return }
/// request.headers["Authorization"] = "Bearer \(token)"
/// context.credentialsApplied = true
/// ```
public struct AdapterContext: Sendable {
    /// The route's requirement; authentication adapters do nothing for `.none`.
    public var authentication: AuthRequirement
    /// Set by an adapter that added credentials; a `.required` route fails without it.
    public var credentialsApplied: Bool
    /// 0 for the first attempt, 1 for a retry.
    public var attempt: Int

    public init(authentication: AuthRequirement, credentialsApplied: Bool = false, attempt: Int = 0) {
        self.authentication = authentication
        self.credentialsApplied = credentialsApplied
        self.attempt = attempt
    }
}

/// Adds `Authorization: Bearer <token>` when the route allows it and a token is at hand.
///
/// ```swift
/// actor Tokens { var current: String? = "t0" }
/// let tokens = Tokens()
/// api.adapters = [BearerTokenAdapter { await tokens.current }]
/// ```
public struct BearerTokenAdapter: RequestAdapter {
    public let token: @Sendable () async throws -> String?

    public init(token: @escaping @Sendable () async throws -> String?) {
        self.token = token
    }

    public func adapt(_ request: inout Request, context: inout AdapterContext) async throws {
        guard context.authentication != .none, let token = try await token() else { return }
        request.headers["Authorization"] = "Bearer \(token)"
        context.credentialsApplied = true
    }
}

/// Adds HTTP basic credentials when the route allows it.
///
/// ```swift
/// api.adapters = [BasicAuthAdapter(username: "ci", password: secret)]
/// ```
public struct BasicAuthAdapter: RequestAdapter {
    public let username: String
    public let password: String

    public init(username: String, password: String) {
        self.username = username
        self.password = password
    }

    public func adapt(_ request: inout Request, context: inout AdapterContext) async throws {
        guard context.authentication != .none else { return }
        let encoded = Base64.encode(Array("\(username):\(password)".utf8))
        request.headers["Authorization"] = "Basic \(encoded)"
        context.credentialsApplied = true
    }
}

/// Adds an API key as a header or as a query parameter when the route allows it. The name is also
/// marked sensitive (`Request.sensitiveHeaders` or `Request.sensitiveQueryParameters`), so redirects to other
/// hosts drop the header, and the logger and error descriptions redact the value whatever its name.
///
/// ```swift
/// api.adapters = [APIKeyAdapter(.header("X-API-Key"), key: secret)]
/// api.adapters = [APIKeyAdapter(.query("api_key"), key: secret)]
/// ```
public struct APIKeyAdapter: RequestAdapter {
    /// Where the key goes.
    public enum Placement: Sendable, Hashable {
        case header(String)
        case query(String)
    }

    public let placement: Placement
    public let key: String

    public init(_ placement: Placement, key: String) {
        self.placement = placement
        self.key = key
    }

    public func adapt(_ request: inout Request, context: inout AdapterContext) async throws {
        guard context.authentication != .none else { return }
        switch placement {
        case .header(let name):
            request.headers[name] = key
            request.sensitiveHeaders.insert(name.lowercased())
        case .query(let name):
            // Replaces an earlier value, so running the adapters again (after a refresh) adds no duplicate.
            request = request.settingQuery(name, to: key)
            request.sensitiveQueryParameters.insert(name.lowercased())
        }
        context.credentialsApplied = true
    }
}

/// Sets fixed headers on every request, replacing those of the same name.
///
/// ```swift
/// api.adapters = [StaticHeadersAdapter(["User-Agent": "reports/1.2", "Accept-Language": "en"])]
/// ```
public struct StaticHeadersAdapter: RequestAdapter {
    public let headers: HTTPHeaders

    public init(_ headers: HTTPHeaders) {
        self.headers = headers
    }

    public func adapt(_ request: inout Request, context: inout AdapterContext) async throws {
        for (name, value) in headers {
            request.headers[name] = value
        }
    }
}

enum Base64 {
    static func encode(_ bytes: [UInt8]) -> String {
        let table = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8)
        var out: [UInt8] = []
        var index = 0
        while index < bytes.count {
            let chunk = bytes[index..<min(index + 3, bytes.count)]
            var value = 0
            for byte in chunk { value = value << 8 | Int(byte) }
            value <<= 8 * (3 - chunk.count)
            for position in 0..<4 {
                out.append(position <= chunk.count ? table[(value >> (18 - 6 * position)) & 63] : UInt8(ascii: "="))
            }
            index += 3
        }
        return String(decoding: out, as: UTF8.self)
    }
}
