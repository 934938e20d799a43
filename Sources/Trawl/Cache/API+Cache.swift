import TrawlEngine

extension API {
    /// Sends `request` through the API's ``cache``: with the stored response's validators when there is one; a
    /// `304` answers with the stored body (its checksum checked; a mismatch sends the request again without
    /// validators); a `200` the cache may keep is stored.
    func revalidating(_ request: Request) async throws -> RawResponse {
        guard let cache else { return RawResponse(try await client.send(request)) }
        let key = ResponseCacheKey(request)
        if let (conditional, stored) = cache.conditional(request, key) {
            var response = RawResponse(try await client.send(conditional))
            if response.status == 304 {
                if let body = cache.body(for: key) {
                    var headers = stored.headers
                    for (name, value) in response.headers
                    where ["etag", "last-modified", "date"].contains(name.lowercased()) {
                        headers.replaceOrAdd(name, value)
                    }
                    response.status = 200
                    response.headers = headers
                    response.body = body
                    response.bodySize = body.count
                    return response
                }
                response = RawResponse(try await client.send(request))
            }
            store(response, for: request, key, in: cache)
            return response
        }
        let response = RawResponse(try await client.send(request))
        store(response, for: request, key, in: cache)
        return response
    }

    private func store(
        _ response: RawResponse, for request: Request, _ key: ResponseCacheKey, in cache: any ResponseCache
    ) {
        guard response.status == 200, cache.mayStore(request, key, headers: response.headers),
            let writer = cache.writer(for: key, headers: response.headers)
        else { return }
        writer.append(response.body)
        writer.commit()
    }
}
