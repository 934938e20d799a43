/// Watches requests go out and come back (a plugin). Every method has an empty default.
///
/// ```swift
/// struct Metrics: RequestObserver {
///     func didReceive(_ response: RawResponse, for request: Request, duration: Duration) {
///         histogram.record(duration, status: response.status)
///     }
/// }
/// api.observers = [LoggingObserver(logger: logger), Metrics()]
/// ```
public protocol RequestObserver: Sendable {
    /// Called after the adapters and the route's hook, just before sending.
    func willSend(_ request: Request)
    /// Called when a response (of any status) arrives.
    func didReceive(_ response: RawResponse, for request: Request, duration: Duration)
    /// Called when a request fails at any stage.
    func didFail(_ error: any Error, for request: Request)
}

extension RequestObserver {
    public func willSend(_ request: Request) {}
    public func didReceive(_ response: RawResponse, for request: Request, duration: Duration) {}
    public func didFail(_ error: any Error, for request: Request) {}
}
