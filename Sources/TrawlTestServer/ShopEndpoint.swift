import NIOHTTP1

/// `/shop/…`: a small shop API behind OAuth 2.0 client credentials, for trying a daily job against `trawl serve`
/// (docs/daily-job.yaml):
///
/// - `POST /shop/token`: the client-credentials grant for ``TestServer/shopClientID`` and
///   ``TestServer/shopClientSecret`` (HTTP Basic or in the form body):
///   `{"access_token":"…","token_type":"Bearer","expires_in":3600}`; a wrong client gets 401 `invalid_client`.
/// - Every other path needs `Authorization: Bearer TOKEN` with a token issued here and not expired, else 401
///   `invalid_token` with `WWW-Authenticate`:
///   - `GET /shop/customers?page=P&per_page=K`: ``TestServer/shopCustomers``, K a page (default 10, at most 100):
///     `{"customers":[…],"page":P,"total_pages":T}`;
///   - `GET /shop/customers/ID/orders?page=P&per_page=K`: ``TestServer/shopOrders(customer:)``, a bare array with
///     `Link: <…page=P+1…>; rel="next"` while more follow; an unknown customer is 404;
///   - `GET /shop/feed/NAME?…`: the items of `/feed/NAME` (the same feed), paged by `seq` (``FeedEndpoint``).
enum ShopEndpoint {
    static let tokenLifetime = 3600
    static let customerCount = 40
    private static let companies = ["Acme", "Globex", "Initech", "Umbrella", "Hooli", "Vandelay", "Soylent", "Wonka"]
    private static let forms = [("Ltd", "GB"), ("GmbH", "DE"), ("SA", "FR"), ("Inc", "US"), ("KK", "JP")]
    private static let statuses = ["paid", "shipped", "delivered"]

    static func response(for request: InboundRequest, book: RequestBook) -> Response {
        let segments = request.target.segments
        let resource = segments.dropFirst().first ?? ""
        if segments.count == 2, resource == "token" { return token(request, book: book) }
        if let refusal = refusal(of: request, book: book) { return refusal }
        let perPage = min(100, max(1, request.target.int("per_page") ?? 10))
        let page = max(1, request.target.int("page") ?? 1)
        switch (segments.count, resource) {
        case (2, "customers"):
            let start = min(customerCount, (page - 1) * perPage)
            let items = (start..<min(customerCount, start + perPage)).map { customer($0 + 1) }
            return .json(200, JSONText.object([
                ("customers", "[" + items.joined(separator: ",") + "]"), ("page", String(page)),
                ("total_pages", String((customerCount + perPage - 1) / perPage)),
            ]))
        case (4, "customers") where segments[3] == "orders":
            guard let id = Int(segments[2]), (1...customerCount).contains(id) else {
                return .error(404, "no such customer", [("path", JSONText.string(request.target.path))])
            }
            let all = orders(id)
            let start = min(all.count, (page - 1) * perPage)
            var headers: [(String, String)] = []
            if start + perPage < all.count { headers.append(request.nextLink(setting: "page", to: page + 1)) }
            let slice = all[start..<min(all.count, start + perPage)]
            return .json(200, "[" + slice.joined(separator: ",") + "]", headers: headers)
        case (3, "feed"):
            return FeedEndpoint.response(for: request, name: segments[2], book: book, pagingBySeq: true)
        default:
            return .error(404, "not found", [("path", JSONText.string(request.target.path))])
        }
    }

    /// Customer `id` (from 1): `{"id":7,"name":"Soylent Ltd","country":"GB"}`.
    static func customer(_ id: Int) -> String {
        let form = forms[(id - 1) / companies.count % forms.count]
        let name = companies[(id - 1) % companies.count] + " " + form.0
        return JSONText.object([
            ("id", String(id)), ("name", JSONText.string(name)), ("country", JSONText.string(form.1)),
        ])
    }

