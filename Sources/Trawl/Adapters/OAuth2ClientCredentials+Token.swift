import Foundation
import TrawlEngine

extension OAuth2ClientCredentialsAdapter {
    /// The most bytes of a token response read.
    static let tokenResponseLimit = 64 << 10

    /// The token request of RFC 6749 §4.4.2: a form POST with `grant_type=client_credentials` (and `scope`), the
    /// client authenticated as `clientAuthentication` says; no redirect is followed.
    func tokenRequest() -> Request {
        var form = "grant_type=client_credentials"
        if let scope, !scope.isEmpty { form += "&scope=" + PercentEncoding.formComponent(scope) }
        var request = Request(url: tokenURL, method: .post)
        request.headers["Accept"] = "application/json"
        switch clientAuthentication {
        case .basic:
            // §2.3.1: the id and secret are form-encoded before they are joined and base64-encoded.
            let pair = PercentEncoding.formComponent(clientID) + ":" + PercentEncoding.formComponent(secret)
            request.headers["Authorization"] = "Basic " + Base64.encode(Array(pair.utf8))
        case .post:
            form += "&client_id=" + PercentEncoding.formComponent(clientID)
            form += "&client_secret=" + PercentEncoding.formComponent(secret)
        }
        request.body = .string(form, contentType: "application/x-www-form-urlencoded")
        request.redirects = RedirectPolicy.none
        request.maxBodySize = Self.tokenResponseLimit
        request.sensitiveQueryParameters = ["client_secret"]
        return request
    }

    /// Sends the token request and reads the token. Throws `TrawlError`: a 4xx (the refusal, with the server's
    /// `error` code and description), a 5xx or a transport failure (retryable), a body without `access_token`.
    func requestToken() async throws -> Token {
        let request = tokenRequest()
        let shownURL = Redaction.url(tokenURL, names: Redaction.defaultQueryNames)
        let response: Response
        do {
            response = try await client.send(request)
        } catch var error as TrawlError {
            error.message = "the OAuth2 token request failed: \(error.message)"
            error.url = shownURL
            if error.code == .tooLarge {
                // Not a page: the hint about page sizes does not apply, and libcurl's write failure says nothing.
                error.message = "the OAuth2 token response is over \(Self.tokenResponseLimit / 1024) KB"
                error.hint = "check token_url: a token response is a small JSON object (RFC 6749 §5.1)"
                error.curlCode = nil
                error.curlMessage = nil
            }
            throw error
        }
        let sentAt = ContinuousClock.now
        guard (200..<300).contains(response.status) else {
            throw refusal(response, url: shownURL)
        }
        let object = try? JSONSerialization.jsonObject(with: Data(response.body))
        let fields = object as? [String: Any] ?? [:]
        guard let token = fields["access_token"] as? String, !token.isEmpty else {
            throw TrawlError(
                code: .invalidBody,
                message: object == nil ? "the OAuth2 token response is not JSON"
                    : "the OAuth2 token response has no access_token",
                hint: "check token_url: it should answer a JSON object with access_token (RFC 6749 §5.1)",
                method: "POST", url: shownURL, status: response.status)
        }
        if let type = fields["token_type"] as? String, type.lowercased() != "bearer" {
            throw TrawlError(
                code: .invalidBody, message: "the OAuth2 token is of type '\(Self.shown(type))', not Bearer",
                hint: "only bearer tokens are supported", method: "POST", url: shownURL, status: response.status)
        }
        var lifetime: Double?
        if let number = fields["expires_in"] as? NSNumber { lifetime = number.doubleValue }
        if let text = fields["expires_in"] as? String { lifetime = Double(text) }
        var renewAt: ContinuousClock.Instant?
        if let lifetime, lifetime.isFinite, lifetime > 0 {
            let seconds = min(lifetime, 10 * 365 * 86_400)
            let margin = min(refreshMargin, .seconds(seconds / 2))
            renewAt = sentAt + .seconds(seconds) - margin
        }
        return Token(value: token, renewAt: renewAt)
    }

    /// The error for a token response that is not 2xx: the RFC 6749 §5.2 `error` and `error_description`
    /// (shortened, control characters dropped, the secret hidden), and what to check.
    private func refusal(_ response: Response, url: String) -> TrawlError {
        let fields = (try? JSONSerialization.jsonObject(with: Data(response.body))) as? [String: Any] ?? [:]
        let code = (fields["error"] as? String).map(Self.shown)
        let description = (fields["error_description"] as? String).map(Self.shown)
        var message = "the OAuth2 token request was refused: HTTP \(response.status)"
        if let code { message += " \(code)" }
        if let description { message += " (\(description))" }
        let hint: String
        switch code {
        case "invalid_client"?:
            hint = "check client_id and client_secret, and client_auth (basic or post) for this server"
        case "invalid_scope"?: hint = "check scope"
        case "unauthorized_client"?: hint = "the client may not use the client_credentials grant"
        case "invalid_grant"?, "unsupported_grant_type"?:
            hint = "the server does not accept client_credentials from this client"
        default:
            hint = (300..<400).contains(response.status)
                ? "token_url redirects; redirects are not followed (the client credentials go to token_url only): "
                    + "write the final URL"
                : "check token_url and the client credentials"
        }
        return TrawlError(
            code: .unexpectedStatus, message: redact(message), hint: hint, method: "POST", url: url,
            status: response.status)
    }

    /// Text from the token endpoint as it may be shown: printable, at most 200 characters.
    static func shown(_ text: String) -> String {
        let printable = String(text.unicodeScalars.filter { $0.value >= 0x20 && $0.value != 0x7F }.map(Character.init))
        return printable.count > 200 ? String(printable.prefix(200)) + "…" : printable
    }
}
