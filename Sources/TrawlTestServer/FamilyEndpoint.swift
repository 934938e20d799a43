/// Parents and children for dependent-source tests:
///
/// - `GET /family/list?items=JSON[&per_page=K][&page=P]`: the JSON array given (percent-encoded), K per page:
///   `{"items":[…],"total_pages":T}`.
/// - `GET /family/kids/SEGMENT?n=N[&per_page=K][&page=P][&delay=MS][&fail=SEGMENT]`: N children of the path
///   segment as received (not decoded): `{"items":[{"parent":"SEGMENT","k":I},…],"total_pages":T}`; 503 for the
///   segment named by `fail`. Any other path under `/family/` is 404, so a value that changed the path shows.
enum FamilyEndpoint {
    static func response(for request: InboundRequest) -> Response {
        let target = request.target
        let segments = target.segments
        let perPage = max(1, target.int("per_page") ?? 10)
        let page = max(1, target.int("page") ?? 1)
        var response: Response
        switch (segments.count, segments.dropFirst().first ?? "") {
        case (2, "list"):
            let items = elements(of: target.value("items") ?? "[]")
            response = paged(items, page: page, perPage: perPage)
        case (3, "kids"):
            let parent = String(segments[2])
            if target.value("fail") == parent { return .error(503, "failing child", []) }
            let count = max(0, target.int("n") ?? 3)
            let items = (0..<count).map { JSONText.object([("parent", JSONText.string(parent)), ("k", String($0))]) }
            response = paged(items, page: page, perPage: perPage)
        default:
            return .error(404, "not found", [("path", JSONText.string(target.path))])
        }
        if let delay = target.int("delay") { response.delay = .milliseconds(Int64(delay)) }
        return response
    }

    private static func paged(_ items: [String], page: Int, perPage: Int) -> Response {
        let start = min(items.count, (page - 1) * perPage)
        let slice = items[start..<min(items.count, start + perPage)]
        let pages = (items.count + perPage - 1) / perPage
        let body = JSONText.object([
            ("items", "[" + slice.joined(separator: ",") + "]"), ("total_pages", String(pages)),
        ])
        return .json(200, body)
    }

    /// The elements of a JSON array's text, each as written (no validation beyond brackets and strings).
    static func elements(of text: String) -> [String] {
        var elements: [String] = []
        var current = ""
        var depth = 0
        var inString = false
        var escaped = false
        for character in text {
            if inString {
                current.append(character)
                if escaped { escaped = false } else if character == "\\" { escaped = true } else if character == "\"" {
                    inString = false
                }
                continue
            }
            switch character {
            case "\"": inString = true; current.append(character)
            case "[", "{":
                depth += 1
                if depth > 1 { current.append(character) }
            case "]", "}":
                depth -= 1
                if depth >= 1 { current.append(character) }
            case "," where depth == 1:
                elements.append(current)
                current = ""
            case " ", "\n", "\t", "\r": if depth > 1 { current.append(character) }
            default: current.append(character)
            }
        }
        if !current.isEmpty { elements.append(current) }
        return elements
    }
}