    /// The orders of customer `id`: `(id * 3) % 7` of them (none for some customers, up to 6),
    /// `{"id":701,"customer_id":7,"total_cents":1999,"status":"paid"}`.
    static func orders(_ id: Int) -> [String] {
        (1..<(1 + id * 3 % 7)).map { k in
            JSONText.object([
                ("id", String(id * 100 + k)), ("customer_id", String(id)),
                ("total_cents", String(500 + (id * 7919 + k * 104_729) % 9500)),
                ("status", JSONText.string(statuses[(id + k) % statuses.count])),
            ])
        }
    }

    private static func token(_ request: InboundRequest, book: RequestBook) -> Response {
        guard request.head.method == .POST else {
            return .error(405, "use POST with grant_type=client_credentials", [], headers: [("Allow", "POST")])
        }
        let form = TokenRequest(request)
        guard form.field("grant_type") == "client_credentials" else {
            return .json(400, JSONText.object([("error", JSONText.string("unsupported_grant_type"))]))
        }
        guard let client = form.client, client.id == TestServer.shopClientID,
            client.secret == TestServer.shopClientSecret
        else {
            return .json(
                401,
                JSONText.object([
                    ("error", JSONText.string("invalid_client")),
                    ("error_description", JSONText.string("the demo client is demo / demo-secret")),
                ]),
                headers: [("WWW-Authenticate", "Basic realm=\"shop\"")])
        }
        var generator = SystemRandomNumberGenerator()
        let token = "demo-" + String(generator.next() as UInt64, radix: 16)
        let now = ContinuousClock.now
        book.shopTokens.withLock { tokens in
            tokens = tokens.filter { $0.value > now }
            tokens[token] = now + .seconds(tokenLifetime)
        }
        return .json(
            200,
            JSONText.object([
                ("access_token", JSONText.string(token)), ("token_type", JSONText.string("Bearer")),
                ("expires_in", String(tokenLifetime)),
            ]),
            headers: [("Cache-Control", "no-store")])
    }

    /// 401 unless the request carries a bearer token issued by `/shop/token` that has not expired.
    private static func refusal(of request: InboundRequest, book: RequestBook) -> Response? {
        guard let header = request.head.headers["Authorization"].first, header.hasPrefix("Bearer ") else {
            return .error(
                401, "invalid_token", [("error_description", JSONText.string("POST /shop/token for a token"))],
                headers: [("WWW-Authenticate", "Bearer realm=\"shop\"")])
        }
        let token = String(header.dropFirst(7))
        let now = ContinuousClock.now
        guard let expiry = book.shopTokens.withLock({ $0[token] }), expiry > now else {
            return .error(
                401, "invalid_token", [("error_description", JSONText.string("unknown or expired token"))],
                headers: [("WWW-Authenticate", "Bearer realm=\"shop\", error=\"invalid_token\"")])
        }
        return nil
    }
}

extension TestServer {
    /// The client id `/shop/token` accepts: `demo`.
    public static let shopClientID = "demo"
    /// The client secret `/shop/token` accepts: `demo-secret`.
    public static let shopClientSecret = "demo-secret"

    /// The items of `/shop/customers`, in order, as compact JSON (as `trawl fetch` writes them).
    ///
    /// ```swift
    /// TestServer.shopCustomers[0]   // {"id":1,"name":"Acme Ltd","country":"GB"}
    /// ```
    public static var shopCustomers: [String] {
        (1...ShopEndpoint.customerCount).map(ShopEndpoint.customer)
    }

    /// The items of `/shop/customers/ID/orders` for customer `id`, in order, as compact JSON (empty for an
    /// unknown customer).
    ///
    /// ```swift
    /// TestServer.shopOrders(customer: 1)   // [{"id":101,"customer_id":1,"total_cents":…,"status":"shipped"}, …]
    /// ```
    public static func shopOrders(customer id: Int) -> [String] {
        (1...ShopEndpoint.customerCount).contains(id) ? ShopEndpoint.orders(id) : []
    }
}
