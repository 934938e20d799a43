import Foundation
import NIOCore
import Synchronization

/// An OAuth 2.0 client-credentials server for tests, its state kept per `realm` (a name each test picks):
///
/// - `POST /oauth/token?realm=R&id=ID&secret=S[&ttl=SEC][&delay_ms=D]`: checks `grant_type=client_credentials`
///   and the client (HTTP Basic, or `client_id`/`client_secret` in the form body), then answers
///   `{"access_token":"R-N","token_type":"Bearer","expires_in":SEC}` after D ms; a wrong client gets 401
///   `{"error":"invalid_client",…}`.
/// - `GET /oauth/items?realm=R[&uses=K]&n=N&per_page=P&page=X`: `/paged/page` for a bearer token the realm issued
///   (each token good for K requests), else 401.
/// - `GET /oauth/stats?realm=R`: `{"token_requests":N,"auth":["basic"|"post",…],"scopes":[…],"rejected":M}`.
enum OAuthEndpoint {
    struct Realm {
        var tokenRequests = 0
        var auth: [String] = []
        var scopes: [String] = []
        var uses: [String: Int] = [:]
        var rejected = 0
    }

    static let realms = Mutex<[String: Realm]>([:])

    static func response(for request: InboundRequest, book: RequestBook) -> Response {
        let target = request.target
        let realm = target.value("realm") ?? ""
        switch target.path {
        case "/oauth/token": return token(request, realm: realm)
        case "/oauth/items": return items(request, realm: realm, book: book)
        case "/oauth/stats":
            let state = realms.withLock { $0[realm] } ?? Realm()
            return .json(200, JSONText.object([
                ("token_requests", String(state.tokenRequests)),
                ("auth", "[" + state.auth.map(JSONText.string).joined(separator: ",") + "]"),
                ("scopes", "[" + state.scopes.map(JSONText.string).joined(separator: ",") + "]"),
                ("rejected", String(state.rejected)),
            ]))
        default: return .error(404, "not found", [("path", JSONText.string(target.path))])
        }
    }

    private static func token(_ request: InboundRequest, realm: String) -> Response {
        let target = request.target
        let form = TokenRequest(request)
        let issued: String? = realms.withLock { realms in
            var state = realms[realm] ?? Realm()
            defer { realms[realm] = state }
            state.tokenRequests += 1
            state.auth.append(form.method)
            state.scopes.append(form.field("scope") ?? "")
            guard form.field("grant_type") == "client_credentials", let client = form.client,
                client.id == target.value("id"), client.secret == target.value("secret")
            else { return nil }
            let token = "\(realm)-\(state.tokenRequests)"
            state.uses[token] = 0
            return token
        }
        var response: Response
        if let issued {
            var fields = [
                ("access_token", JSONText.string(issued)), ("token_type", JSONText.string("Bearer")),
            ]
            if let ttl = target.int("ttl") { fields.append(("expires_in", String(ttl))) }
            response = .json(200, JSONText.object(fields), headers: [("Cache-Control", "no-store")])
        } else if form.field("grant_type") != "client_credentials" {
            response = .json(400, JSONText.object([("error", JSONText.string("unsupported_grant_type"))]))
        } else {
            response = .json(401, JSONText.object([
                ("error", JSONText.string("invalid_client")),
                ("error_description", JSONText.string("Client authentication failed")),
            ]))
        }
        if let delay = target.int("delay_ms") { response.delay = .milliseconds(Int64(delay)) }
        return response
    }

    private static func items(_ request: InboundRequest, realm: String, book: RequestBook) -> Response {
        let header = request.head.headers["Authorization"].first ?? ""
        let limit = request.target.int("uses") ?? Int.max
        let allowed = realms.withLock { realms -> Bool in
            guard header.hasPrefix("Bearer "), var state = realms[realm] else { return false }
            defer { realms[realm] = state }
            let token = String(header.dropFirst(7))
            guard let used = state.uses[token], used < limit else {
                state.rejected += 1
                return false
            }
            state.uses[token] = used + 1
            return true
        }
        guard allowed else {
            return .json(
                401, JSONText.object([("error", JSONText.string("invalid_token"))]),
                headers: [("WWW-Authenticate", "Bearer error=\"invalid_token\"")])
        }
        return PaginatedAPI.response(for: request, style: "page", book: book)
    }
}

/// What a client-credentials token request carries: its form fields, and the client, from HTTP Basic or from
/// `client_id`/`client_secret` in the form (RFC 6749 §2.3.1).
struct TokenRequest {
    /// The form body's pairs, `+` read as a space and then percent-decoded.
    let form: [[String]]
    let client: (id: String, secret: String)?
    /// How the client authenticated: `basic`, `post` or `none`.
    let method: String

    init(_ request: InboundRequest) {
        let form = String(buffer: request.body).split(separator: "&").map { pair in
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            return parts.map { Self.decoded($0) }
        }
        self.form = form
        func field(_ name: String) -> String? { form.first { $0.first == name && $0.count == 2 }?[1] }
        if let header = request.head.headers["Authorization"].first, header.hasPrefix("Basic "),
            let data = Data(base64Encoded: String(header.dropFirst(6))), let pair = String(data: data, encoding: .utf8),
            let colon = pair.firstIndex(of: ":")
        {
            client = (Self.decoded(pair[..<colon]), Self.decoded(pair[pair.index(after: colon)...]))
            method = "basic"
        } else if let id = field("client_id"), let secret = field("client_secret") {
            client = (id, secret)
            method = "post"
        } else {
            client = nil
            method = "none"
        }
    }

    /// The value of the form field `name`, if sent once or more (the first).
    func field(_ name: String) -> String? {
        form.first { $0.first == name && $0.count == 2 }?[1]
    }

    private static func decoded(_ text: Substring) -> String {
        text.replacingOccurrences(of: "+", with: " ").removingPercentEncoding ?? String(text)
    }
}
