import Trawl
import Yams

/// A job's `auth:` (in `settings:` for every source, or in a source, which then uses its own): OAuth 2.0 client
/// credentials. Every value may hold `${NAME}` environment references (secrets: never stored or printed).
///
/// ```yaml
/// auth:
///   type: oauth2_client_credentials
///   token_url: https://auth.example.com/oauth/token    # https (http only on localhost)
///   client_id: ${CLIENT_ID}
///   client_secret: ${CLIENT_SECRET}
///   scope: "read:items"                               # optional
///   client_auth: basic                                 # basic (default) or post
/// ```
public struct JobAuth: Sendable, Hashable {
    public var tokenURL: String
    public var clientID: String
    public var clientSecret: String
    public var scope: String?
    public var clientAuthentication: OAuth2ClientCredentialsAdapter.ClientAuthentication

    public init(
        tokenURL: String, clientID: String, clientSecret: String, scope: String? = nil,
        clientAuthentication: OAuth2ClientCredentialsAdapter.ClientAuthentication = .basic
    ) {
        self.tokenURL = tokenURL
        self.clientID = clientID
        self.clientSecret = clientSecret
        self.scope = scope
        self.clientAuthentication = clientAuthentication
    }

    /// The templates, by key.
    var templates: [(key: String, text: String)] {
        [("token_url", tokenURL), ("client_id", clientID), ("client_secret", clientSecret)]
            + (scope.map { [("scope", $0)] } ?? [])
    }

    /// The values with `${NAME}` expanded (secrets: never persist them); the token URL checked.
    func resolved(environment: [String: String], field: String) throws(JobSpecError) -> JobAuth {
        var values: [String: String] = [:]
        for (key, text) in templates {
            do {
                values[key] = try JobTemplate(parsing: text).expand(
                    parameters: [:], environment: environment, encodingParameters: false)
            } catch {
                var error = error
                error.field = "\(field).\(key)"
                throw error
            }
        }
        let url = values["token_url"] ?? tokenURL
        if let problem = OAuth2ClientCredentialsAdapter.tokenURLProblem(url) {
            throw JobSpecError(
                field: "\(field).token_url", problem,
                hint: "the token endpoint receives the client secret: use https (http only on localhost)")
        }
        return JobAuth(
            tokenURL: url, clientID: values["client_id"] ?? "", clientSecret: values["client_secret"] ?? "",
            scope: values["scope"], clientAuthentication: clientAuthentication)
    }
}

extension JobSource {
    /// The auth this source's units use, expanded: its own `auth:`, else the job's.
    func resolvedAuth(settings: JobSettings, environment: [String: String], field: String)
        throws(JobSpecError) -> JobAuth?
    {
        if let auth { return try auth.resolved(environment: environment, field: "\(field).auth") }
        return try settings.auth?.resolved(environment: environment, field: "settings.auth")
    }
}

extension Job {
    /// The texts of every `auth:` (their `${NAME}` references are secrets too).
    var authTemplateTexts: [String] {
        ([settings.auth] + sources.map(\.auth)).compactMap { $0 }.flatMap { $0.templates.map(\.text) }
    }
}

extension JobFileReader {
    static let authKeys = ["type", "token_url", "client_id", "client_secret", "scope", "client_auth"]

    func auth(_ node: Node, _ field: String) throws(JobFileError) -> JobAuth {
        let fields = try mapping(node, field, allowed: Self.authKeys)
        func required(_ key: String, _ example: String) throws(JobFileError) -> (String, Node) {
            guard let value = fields[key]?.value else {
                throw error(node, field, "\(key) is missing", hint: "add \(key):, as in \(key): \(example)")
            }
            return (try string(value, "\(field).\(key)"), value)
        }
        let (type, typeNode) = try required("type", "oauth2_client_credentials")
        guard type == "oauth2_client_credentials" else {
            throw error(
                typeNode, "\(field).type", "unknown auth type '\(type)'",
                hint: "the supported type is oauth2_client_credentials (for a static token, use headers:)")
        }
        let (tokenURL, urlNode) = try required("token_url", "https://auth.example.com/oauth/token")
        let (clientID, idNode) = try required("client_id", "${CLIENT_ID}")
        let (clientSecret, secretNode) = try required("client_secret", "${CLIENT_SECRET}")
        var auth = JobAuth(tokenURL: tokenURL, clientID: clientID, clientSecret: clientSecret)
        var nodes: [String: Node] = ["token_url": urlNode, "client_id": idNode, "client_secret": secretNode]
        if let value = fields["scope"]?.value {
            auth.scope = try string(value, "\(field).scope")
            nodes["scope"] = value
        }
        if let value = fields["client_auth"]?.value {
            let text = try string(value, "\(field).client_auth")
            guard let method = OAuth2ClientCredentialsAdapter.ClientAuthentication(rawValue: text) else {
                throw error(
                    value, "\(field).client_auth", "unknown client_auth '\(text)'",
                    hint: "basic (HTTP Basic, the default) or post (client_id and client_secret in the form body)")
            }
            auth.clientAuthentication = method
        }
        for (key, text) in auth.templates {
            let at = nodes[key] ?? node
            let template: JobTemplate
            do {
                template = try JobTemplate(parsing: text)
            } catch {
                throw self.error(at, "\(field).\(key)", error.message, hint: error.hint, code: error.code)
            }
            if let parameter = template.parameters.first {
                throw self.error(
                    at, "\(field).\(key)", "'{\(parameter)}' cannot be used in auth:",
                    hint: "auth: takes literal text and ${NAME} environment variables only")
            }
            for name in template.environmentNames where environment[name] == nil {
                throw self.error(
                    at, "\(field).\(key)", "environment variable \(name) is not set",
                    hint: "export \(name) before running the job")
            }
            if key == "token_url", template.environmentNames.isEmpty,
                let problem = OAuth2ClientCredentialsAdapter.tokenURLProblem(text)
            {
                throw self.error(
                    at, "\(field).token_url", problem,
                    hint: "the token endpoint receives the client secret: use https (http only on localhost)")
            }
        }
        return auth
    }
}
