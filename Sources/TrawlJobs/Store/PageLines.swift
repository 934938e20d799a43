import Foundation
import Trawl
import TrawlEngine
import TrawlJSON

/// One page fetched for a bulk job: its items as JSONL lines, ready to append.
struct PageLines: Sendable {
    var lines: [UInt8]
    var itemCount: Int
    var captured: [JSONKeyPath: JSONValue]
    var head: ResponseHead
    /// Body bytes received (decoded).
    var bodyBytes: Int
    var latency: Duration
    /// `scheme://host:port` of the request, set by the unit driver (which already knows it) for per-host counts.
    var host = ""
    /// For an incremental source: the items kept and the cursors read (`lines` holds only the kept items).
    var incremental: IncrementalWindow.Page?
    /// The server answered `304` and the stored page was used; `skipped` when its items were not written again.
    var notModified = false
    var skipped = false
    /// With a primary key: the items left once the keys already written are dropped (``DriftCheck``).
    var keptAfterDrift: Int?

    /// The items this page adds to the output.
    var writtenItems: Int { skipped ? 0 : keptAfterDrift ?? incremental?.kept ?? itemCount }
}

/// Turns the items of one page into JSONL lines as its body streams through the ``PageExchange``; a page is the
/// unit of atomicity, so its lines are held until the page ends (bounded by `maxPageBytes`).
struct PageLinesReader: Sendable {
    var exchange: PageExchange
    /// Adds the unit's OAuth2 token to each page (see `authorized(by:)`).
    var authorizer: PageAuthorizer?
    /// A child unit's `"_parent":{…}` member, put first in each item (`include_from_parent:`).
    var parentFields: [UInt8]?
    /// Each item is this member of the element read (`node` of a GraphQL edge).
    var itemMember: String?
    let maxPageBytes: Int
    /// `{"source":…,"unit":…,"page":N,"item":` when lines carry metadata.
    let metaPrefix: (@Sendable (Int) -> [UInt8])?
    /// Side fields written into each metadata line (`"side":{…}`), read from the page once it has ended.
    var side: [JSONKeyPath] = []
    /// An incremental source's window: items outside it, or written unchanged by an earlier run, are dropped.
    var window: IncrementalWindow?
    /// `on_not_modified: skip`: a page answered `304` writes no items.
    var skipNotModified = false

    init(
        client: Client, items: JSONKeyPath, capture: [JSONKeyPath], maxPageBytes: Int,
        metaPrefix: (@Sendable (Int) -> [UInt8])?
    ) {
        var exchange = PageExchange(client: client, itemsPath: items, capture: capture, form: .json)
        exchange.requiresArray = true
        self.exchange = exchange
        self.maxPageBytes = maxPageBytes
        self.metaPrefix = metaPrefix
    }

    func read(_ pageRequest: PageRequest, index: Int) async throws(PaginationError) -> PageLines {
        let start = ContinuousClock.now
        let page = try await exchange.open(try await authorize(pageRequest, index: index), index: index)
        var lines: [UInt8] = []
        while try await page.stepLines(
            into: &lines, limit: maxPageBytes, hint: "raise --max-page-bytes or ask for smaller pages")
        {}
        let response = try await page.readToEnd { _ in }  // the body has ended: the page as the strategy sees it
        let skipped = page.notModified && skipNotModified
        if skipped { lines = [] }
        if let itemMember {
            lines = try Self.members(itemMember, of: lines, request: pageRequest, index: index, url: page.head.url)
        }
        let incremental = try window.map { window throws(PaginationError) in
            try window.page(lines, request: pageRequest, index: index, url: page.head.url)
        }
        if let incremental { lines = incremental.lines }
        if let parentFields { lines = Self.addingParent(parentFields, to: lines) }
        if let metaPrefix {
            // Compact JSON has no raw newline inside a value: each one ends an item's line.
            let ends = lines.indices.filter { lines[$0] == UInt8(ascii: "\n") }
            lines = wrap(lines, ends: ends, prefix: metaPrefix(index), captured: response.captured)
        }
        return PageLines(
            lines: lines, itemCount: response.itemCount, captured: response.captured, head: page.head,
            bodyBytes: page.byteCount, latency: ContinuousClock.now - start, incremental: incremental,
            notModified: page.notModified, skipped: skipped)
    }

    /// Each line's member `name` (a GraphQL edge's `node`), one per line; an element without it fails the page.
    static func members(_ name: String, of lines: [UInt8], request: PageRequest, index: Int, url: String)
        throws(PaginationError) -> [UInt8]
    {
        var out: [UInt8] = []
        out.reserveCapacity(lines.count)
        for line in lines.split(separator: UInt8(ascii: "\n")) {
            let element = try? JSONItemDecoder().decode(JSONValue.self, from: Array(line))
            guard let member = element?[name], member != .null else {
                let error = TrawlError(
                    code: .invalidBody, message: "an element of the page has no '\(name)' (a GraphQL edge without its node)",
                    hint: "ask for edges { node { … } } or nodes { … } in the query",
                    method: request.request.method.rawValue, url: url)
                var failure = PaginationError(position: request.position, index: index, url: url, underlying: error)
                failure.kind = .body
                throw failure
            }
            out += member.json
            out.append(UInt8(ascii: "\n"))
        }
        return out
    }

    /// Wraps each item line: `PREFIX ITEM ,"side":{…} }` (the side object only when side fields were asked for).
    private func wrap(_ lines: [UInt8], ends: [Int], prefix: [UInt8], captured: [JSONKeyPath: JSONValue]) -> [UInt8] {
        var suffix: [UInt8] = []
        if !side.isEmpty {
            suffix += Array(#","side":{"#.utf8)
            for (index, path) in side.enumerated() {
                if index > 0 { suffix.append(UInt8(ascii: ",")) }
                suffix += JSONValue.string(path.description).json
                suffix.append(UInt8(ascii: ":"))
                suffix += (captured[path] ?? .null).json
            }
            suffix.append(UInt8(ascii: "}"))
        }
        suffix += Array("}\n".utf8)
        var wrapped: [UInt8] = []
        wrapped.reserveCapacity(lines.count + ends.count * (prefix.count + suffix.count))
        var start = 0
        for end in ends {
            wrapped += prefix
            wrapped += lines[start..<end]
            wrapped += suffix
            start = end + 1
        }
        return wrapped
    }
}
