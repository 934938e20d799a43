import NIOCore
import Synchronization

/// `/feed/NAME`: a changing collection for incremental-sync and conditional-request tests. Its items live in the
/// server (``TestServer/feedAdd(_:count:)``, ``TestServer/feedTouch(_:id:)``), so a test can add or change items
/// between two runs of a job.
///
/// Item: `{"id":I,"seq":S,"updated_at":"2024-01-01T00:00:00Z + S minutes","rev":R}`; `seq` is the feed's change
/// counter, so `updated_at` and `seq` grow together and a touched item moves to the end with `rev` + 1.
/// A bare array per page, in `seq` order (`order=desc`: newest first), with a GitHub-like `Link: <…>; rel="next"`.
///
/// Query: `since=DATE` keeps items with `updated_at >= DATE` (compared as `YYYY-MM-DDTHH:MM:SSZ` text),
/// `since_seq=N` items with `seq >= N`; `ignore_since=1` ignores both (a server without the filter);
/// `per_page` (default 10), `page` (from 1), `delay_ms=MS` (wait before answering).
/// Caching: every page has an `ETag` (a hash of its body) and a `Last-Modified`; `If-None-Match` with that ETag
/// (or `If-Modified-Since` with that date, when no `If-None-Match` is sent) answers 304 with no body and no `Link`.
/// `no_store=1` adds `Cache-Control: no-store`.
enum FeedEndpoint {
    struct Item: Sendable {
        var id: Int
        var seq: Int
        var rev: Int
    }

    static func response(for request: InboundRequest, name: Substring, book: RequestBook) -> Response {
        let target = request.target
        var items = book.feeds.withLock { $0[String(name)] ?? [] }.sorted { $0.seq < $1.seq }
        if !target.flag("ignore_since") {
            if let since = target.value("since") { items = items.filter { updatedAt($0.seq) >= since } }
            if let since = target.int("since_seq") { items = items.filter { $0.seq >= since } }
        }
        if target.value("order") == "desc" { items.reverse() }
        let size = max(1, target.int("per_page") ?? 10)
        let page = max(1, target.int("page") ?? 1)
        let start = min(items.count, (page - 1) * size)
        let slice = items[start..<min(items.count, start + size)]
        let body = "[" + slice.map(json).joined(separator: ",") + "]"
        let etag = "\"" + hex(body) + "\""
        let newest = slice.map(\.seq).max() ?? 0
        let lastModified = httpDate(newest)
        var headers: [(String, String)] = [("ETag", etag), ("Last-Modified", lastModified)]
        if target.flag("no_store") { headers.append(("Cache-Control", "no-store")) }
        if start + size < items.count {
            let pairs = target.rawQuery.split(separator: "&").filter { !$0.hasPrefix("page=") }
            let query = (["page=\(page + 1)"] + pairs.map(String.init)).joined(separator: "&")
            let host = request.head.headers["Host"].first ?? "127.0.0.1"
            headers.append(("Link", "<http://\(host)\(target.path)?\(query)>; rel=\"next\""))
        }
        let inm = request.head.headers["If-None-Match"].first
        let ims = request.head.headers["If-Modified-Since"].first
        // A 304 carries the validators and Cache-Control only (no Link): the client keeps the rest.
        let validators = headers.filter { $0.0 != "Link" }
        var response =
            inm == etag || (inm == nil && ims == lastModified)
            ? Response(status: 304, headers: validators + [("Content-Length", "0")])
            : .json(200, body, headers: headers)
        if let delay = target.int("delay_ms") { response.delay = .milliseconds(Int64(delay)) }
        return response
    }

    static func json(_ item: Item) -> String {
        "{\"id\":\(item.id),\"seq\":\(item.seq),\"updated_at\":\"\(updatedAt(item.seq))\",\"rev\":\(item.rev)}"
    }

    /// `2024-01-01T00:00:00Z` plus `seq` minutes.
    static func updatedAt(_ seq: Int) -> String {
        let day = 1 + seq / (24 * 60)
        let hour = (seq / 60) % 24
        let minute = seq % 60
        return "2024-01-\(two(day))T\(two(hour)):\(two(minute)):00Z"
    }

    static func httpDate(_ seq: Int) -> String {
        let day = 1 + seq / (24 * 60)
        return "Mon, \(two(day)) Jan 2024 \(two((seq / 60) % 24)):\(two(seq % 60)):00 GMT"
    }

    private static func two(_ value: Int) -> String { value < 10 ? "0\(value)" : String(value) }

    private static func hex(_ text: String) -> String {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in text.utf8 {
            hash ^= UInt64(byte)
            hash = hash &* 0x0000_0100_0000_01b3
        }
        return String(hash, radix: 16)
    }
}

extension TestServer {
    /// Adds `count` items to the feed `name` (ids and `seq` continue from the last), at the newest end.
    ///
    /// ```swift
    /// server.feedAdd("orders", count: 25)   // GET /feed/orders?since=… lists them
    /// ```
    public func feedAdd(_ name: String, count: Int) {
        book.feeds.withLock { feeds in
            var items = feeds[name] ?? []
            for _ in 0..<count {
                let next = (items.map(\.seq).max() ?? -1) + 1
                items.append(FeedEndpoint.Item(id: items.count, seq: next, rev: 0))
            }
            feeds[name] = items
        }
    }

    /// Changes item `id` of the feed `name`: a new `rev` and the newest `seq` (so a later `updated_at`).
    public func feedTouch(_ name: String, id: Int) {
        book.feeds.withLock { feeds in
            guard var items = feeds[name], let index = items.firstIndex(where: { $0.id == id }) else { return }
            items[index].seq = (items.map(\.seq).max() ?? 0) + 1
            items[index].rev += 1
            feeds[name] = items
        }
    }

    /// The JSONL line `trawl fetch` writes for item `id` of the feed as it is now.
    public func feedLine(_ name: String, id: Int) -> String? {
        book.feeds.withLock { $0[name]?.first { $0.id == id } }.map { FeedEndpoint.json($0) + "\n" }
    }
}
