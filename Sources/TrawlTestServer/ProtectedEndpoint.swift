/// `/protected?token=T`: `{"ok":true}` when the request carries `Authorization: Bearer T`, else 401 with
/// `{"error":"bad credentials","code":"E401"}` (for auth refresh-and-retry tests).
enum ProtectedEndpoint {
    static func response(for request: InboundRequest) -> Response {
        let expected = "Bearer " + (request.target.value("token") ?? "")
        guard request.head.headers["Authorization"].first == expected else {
            return .error(401, "bad credentials", [("code", JSONText.string("E401"))])
        }
        return .json(200, JSONText.object([("ok", "true")]))
    }
}
