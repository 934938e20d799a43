import TrawlEngine

/// One request's side of a ``ResponseCache`` in ``PageExchange``: the conditional request to send, what a `304`
/// turns into, and the writer for a new response.
struct CacheExchange {
    let cache: any ResponseCache
    let key: ResponseCacheKey
    let original: Request
    /// The request to send (with validators when a response is stored).
    let request: Request
    let stored: CachedResponse?

    init?(_ cache: (any ResponseCache)?, _ request: Request, principal: String? = nil) {
        guard let cache else { return nil }
        self.cache = cache
        key = ResponseCacheKey(request, principal: principal)
        original = request
        if let (conditional, stored) = cache.conditional(request, key) {
            self.request = conditional
            self.stored = stored
        } else {
            self.request = request
            self.stored = nil
        }
    }

    /// For a `304` to a conditional request: the stored page as a `200` (its stored headers, updated by the
    /// `304`'s) and its stored body; `true`. `false` for any other response; `nil` when the stored body is gone
    /// or fails its checksum (never served: the caller asks again without validators).
    func notModified(_ head: inout ResponseHead, _ body: inout PageStream.Body) -> Bool? {
        guard head.status == 304, let stored else { return false }
        guard let bytes = cache.body(for: key) else { return nil }
        var headers = stored.headers
        for (name, value) in head.headers where ["etag", "last-modified", "date"].contains(name.lowercased()) {
            headers.replaceOrAdd(name, value)
        }
        head.status = 200
        head.headers = headers
        body = .bytes(bytes)
        return true
    }

    /// A writer for a `200` the cache may store.
    func writer(_ head: ResponseHead) -> (any ResponseCacheWriter)? {
        guard head.status == 200, cache.mayStore(original, key, headers: head.headers) else { return nil }
        return cache.writer(for: key, headers: head.headers)
    }
}
