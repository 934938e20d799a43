extension TestServer {
    /// Starts a server (with ``LivingFeeds`` when given), runs `body` with it, and shuts it down afterwards, also
    /// when `body` throws.
    ///
    /// ```swift
    /// try await TestServer.with { server in
    ///     let response = try await client.send(Request(url: server.url("/json/small")))
    /// }
    /// ```
    public static func with<T>(
        threads: Int = 1, livingFeeds: LivingFeeds? = nil, _ body: (TestServer) async throws -> T
    ) async throws -> T {
        let server = try await TestServer.start(threads: threads, livingFeeds: livingFeeds)
        do {
            let result = try await body(server)
            try await server.shutdown()
            return result
        } catch {
            try? await server.shutdown()
            throw error
        }
    }
}
