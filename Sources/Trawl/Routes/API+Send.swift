import TrawlJSON

extension API {
    /// Sends a route and decodes its payload (at `keyPath`) as the route's `Output`.
    ///
    /// ```swift
    /// let repos: [Repo] = try await api.send(UserRepos(user: "apple"))
    /// ```
    ///
    /// - Throws: `APIError<R.ErrorModel>` for every failure: adapters, transport, status, decoding.
    public func send<R: Route>(_ route: R) async throws -> R.Output {
        try await send(route, progress: nil)
    }

    /// Sends a route as `send(_:)` does, reporting transfer progress on the way: for a multipart or file
    /// upload, `sent` climbs to `expectedToSend` (the body's exact length); `received` counts the response.
    /// Called on the engine's loop thread: keep it short. A retried route reports from zero again; a stub
    /// reports nothing.
    ///
    /// ```swift
    /// let receipt = try await api.send(UploadPhoto(form: form)) { progress in
    ///     print("\(progress.sent) of \(progress.expectedToSend ?? 0) bytes sent")
    /// }
    /// ```
    public func send<R: Route>(
        _ route: R, onProgress: @escaping @Sendable (TransferProgress) -> Void
    ) async throws -> R.Output {
        try await send(route, progress: onProgress)
    }

    /// Sends a route and returns the response undecoded (its status still checked by the route).
    ///
    /// ```swift
    /// let raw = try await api.response(for: UserRepos(user: "apple"))
    /// print(raw.headers["Link"] ?? "-")
    /// ```
    public func response<R: Route>(for route: R) async throws -> RawResponse {
        try await exchange(route, progress: nil).response
    }

    /// Sends a route and returns the response undecoded, reporting transfer progress as `send(_:onProgress:)`.
    ///
    /// ```swift
    /// let raw = try await api.response(for: UploadLog(path: "/var/log/app.log")) { print($0.sent) }
    /// ```
    public func response<R: Route>(
        for route: R, onProgress: @escaping @Sendable (TransferProgress) -> Void
    ) async throws -> RawResponse {
        try await exchange(route, progress: onProgress).response
    }

    private func send<R: Route>(
        _ route: R, progress: (@Sendable (TransferProgress) -> Void)?
    ) async throws -> R.Output {
        let (request, response) = try await exchange(route, progress: progress)
        do {
            return try route.decodeOutput(response.body, using: route.decoder ?? decoder)
        } catch {
            let failure = APIError<R.ErrorModel>(
                kind: .decoding, request: request, response: response, underlying: error)
            notifyFailure(failure, request)
            throw failure
        }
    }

    /// Builds, adapts and sends; retries once when the retrier asks; checks the status.
    func exchange<R: Route>(
        _ route: R, progress: (@Sendable (TransferProgress) -> Void)?
    ) async throws -> (request: Request, response: RawResponse) {
        var attempts = Attempts(policy: retryPolicy)
        var backoff = Duration.zero
        while true {
            if backoff > .zero {
                try await Task.sleep(for: backoff)
                backoff = .zero
            }
            var request = try await prepare(route, attempt: attempts.current)
            if let progress {
                // Keep a callback an adapter or `adjust` may have set: both hear every update.
                let earlier = request.onProgress
                request.onProgress = { update in
                    earlier?(update)
                    progress(update)
                }
            }
            for observer in observers { observer.willSend(request) }
            let start = ContinuousClock.now
            let response: RawResponse
            do {
                response = try await perform(request, route: route)
            } catch {
                let failure = APIError<R.ErrorModel>(
                    kind: .transport, request: request, underlying: error)
                notifyFailure(failure, request)
                if case .retry(let delay) = attempts.failed(
                    retryable: isRetryable(failure), replayable: route.body.isReplayable)
                {
                    backoff = delay
                    continue
                }
                throw failure
            }
            let duration = ContinuousClock.now - start
            for observer in observers { observer.didReceive(response, for: request, duration: duration) }
            if route.isAcceptable(status: response.status) { return (request, response) }
            if attempts.mayRefresh, let retrier {
                let again: Bool
                do {
                    again = try await retrier.shouldRetry(request, response: response)
                } catch {
                    let failure = APIError<R.ErrorModel>(
                        kind: .adapter, request: request, response: response, underlying: error)
                    notifyFailure(failure, request)
                    throw failure
                }
                if again, attempts.refreshing(replayable: route.body.isReplayable) == .refresh { continue }
                if again {
                    // A part read from an async sequence is gone: resending would send the form without it.
                    let model = try? (route.decoder ?? decoder).decode(R.ErrorModel.self, from: response.body, at: nil)
                    let unrepeatable = TrawlError(
                        code: .invalidRequest,
                        message: "the retrier asked to send the request again after HTTP \(response.status), "
                            + "but its body streams from an async sequence, which can be sent only once; "
                            + "it was not sent again",
                        hint: "append the part as bytes or a file (appendFile) so that it can be retried, or make "
                            + "sure the credentials are fresh before sending",
                        method: request.method.rawValue, url: request.url, status: response.status)
                    let failure = APIError<R.ErrorModel>(
                        kind: .status, request: request, response: response, errorModel: model,
                        underlying: unrepeatable)
                    notifyFailure(failure, request)
                    throw failure
                }
            }
            let model = try? (route.decoder ?? decoder).decode(R.ErrorModel.self, from: response.body, at: nil)
            let failure = APIError<R.ErrorModel>(kind: .status, request: request, response: response, errorModel: model)
            notifyFailure(failure, request)
            if case .retry(let delay) = attempts.failed(
                retryable: isRetryable(failure), replayable: route.body.isReplayable)
            {
                backoff = delay
                continue
            }
            throw failure
        }
    }

