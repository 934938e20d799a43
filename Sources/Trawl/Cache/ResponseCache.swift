import Foundation
import TrawlEngine

/// What identifies a stored response: the method, the URL and a hash of the request's credentials (so that a
/// response for one principal never answers another's request).
///
/// ```swift
/// let key = ResponseCacheKey(request)            // GET, the URL, SHA-256 of Authorization, Cookie, …
/// key.carriesCredentials                          // true when the request sent any
/// ```
public struct ResponseCacheKey: Sendable, Hashable {
    public var method: String
    public var url: String
    /// SHA-256 (hex) of the request's credential headers, names lowercased and sorted; empty without any.
    public var credentials: String

    /// `principal`, when given, stands for the `Authorization` header's value: a bearer token that an adapter renews
    /// (OAuth2 hands out a new one each run) must not make every stored page a stranger to the next run, so the
    /// adapter names the principal it authenticates instead (its token URL, client and scope).
    public init(_ request: Request, sensitiveHeaders: Set<String> = [], principal: String? = nil) {
        method = request.method.rawValue
        url = request.url
        var fields: [String] = []
        for (name, value) in request.headers where OriginGuard.isSensitive(name, extra: sensitiveHeaders) {
            if let principal, name.lowercased() == "authorization" {
                fields.append("authorization:principal " + principal)
            } else {
                fields.append(name.lowercased() + ":" + value)
            }
        }
        let query = URLComponents(string: request.url)?.queryItems ?? []
        for item in query where Redaction.defaultQueryNames.contains(item.name.lowercased()) {
            fields.append("?" + item.name + "=" + (item.value ?? ""))
        }
        if fields.isEmpty {
            credentials = ""
        } else {
            var hasher = SHA256()
            hasher.update(Array(fields.sorted().joined(separator: "\n").utf8))
            credentials = hasher.hexDigest()
        }
    }

    /// Whether the request carried credentials (headers, or a credential in the query).
    public var carriesCredentials: Bool { !credentials.isEmpty }

    /// A file-name-safe digest of the whole key: the URL (which may hold a secret) is never written as such.
    public var digest: String {
        var hasher = SHA256()
        hasher.update(Array("\(method)\n\(url)\n\(credentials)".utf8))
        return hasher.hexDigest()
    }
}

/// A stored response's validators and the headers it came with.
public struct CachedResponse: Sendable {
    public var etag: String?
    public var lastModified: String?
    /// The headers of the stored response (a `304` does not repeat `Link` and the like).
    public var headers: HTTPHeaders
}

/// Where conditional requests remember responses (`ETag`, `Last-Modified` and the body) to reuse them on a `304`.
///
/// ```swift
/// let cache = try DiskResponseCache(directory: "cache", isPrivate: true)
/// var api = MyAPI(); api.cache = cache        // API.send and every page of a walk revalidate
/// ```
///
/// A cache that is not private never stores a response to a request that carried credentials, and nothing is
/// stored when the request or the response says `Cache-Control: no-store`.
public protocol ResponseCache: Sendable {
    /// Whether the cache serves a single principal, so responses to credentialed requests may be stored.
    var isPrivate: Bool { get }
    /// The validators of the response stored for `key`, if any.
    func lookup(_ key: ResponseCacheKey) -> CachedResponse?
    /// The stored body for `key`, checked against the checksum it was stored with; `nil` (and the entry
    /// dropped) when it is missing or does not match.
    func body(for key: ResponseCacheKey) -> [UInt8]?
    /// A writer for a new response to `key`: chunks are appended as they arrive, then committed once the body
    /// is complete (or discarded).
    func writer(for key: ResponseCacheKey, headers: HTTPHeaders) -> (any ResponseCacheWriter)?
}

/// A response being stored.
public protocol ResponseCacheWriter: AnyObject, Sendable {
    func append(_ bytes: [UInt8])
    /// Makes the stored response the one `lookup` finds.
    func commit()
    func discard()
}

extension ResponseCache {
    /// Whether a response to `request` with `headers` may be stored: a GET, with a validator, no `no-store` on
    /// either side, and no credentials unless the cache is private.
    public func mayStore(_ request: Request, _ key: ResponseCacheKey, headers: HTTPHeaders) -> Bool {
        guard request.method == .get, headers["ETag"] != nil || headers["Last-Modified"] != nil else { return false }
        if Self.noStore(request.headers["Cache-Control"]) || Self.noStore(headers["Cache-Control"]) { return false }
        guard isPrivate || !key.carriesCredentials else { return false }
        return !Self.echoesCredential(headers, of: request)
    }

    /// Whether a header of the response (one that would be stored) carries a credential: a URL with a credential
    /// query value or `user:password@` (a `Link` echoing `?access_token=…`), or the value of one of the request's
    /// credentials. Such a response is not stored: cache files hold neither a URL's secret nor a credential.
    static func echoesCredential(_ headers: HTTPHeaders, of request: Request) -> Bool {
        let names = Redaction.queryNames(for: request)
        var secrets: [String] = []
        for (name, value) in request.headers where OriginGuard.isSensitive(name, extra: []) {
            secrets.append(value)
            if let space = value.firstIndex(of: " ") { secrets.append(String(value[value.index(after: space)...])) }
        }
        for item in URLComponents(string: request.url)?.queryItems ?? [] where names.contains(item.name.lowercased()) {
            if let value = item.value { secrets.append(value) }
        }
        secrets = secrets.filter { $0.count >= 4 }
        for (name, value) in headers where !["etag", "last-modified", "date"].contains(name.lowercased()) {
            if Redaction.text(value, names: names) != value { return true }
            if secrets.contains(where: { value.contains($0) }) { return true }
        }
        return false
    }

    static func noStore(_ value: String?) -> Bool {
        guard let value else { return false }
        return value.lowercased().split(separator: ",").contains {
            $0.trimmingCharacters(in: .whitespaces) == "no-store"
        }
    }

    /// `request` with `If-None-Match` / `If-Modified-Since` from the response stored for it, when the cache may
    /// use one for it (a GET without validators of its own).
    public func conditional(_ request: Request, _ key: ResponseCacheKey) -> (Request, CachedResponse)? {
        guard request.method == .get, isPrivate || !key.carriesCredentials,
            request.headers["If-None-Match"] == nil, request.headers["If-Modified-Since"] == nil,
            let cached = lookup(key)
        else { return nil }
        var conditional = request
        if let etag = cached.etag { conditional.headers.replaceOrAdd("If-None-Match", etag) }
        if let date = cached.lastModified { conditional.headers.replaceOrAdd("If-Modified-Since", date) }
        return (conditional, cached)
    }
}
