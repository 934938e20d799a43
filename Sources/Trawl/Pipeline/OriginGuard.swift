import Foundation
import TrawlEngine

/// Where a walk's credentials may go. A page URL a response names (a `Link: rel="next"` target, a next URL in the
/// body, a planned page from a `last` link) is treated like a redirect target: when its origin (scheme, host,
/// port) differs from the origin of the page that named it, and the caller did not name it as trusted, the page
/// and every page after it are sent without credentials (`Authorization`, `Cookie`, `Proxy-Authorization`,
/// userinfo and every sensitive header). An `https` page that names an `http` page is refused.
///
/// ```swift
/// var origins = OriginGuard()
/// origins.trustedOrigins = ["https://cdn.example.com"]
/// origins.sensitiveHeaders = ["x-tenant-key"]
/// ```
package struct OriginGuard: Sendable, Hashable {
    /// Origins (`scheme://host[:port]`) that may receive the walk's credentials too.
    package var trusted: Set<Origin> = []
    /// Header names (any case) that are credentials, on top of the built-in ones (see ``isSensitive(_:extra:)``).
    package var sensitiveHeaders: Set<String> = []

    package init(trusted: [String] = [], sensitiveHeaders: Set<String> = []) {
        self.trusted = Set(trusted.compactMap { Origin(url: $0) })
        self.sensitiveHeaders = Set(sensitiveHeaders.map { $0.lowercased() })
    }

    /// Whether a header carries a credential: those the engine strips on a redirect to another origin
    /// (`RedirectPolicy.isCredential`: `Authorization`, `Cookie`, `Proxy-Authorization`, API-key headers, names ending
    /// in `-Token`, `-Secret`, `-Api-Key`, `-Password` or `-Signature`, and `extra`), and those ``Redaction`` hides
    /// by default.
    package static func isSensitive(_ name: String, extra: Set<String> = []) -> Bool {
        RedirectPolicy.isCredential(name, extra: extra) || Redaction.defaultHeaderNames.contains(name.lowercased())
    }

    /// What becomes of `next`, a page named by the response to `from`.
    package enum Verdict: Sendable {
        /// Send it as derived (same origin, or trusted).
        case keep(PageRequest)
        /// Send it without credentials: it left the origin.
        case stripped(PageRequest)
        /// Do not send it: it leaves `https` for `http`.
        case refused(String)
    }

    /// `servedFrom` is the URL the page that names `next` came from (its request's, unless a redirect took it
    /// elsewhere): a page served by another origin than asked for leaves the walk's origin, so whatever it names
    /// goes without credentials, the walk's first origin included (it cannot pick which authenticated URL is asked
    /// for).
    package func judge(_ next: PageRequest, from: Request, servedFrom: String? = nil) -> Verdict {
        guard let source = Origin(url: from.url), let target = Origin(url: next.request.url) else {
            return .keep(next)
        }
        let served = servedFrom.flatMap { Origin(url: $0) } ?? source
        if source.scheme == "https" || served.scheme == "https", target.scheme == "http" {
            return .refused(
                "the page at \(Redaction.url(from.url, names: Redaction.queryNames(for: from))) names an http:// "
                    + "page after it (\(Redaction.url(next.request.url, names: Redaction.queryNames(for: from)))): "
                    + "refused, as it would send the request unencrypted")
        }
        guard source != target || served != source, !trusted.contains(target) else { return .keep(next) }
        if next.request.bodyHoldsSecret, next.request.body != nil {
            return .refused(
                "the page at \(Redaction.url(from.url, names: Redaction.queryNames(for: from))) names a page on "
                    + "another origin (\(Redaction.url(next.request.url, names: Redaction.queryNames(for: from)))): "
                    + "refused, as its request body holds a secret")
        }
        var request = next.request
        let extra = sensitiveHeaders.union(request.sensitiveHeaders.map { $0.lowercased() })
        var removed: Set<String> = RedirectPolicy.credentialHeaders.union(extra)
        for field in request.headers where Self.isSensitive(field.name, extra: extra) {
            removed.insert(field.name.lowercased())
        }
        request.headers.remove(names: removed)
        request.strippedHeaders.formUnion(removed)
        request.url = Self.removingUserInfo(request.url)
        return .stripped(PageRequest(request: request, position: next.position))
    }

    /// `url` without `user:password@`.
    static func removingUserInfo(_ url: String) -> String {
        guard let (userInfo, _) = userInfo(in: url) else { return url }
        return String(url[..<userInfo.lowerBound] + url[url.index(after: userInfo.upperBound)...])
    }

    /// The range of `user:password` in `url` and its text, when the authority has one (the `@` is right after
    /// the range).
    private static func userInfo(in url: String) -> (Range<String.Index>, String)? {
        guard let schemeEnd = url.range(of: "://") else { return nil }
        let rest = url[schemeEnd.upperBound...]
        let authorityEnd = rest.firstIndex { $0 == "/" || $0 == "?" || $0 == "#" } ?? rest.endIndex
        guard let at = rest[..<authorityEnd].lastIndex(of: "@") else { return nil }
        return (rest.startIndex..<at, String(rest[..<at]))
    }

    /// `request` with the userinfo of its URL (`https://user:pw@host/…`) moved into an `Authorization: Basic`
    /// header (percent-decoded, as curl does), so that it goes with every page of the walk at that origin and is
    /// stripped like any credential when a page leaves it. A request that has an `Authorization` header already
    /// keeps it; the userinfo is dropped then.
    package static func movingUserInfoToHeader(_ request: Request) -> Request {
        guard let (_, userInfo) = userInfo(in: request.url) else { return request }
        var result = request
        result.url = removingUserInfo(request.url)
        if request.headers["Authorization"] == nil {
            let decoded = userInfo.removingPercentEncoding ?? userInfo
            let credentials = decoded.contains(":") ? decoded : decoded + ":"
            result.headers["Authorization"] = "Basic " + Data(credentials.utf8).base64EncodedString()
        }
        return result
    }
}
