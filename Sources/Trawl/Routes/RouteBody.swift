import Foundation

/// What a route sends as its body.
///
/// ```swift
/// struct NewIssue: Encodable { let title: String }
/// var body: RouteBody { .json(NewIssue(title: "Crash")) }
/// var body: RouteBody { .form(["grant_type": "client_credentials"]) }
/// var body: RouteBody { .multipart(form) }
/// var body: RouteBody { .raw(bytes, contentType: "application/octet-stream") }
/// ```
public struct RouteBody: Sendable {
    enum Storage: Sendable {
        case none
        case json(any Encodable & Sendable, encoder: (@Sendable () -> JSONEncoder)?)
        case form(QueryParameters)
        case multipart(MultipartForm)
        case raw(RequestBody)
    }

    let storage: Storage

    /// No body (parameters may still go into one; see `Route.parameterEncoding`).
    public static let none = RouteBody(storage: .none)

    /// A value encoded as JSON, with the API's encoder unless `encoder` makes one.
    public static func json(
        _ value: some Encodable & Sendable, encoder: (@Sendable () -> JSONEncoder)? = nil
    ) -> RouteBody {
        RouteBody(storage: .json(value, encoder: encoder))
    }

    /// Parameters as `application/x-www-form-urlencoded`, in order.
    public static func form(_ parameters: QueryParameters) -> RouteBody {
        RouteBody(storage: .form(parameters))
    }

    /// Multipart form data; files are streamed from disk as the body is sent.
    public static func multipart(_ form: MultipartForm) -> RouteBody {
        RouteBody(storage: .multipart(form))
    }

    /// Bytes sent as they are, labelled with `contentType`.
    public static func raw(_ bytes: [UInt8], contentType: String) -> RouteBody {
        RouteBody(storage: .raw(.bytes(bytes, contentType: contentType)))
    }

    /// Any engine body (a file, a stream) sent as it is.
    public static func raw(_ body: RequestBody) -> RouteBody {
        RouteBody(storage: .raw(body))
    }

    var isNone: Bool {
        if case .none = storage { return true }
        return false
    }

    /// Whether the body can be built and sent again, for a retry: not when it reads an async sequence, which
    /// can be read only once.
    public var isReplayable: Bool {
        switch storage {
        case .none, .json, .form: true
        case .multipart(let form): form.isReplayable
        case .raw(let body): body.isReplayable
        }
    }
}

/// Where `Route.parameters` go.
///
/// ```swift
/// var parameterEncoding: ParameterEncoding { .form }   // send them as a form body even on PATCH
/// ```
public enum ParameterEncoding: Sendable, Hashable {
    /// Into the query for GET, HEAD and DELETE (or when the route has a body); a JSON object otherwise.
    case automatic
    case query
    case json
    case form
}
