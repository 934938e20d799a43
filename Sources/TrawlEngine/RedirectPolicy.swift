/// Whether and how far the client follows redirects. Trawl follows them itself (not libcurl) so that
/// credentials never leak to another origin.
///
/// ```swift
/// config.redirects = .follow(max: 5)
/// request.redirects = .none            // return the 3xx response itself
/// ```
public struct RedirectPolicy: Sendable, Hashable {
    /// Most redirects followed before failing with `TrawlError.Code.tooManyRedirects`.
    public var maxRedirects: Int
    /// Whether a 3xx is followed at all: `.none` returns it; `.follow(max: 0)` fails on it, as
    /// `curl -L --max-redirs 0` does (exit 47).
    public var follows: Bool

    public init(maxRedirects: Int) {
        self.maxRedirects = maxRedirects
        self.follows = maxRedirects > 0
    }

    public static let none = RedirectPolicy(maxRedirects: 0)
    public static func follow(max: Int = 10) -> RedirectPolicy {
        var policy = RedirectPolicy(maxRedirects: Swift.max(0, max))
        policy.follows = true
        return policy
    }
    public static let `default` = RedirectPolicy.follow()

    /// Headers always removed when a redirect changes scheme, host or port.
    public static let credentialHeaders: Set<String> = ["authorization", "cookie", "proxy-authorization"]

    /// API-key and token headers removed with them (lowercased).
    static let apiKeyHeaders: Set<String> = [
        "x-api-key", "api-key", "apikey", "x-auth-token", "token", "secret", "password", "signature", "key", "auth",
        "x-authorization",
    ]
    /// Name endings that make a header a credential: `X-Custom-Token`, `Client-Secret`, `Partner-Api-Key`,
    /// `Ocp-Apim-Subscription-Key`, `X-Proxy-Authorization`…
    static let credentialSuffixes = [
        "-token", "-secret", "-api-key", "-apikey", "-password", "-signature", "-key", "-authorization", "-auth",
        "-credentials",
    ]

    /// Whether a header carries a credential, and is removed when a redirect (or a page a response names) changes
    /// origin: the three of RFC 9110 (`Authorization`, `Cookie`, `Proxy-Authorization`), `X-Api-Key`, `Api-Key`,
    /// `X-Auth-Token`, `X-Authorization`, bare `Token`, `Secret`, `Password`, `Signature`, `Key`, `Auth`, `ApiKey`,
    /// any name ending in `-Token`, `-Secret`, `-Key`, `-ApiKey`, `-Password`, `-Signature`, `-Auth`,
    /// `-Authorization` or `-Credentials`, and the names in `extra` (lowercased).
    public static func isCredential(_ name: String, extra: Set<String> = []) -> Bool {
        let lower = name.lowercased()
        if credentialHeaders.contains(lower) || apiKeyHeaders.contains(lower) || extra.contains(lower) { return true }
        return credentialSuffixes.contains { lower.hasSuffix($0) }
    }
}

/// The next hop of a redirect chain, computed from a 3xx response. Pure logic, no I/O.
struct RedirectStep {
    enum Outcome: Equatable {
        /// Not a redirect Trawl follows (not 301/302/303/307/308, or no `Location`): return the response.
        case stop
        case follow(url: String, method: HTTPMethod, keepsBody: Bool, crossesOrigin: Bool)
    }

    static func isFollowable(_ status: Int) -> Bool {
        switch status {
        case 301, 302, 303, 307, 308: return true
        default: return false
        }
    }

    static func next(status: Int, method: HTTPMethod, from url: String, location: String?) -> Outcome {
        guard let location, !location.isEmpty else { return .stop }
        let newMethod: HTTPMethod
        let keepsBody: Bool
        switch status {
        case 301, 302:
            // What browsers and curl do: a POST becomes a GET; other methods are kept.
            newMethod = method == .post ? .get : method
            keepsBody = method != .post
        case 303:
            newMethod = method == .head ? .head : .get
            keepsBody = false
        case 307, 308:
            newMethod = method
            keepsBody = true
        default:
            return .stop
        }
        let crosses = Origin(url: url) != Origin(url: location)
        return .follow(url: location, method: newMethod, keepsBody: keepsBody, crossesOrigin: crosses)
    }
}

/// Scheme, host and port of a URL (default ports filled in, host lowercased), parsed without Foundation.
package struct Origin: Hashable, Sendable, CustomStringConvertible {
    package var scheme: String
    package var host: String
    package var port: Int

    package init(scheme: String, host: String, port: Int) {
        self.scheme = scheme
        self.host = host
        self.port = port
    }

    /// `nil` when the URL has no `scheme://`. Works on UTF-8 bytes: this runs for every request.
    package init?(url: String) {
        var url = url
        guard let parsed = url.withUTF8({ Self.parse($0) }) else { return nil }
        self = parsed
    }

    private static func parse(_ bytes: UnsafeBufferPointer<UInt8>) -> Origin? {
        let colon = UInt8(ascii: ":"), slash = UInt8(ascii: "/")
        var index = 0
        while index < bytes.count, bytes[index] != colon { index += 1 }
        guard index > 0, index + 2 < bytes.count, bytes[index + 1] == slash, bytes[index + 2] == slash else {
            return nil
        }
        let scheme = lowercase(UnsafeBufferPointer(rebasing: bytes[0..<index]))
        var start = index + 3
        var end = start
        while end < bytes.count, bytes[end] != slash, bytes[end] != UInt8(ascii: "?"), bytes[end] != UInt8(ascii: "#") {
            if bytes[end] == UInt8(ascii: "@") { start = end + 1 }  // userinfo
            end += 1
        }
        var hostEnd = end
        var port: Int?
        if start < end, bytes[start] == UInt8(ascii: "[") {
            var close = start
            while close < end, bytes[close] != UInt8(ascii: "]") { close += 1 }
            hostEnd = min(close + 1, end)
        } else {
            var scan = end
            while scan > start, bytes[scan - 1] != colon { scan -= 1 }
            if scan > start { hostEnd = scan - 1 }
        }
        if hostEnd + 1 < end, bytes[hostEnd] == colon {
            var value = 0
            for byte in bytes[(hostEnd + 1)..<end] {
                guard byte >= 48, byte <= 57, value < 100_000 else { value = -1; break }
                value = value * 10 + Int(byte - 48)
            }
            if value >= 0 { port = value }
        }
        let host = lowercase(UnsafeBufferPointer(rebasing: bytes[start..<hostEnd]))
        let defaultPort = scheme == "https" ? 443 : scheme == "http" ? 80 : 0
        return Origin(scheme: scheme, host: host, port: port ?? defaultPort)
    }

    /// Skips `lowercased()` (an allocation) for the usual already-lowercase text.
    private static func lowercase(_ bytes: UnsafeBufferPointer<UInt8>) -> String {
        let text = String(decoding: bytes, as: UTF8.self)
        return bytes.contains(where: { $0 >= 0x41 && $0 <= 0x5A }) ? text.lowercased() : text
    }

    package var description: String { "\(scheme)://\(host):\(port)" }
}
