import Testing
import TrawlTestSupport
import Trawl
import TrawlTestServer

/// A whole API given once through a refining protocol: base URL, headers, error model.
protocol ShopRoute: Route where ErrorModel == ShopError {}

struct ShopError: Decodable, Sendable, Equatable {
    let status: Int
}

extension ShopRoute {
    var headers: HTTPHeaders { ["X-Shop": "1"] }
}

/// An enum of routes with associated values.
enum Shop: ShopRoute {
    typealias Output = JSONValue

    case listing
    case item(name: String)
    case missing

    var path: RoutePath {
        switch self {
        case .listing: return "json/small"
        case .item(let name): return "echo/\(name)"
        case .missing: return "status/404"
        }
    }

    var keyPath: JSONKeyPath? {
        switch self {
        case .listing: return "items.1.name"
        case .item, .missing: return nil
        }
    }
}

@Suite("API-wide settings", .hangGuard)
struct APIProtocolTests {
    @Test func anEnumOfRoutesSharesTheAPIsSettings() async throws {
        try await withServer { server in
            let api = api(server)
            let name = try await api.send(Shop.listing)
            #expect(name == "buoy")
            let request = try api.request(for: Shop.item(name: "a b/c"))
            #expect(request.url == server.url("/echo/a%20b%2Fc"))
            #expect(request.headers["X-Shop"] == "1")
            let error = await expectAPIError(ShopError.self, .status) { _ = try await api.send(Shop.missing) }
            #expect(error?.errorModel == ShopError(status: 404))
        }
    }
}
