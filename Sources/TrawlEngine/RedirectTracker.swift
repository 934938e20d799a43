/// Follows one request's redirect chain: counts hops, detects loops, rewrites the method and body as
/// browsers and curl do, and strips credentials whenever the scheme, host or port changes.
struct RedirectTracker {
    private let policy: RedirectPolicy
    /// The client's sensitive header names (not the whole configuration: this is built for every request).
    private let clientSensitiveHeaders: Set<String>
    /// Method + URL of every hop so far; built on the first redirect (most requests have none).
    private var visited: Set<String> = []
    private(set) var chain: [String] = []

    init(request: Request, configuration: Client.Configuration) {
        policy = request.redirects ?? configuration.redirects
        clientSensitiveHeaders = configuration.sensitiveHeaders
    }

    /// The headers of `request` to remove when the chain leaves its origin: the three credential headers (also when
    /// absent: `strippedHeaders` keeps libcurl from adding them), and every header `RedirectPolicy.isCredential`
    /// names, with the client's and the request's sensitive headers.
    private func sensitiveHeaders(of request: Request) -> Set<String> {
        let extra = Set(clientSensitiveHeaders.map { $0.lowercased() })
            .union(request.sensitiveHeaders.map { $0.lowercased() })
        var names = RedirectPolicy.credentialHeaders.union(extra)
        for field in request.headers where RedirectPolicy.isCredential(field.name, extra: extra) {
            names.insert(field.name.lowercased())
        }
        return names
    }

    /// The request for the next hop, or `nil` when `outcome` is the final response.
    mutating func next(after outcome: TransferOutcome, request: Request) throws -> Request? {
        guard let target = outcome.redirectURL else { return nil }
        let step = RedirectStep.next(
            status: outcome.head.status, method: request.method, from: request.url, location: target)
        guard case .follow(let url, let method, let keepsBody, let crossesOrigin) = step else { return nil }

        func failure(
            _ code: TrawlError.Code, _ message: String, _ hint: String? = nil, remedy: TrawlError.Remedy? = nil
        ) -> TrawlError {
            TrawlError(code: code, message: message, hint: hint, remedy: remedy, method: request.method.rawValue,
                       url: request.url, status: outcome.head.status, headers: outcome.head.headers)
        }
        guard chain.count < policy.maxRedirects else {
            let message = policy.maxRedirects == 0
                ? "HTTP \(outcome.head.status) redirects to \(url), and no redirect may be followed (maximum 0)"
                : "more than \(policy.maxRedirects) redirects (last to \(url))"
            throw failure(.tooManyRedirects, message, remedy: .redirectLimit)
        }
        let scheme = Origin(url: url)?.scheme ?? ""
        guard scheme == "http" || scheme == "https" else {
            throw failure(.unsupportedScheme, "redirect to '\(url)' uses scheme '\(scheme)'",
                          "Trawl follows redirects only to http and https")
        }
        if visited.isEmpty { visited.insert(Self.key(request.method, request.url)) }
        guard visited.insert(Self.key(method, url)).inserted else {
            throw failure(.redirectLoop, "redirect loop: \(url) was already visited in this chain",
                          "the server redirects in a circle; fix its redirect rules")
        }
        if keepsBody, let body = request.body, !body.isReplayable {
            throw failure(.redirectNotReplayable,
                          "HTTP \(outcome.head.status) asks to resend the body, but it was a one-shot stream",
                          "send the body from bytes or a file, or disable redirects for this request")
        }

        // A body holding a secret (a job's `${NAME}`) goes to no origin the request was not for, as Authorization.
        let trusted = Origin(url: url).map { request.trustedOrigins.contains($0) } ?? false
        if keepsBody, crossesOrigin, !trusted, request.bodyHoldsSecret, request.body != nil {
            throw failure(.redirectNotReplayable,
                          "HTTP \(outcome.head.status) asks to resend the body to another origin (\(url)), and the body "
                              + "holds a secret: not sent",
                          "send the request to the origin that answers it, or keep secrets out of the body")
        }

        var next = request
        next.url = url
        next.method = method
        if !keepsBody {
            next.body = nil
            next.headers.remove(names: ["content-type", "content-length", "content-encoding"])
        }
        // Once the chain has left the original origin, credentials stay stripped for every later hop: each hop starts
        // from the previous hop's request, whose credentials are gone and whose strippedHeaders carry forward.
        if crossesOrigin, !trusted {
            let sensitive = sensitiveHeaders(of: request)
            next.headers.remove(names: sensitive)
            next.strippedHeaders.formUnion(sensitive)
        }
        chain.append(url)
        return next
    }

    private static func key(_ method: HTTPMethod, _ url: String) -> String { method.rawValue + " " + url }
}