    /// Whether a failed attempt may pass if tried again (`retryPolicy`'s rule; `Attempts` counts them).
    private func isRetryable<Model>(_ failure: APIError<Model>) -> Bool {
        if let status = failure.status { return RetryPolicy.isRetryable(status: status) }
        return failure.underlying.map(retryPolicy.isRetryable) ?? false
    }

    /// Builds the route's request and runs the adapter chain and the route's last-chance hook over it.
    func prepare<R: Route>(_ route: R, attempt: Int) async throws -> Request {
        var request: Request
        do {
            request = try self.request(for: route)
        } catch {
            let placeholder = Request(url: route.baseURL ?? baseURL, method: route.method)
            let failure = APIError<R.ErrorModel>(
                kind: .invalidRoute, request: placeholder, underlying: error)
            notifyFailure(failure, placeholder)
            throw failure
        }
        // The client strips these on redirects anyway; on the request, observers and errors hide them too.
        request.sensitiveHeaders.formUnion(client.configuration.sensitiveHeaders)
        var context = AdapterContext(authentication: route.authentication, attempt: attempt)
        do {
            for adapter in adapters {
                try await adapter.adapt(&request, context: &context)
            }
            try route.adjust(&request)
        } catch {
            let failure = APIError<R.ErrorModel>(kind: .adapter, request: request, underlying: error)
            notifyFailure(failure, request)
            throw failure
        }
        if route.authentication == .required, !context.credentialsApplied {
            let failure = APIError<R.ErrorModel>(kind: .authenticationRequired, request: request)
            notifyFailure(failure, request)
            throw failure
        }
        return request
    }

    private func perform(_ request: Request, route: some Route) async throws -> RawResponse {
        switch route.stubbing ?? stubbing {
        case .never:
            return try await revalidating(request)
        case .whenAvailable:
            guard let stub = route.stub else { return try await revalidating(request) }
            return try await serve(stub, request)
        case .always:
            guard let stub = route.stub else {
                throw TrawlError(
                    code: .invalidRequest, message: "stubbing is on and the route has no stub",
                    method: request.method.rawValue, url: request.url)
            }
            return try await serve(stub, request)
        }
    }

    private func serve(_ stub: Stub, _ request: Request) async throws -> RawResponse {
        let stub = stub.resolved(for: request)
        if let delay = stub.delay { try await Task.sleep(for: delay) }
        if let error = stub.error { throw error }
        return RawResponse(status: stub.status, headers: stub.headers, url: request.url, body: stub.body, isStub: true)
    }

    private func notifyFailure(_ error: any Error, _ request: Request) {
        for observer in observers { observer.didFail(error, for: request) }
    }
}
