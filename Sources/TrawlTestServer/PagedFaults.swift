import NIOCore

/// The transient faults of `/paged/STYLE` (see ``PaginatedAPI`` for the query parameters).
///
/// A page is chosen by its page number (`fault_KIND=P1,P2,...`) or by a rate (`rate_KIND=R`), and
/// misbehaves only on its first `fault_times` requests, counted per request target by the server's
/// ``RequestBook``, then answers normally.
///
/// ```swift
/// // /paged/page?page=2&fault_429=2  -> 429 once, then 200
/// let kind = PagedFault.Kind.chosen(page: 2, target: RequestTarget("/paged/page?page=2&fault_429=2"),
///                                   rawTarget: "/paged/page?page=2&fault_429=2")   // .tooManyRequests
/// ```
enum PagedFault {
    /// What a faulty page does.
    enum Kind: String, CaseIterable {
        /// 429 with `Retry-After`.
        case tooManyRequests = "429"
        /// 503 with a JSON error body.
        case unavailable = "5xx"
        /// Full `Content-Length`, about half the body, then a TCP RST.
        case reset
        /// Full `Content-Length`, about half the body, then a clean close (FIN).
        case trunc
        /// Full `Content-Length`, about half the body, then nothing: the connection stays open and silent until
        /// the client gives up (its stall timeout) or goes away. A walk held at a known page, for tests that
        /// must catch a client mid-walk however slowly they poll.
        case hold
        /// The full body in about ten pieces spread over `drip_ms`.
        case drip
        /// 404 with a JSON error body: a client error that is not retried, so the page fails for good until a
        /// later run asks again (after `fault_times` requests).
        case notFound = "404"
        /// A complete HTTP response whose `Content-Length` covers about half the JSON: the transfer succeeds, the
        /// document ends early (a server or proxy that cut the body and the length with it).
        case short

        /// The kinds a rate can select, in the order they share the unit interval.
        static let byRate: [Kind] = [.tooManyRequests, .unavailable, .reset, .trunc]

        /// The fault for `page`, if any: page lists first (in declaration order), then rates. Rates
        /// partition `0 ..< 1` in ``byRate`` order and a target's hash picks one point in it, so the
        /// choice is deterministic and the kinds never overlap.
        static func chosen(page: Int, target: RequestTarget, rawTarget: String) -> Kind? {
            for kind in allCases where PagedFault.pages(target.value("fault_" + kind.rawValue)).contains(page) {
                return kind
            }
            var threshold = 0.0
            var point: Double?
            for kind in byRate {
                guard let rate = target.value("rate_" + kind.rawValue).flatMap(Double.init), rate > 0 else { continue }
                threshold += min(rate, 1)
                let position = point ?? StableHash.unitInterval(rawTarget)
                point = position
                if position < threshold { return kind }
            }
            return nil
        }
    }

    /// The page numbers of a list like `2,5, 7`.
    static func pages(_ list: String?) -> Set<Int> {
        guard let list else { return [] }
        return Set(list.split(separator: ",").compactMap { Int($0.trimmingPrefix(" ")) })
    }

    /// `normal` (the page's correct response) turned into the fault `kind`.
    static func response(_ kind: Kind, normal: Response, page: Int, target: RequestTarget) -> Response {
        let pageMember = ("page", String(page))
        switch kind {
        case .tooManyRequests:
            let seconds = retryAfter(target)
            let value =
                target.flag("retry_after_date")
                ? CivilTime.imfFixdate(epochSeconds: CivilTime.now + seconds) : String(seconds)
            let body = JSONText.error("too many requests (transient fault)", [pageMember, ("retry_after", String(seconds))])
            return .json(429, body, headers: [("Retry-After", value)])
        case .unavailable:
            return .error(503, "service unavailable (transient fault)", [pageMember])
        case .notFound:
            return .error(404, "not found (transient fault)", [pageMember])
        case .reset, .trunc, .hold:
            guard case .buffer(let body) = normal.body else { return normal }
            var cut = normal
            cut.body = .buffer(body.getSlice(at: body.readerIndex, length: body.readableBytes / 2) ?? ByteBuffer())
            cut.ending = kind == .reset ? .reset : kind == .hold ? .hold : .close
            cut.isFault = true
            return cut
        case .short:
            guard case .buffer(let body) = normal.body else { return normal }
            let half = body.readableBytes / 2
            var short = normal
            short.body = .buffer(body.getSlice(at: body.readerIndex, length: half) ?? ByteBuffer())
            short.headers = short.headers.map { $0.0.lowercased() == "content-length" ? ($0.0, String(half)) : $0 }
            return short
        case .drip:
            guard case .buffer(let body) = normal.body else { return normal }
            let milliseconds = Int64(max(0, target.int("drip_ms") ?? 500))
            var slow = normal
            slow.body = .stream(SlowBufferSource(body: body, pieces: 10, interval: .nanoseconds(milliseconds * 100_000)))
            return slow
        }
    }

    /// `normal` with rate-limit headers announcing that the quota is used up (`ratelimit_page`).
    static func rateLimited(_ normal: Response, target: RequestTarget) -> Response {
        let seconds = retryAfter(target)
        var response = normal
        let style = target.value("ratelimit_style")?.lowercased()
        if style == "ietf" {
            response.headers += [("RateLimit-Remaining", "0"), ("RateLimit-Reset", String(seconds))]
        } else if style == "combined" {
            response.headers += [("RateLimit", "limit=100, remaining=0, reset=\(seconds)")]
        } else {
            response.headers += [("X-RateLimit-Remaining", "0"), ("X-RateLimit-Reset", String(CivilTime.now + seconds))]
        }
        return response
    }

    private static func retryAfter(_ target: RequestTarget) -> Int {
        max(0, target.int("retry_after") ?? 1)
    }
}
