/// How an ``API`` fetches pages unless a call says otherwise.
///
/// ```swift
/// var api = API(baseURL: "https://api.example.com")
/// api.pagination = PaginationSettings(serial: true)             // this API asks for one page at a time
/// api.pagination.maxConcurrentPages = 2                        // or: at most two pages at once
/// for try await item in try await api.items(of: Things(), as: Thing.self, at: "items", style: .page()) {
///     print(item)
/// }
/// ```
public struct PaginationSettings: Sendable, Hashable {
    /// Fetch one page at a time for every paginated call on this API, even when a call passes `serial: false`.
    public var serial: Bool
    /// The most pages fetched at once when the total is known, unless a call passes its own.
    public var maxConcurrentPages: Int

    public init(serial: Bool = false, maxConcurrentPages: Int = 4) {
        self.serial = serial
        self.maxConcurrentPages = maxConcurrentPages
    }

    /// Whether a call fetches serially: the API's switch forces it, else the call's own choice.
    func serial(_ call: Bool?) -> Bool { serial || (call ?? false) }

    /// The concurrency limit of a call: its own, else the API's.
    func maxConcurrentPages(_ call: Int?) -> Int { call ?? maxConcurrentPages }
}
