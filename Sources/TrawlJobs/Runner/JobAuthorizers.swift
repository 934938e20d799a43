import Trawl
import TrawlEngine

/// The OAuth2 adapters of a job run: one per distinct `auth:`, shared by every unit that uses it, so that one
/// token request serves all their pages in flight.
struct JobAuthorizers: Sendable {
    private let adapters: [JobAuth: Result<OAuth2ClientCredentialsAdapter, TrawlError>]

    init(units: [WorkUnit], client: Client) {
        var adapters: [JobAuth: Result<OAuth2ClientCredentialsAdapter, TrawlError>] = [:]
        for auth in Set(units.compactMap(\.auth)) {
            do {
                adapters[auth] = .success(try OAuth2ClientCredentialsAdapter(
                    tokenURL: auth.tokenURL, clientID: auth.clientID, clientSecret: auth.clientSecret,
                    scope: auth.scope, clientAuthentication: auth.clientAuthentication, client: client))
            } catch let error as TrawlError {
                adapters[auth] = .failure(error)
            } catch {
                adapters[auth] = .failure(TrawlError(
                    code: .invalidRequest, message: "\(error)", method: "POST", url: auth.tokenURL))
            }
        }
        self.adapters = adapters
    }

    func authorizer(for unit: WorkUnit) -> PageAuthorizer? {
        unit.auth.flatMap { adapters[$0] }.map(PageAuthorizer.init)
    }

    /// `text` with every token handed out (and every client secret) replaced by `REDACTED`.
    func redact(_ text: String) -> String {
        adapters.values.reduce(text) { text, adapter in (try? adapter.get().redact(text)) ?? text }
    }
}

/// Adds a unit's bearer token to each of its page requests (not to a page the origin guard stripped of
/// credentials: one on another origin), and asks for a new token once when a page is answered 401.
struct PageAuthorizer: Sendable {
    let adapter: Result<OAuth2ClientCredentialsAdapter, TrawlError>

    /// What the tokens stand for, stable across runs (the cache keys stored pages by it, not by the token).
    var principal: String? { try? adapter.get().principal }

    func authorize(_ request: Request) async throws -> Request {
        guard !request.strippedHeaders.contains("authorization") else { return request }
        var request = request
        request.headers["Authorization"] = "Bearer \(try await adapter.get().token())"
        return request
    }

    func shouldRefresh(_ request: Request, _ response: RawResponse) async throws -> Bool {
        try await adapter.get().shouldRetry(request, response: response)
    }
}

extension PageLinesReader {
    /// The reader with `authorizer` adding the token to every attempt (a refresh after a 401 included).
    func authorized(by authorizer: PageAuthorizer?) -> PageLinesReader {
        guard let authorizer else { return self }
        var reader = self
        reader.exchange.shouldRefresh = { request, response in try await authorizer.shouldRefresh(request, response) }
        reader.exchange.prepare = { request, _ in try await authorizer.authorize(request) }
        reader.exchange.cachePrincipal = authorizer.principal
        reader.authorizer = authorizer
        return reader
    }

    /// `page` with its token, or the page's failure when no token could be had.
    func authorize(_ page: PageRequest, index: Int) async throws(PaginationError) -> PageRequest {
        guard let authorizer else { return page }
        do {
            return PageRequest(request: try await authorizer.authorize(page.request), position: page.position)
        } catch {
            throw exchange.failure(.adapter, page: page, request: page.request, index: index, error: error)
        }
    }
}
