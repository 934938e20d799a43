import NIOCore
import Synchronization

/// `/feed/NAME`: a changing collection for incremental-sync and conditional-request tests. Its items live in the
/// server (``TestServer/feedAdd(_:count:)``, ``TestServer/feedTouch(_:id:)``), so a test can add or change items
/// between two runs of a job; with ``TestServer/LivingFeeds`` (`trawl serve`) feeds also change by themselves.
///
/// Item: `{"id":I,"seq":S,"updated_at":"2024-01-01T00:00:00Z + S minutes","rev":R}`; `seq` is the feed's change
/// counter, so `updated_at` and `seq` grow together and a touched item moves to the end with `rev` + 1.
/// A bare array per page, in `seq` order (`order=desc`: newest first), with a GitHub-like `Link: <…>; rel="next"`.
///
/// Query: `since=DATE` keeps items with `updated_at >= DATE` (compared as `YYYY-MM-DDTHH:MM:SSZ` text),
/// `since_seq=N` items with `seq >= N`; `until=DATE` (`until_seq=N`) keeps items below it, exclusive, so that
/// `since=A&until=B` is the half-open window `[A, B)` (a time-ranged feed); `ignore_since=1` ignores all four;
/// `after=SEQ` (`before=SEQ`) items with a greater (smaller) `seq`;
/// `per_page` (default 10), `page` (from 1), `delay_ms=MS` (wait before answering).
/// Paging by seq (`/shop/feed/NAME`): the `Link` asks for `after=` the page's last `seq` (`before=` with
/// `order=desc`) instead of the next page number, so an item changed between two pages is not skipped.
/// Caching: every page has an `ETag` (a hash of its body) and a `Last-Modified`; `If-None-Match` with that ETag
/// (or `If-Modified-Since` with that date, when no `If-None-Match` is sent) answers 304 with no body and no `Link`.
/// `no_store=1` adds `Cache-Control: no-store`. A test can make the requests with given `since` values fail (404).
enum FeedEndpoint {
    struct Item: Sendable {
        var id: Int
        var seq: Int
        var rev: Int
    }

    static func response(
        for request: InboundRequest, name: Substring, book: RequestBook, pagingBySeq: Bool = false
    ) -> Response {
        let target = request.target
        if let since = target.value("since"), book.feedFaults.withLock({ $0[String(name)]?.contains(since) == true }) {
            return .json(404, #"{"message":"this window fails (feedFail)"}"#)
        }
        var items = book.feedItems(String(name)).sorted { $0.seq < $1.seq }
        if !target.flag("ignore_since") {
            if let since = target.value("since") { items = items.filter { updatedAt($0.seq) >= since } }
            if let since = target.int("since_seq") { items = items.filter { $0.seq >= since } }
            // The upper bounds are exclusive: `since=A&until=B` is the half-open window [A, B).
            if let until = target.value("until") { items = items.filter { updatedAt($0.seq) < until } }
            if let until = target.int("until_seq") { items = items.filter { $0.seq < until } }
        }
        if let after = target.int("after") { items = items.filter { $0.seq > after } }
        if let before = target.int("before") { items = items.filter { $0.seq < before } }
        let descending = target.value("order") == "desc"
        if descending { items.reverse() }
        let size = max(1, target.int("per_page") ?? 10)
        let page = pagingBySeq ? 1 : max(1, target.int("page") ?? 1)
        let start = min(items.count, (page - 1) * size)
        let slice = items[start..<min(items.count, start + size)]
        let body = "[" + slice.map(json).joined(separator: ",") + "]"
        let etag = "\"" + hex(body) + "\""
        let newest = slice.map(\.seq).max() ?? 0
        let lastModified = httpDate(newest)
        var headers: [(String, String)] = [("ETag", etag), ("Last-Modified", lastModified)]
        if target.flag("no_store") { headers.append(("Cache-Control", "no-store")) }
        if start + size < items.count, let last = slice.last {
            headers.append(
                pagingBySeq
                    ? request.nextLink(setting: descending ? "before" : "after", to: last.seq)
                    : request.nextLink(setting: "page", to: page + 1))
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
        let date = CalendarDate(minutesSince2024: seq)
        return "\(date.year)-\(two(date.month))-\(two(date.day))T\(two(date.hour)):\(two(date.minute)):00Z"
    }

    /// The same instant as an HTTP date, e.g. `Mon, 01 Jan 2024 00:00:00 GMT`.
    static func httpDate(_ seq: Int) -> String {
        let date = CalendarDate(minutesSince2024: seq)
        let month = CalendarDate.monthNames[date.month - 1]
        return "\(date.weekday), \(two(date.day)) \(month) \(date.year) \(two(date.hour)):\(two(date.minute)):00 GMT"
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

/// A UTC date and time counted in minutes from 2024-01-01T00:00Z (a living feed passes January in hours).
struct CalendarDate {
    static let monthNames = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]
    static let weekdayNames = ["Thu", "Fri", "Sat", "Sun", "Mon", "Tue", "Wed"]   // 1970-01-01 was a Thursday

    var year: Int
    var month: Int
    var day: Int
    var hour: Int
    var minute: Int
    var weekday: String

    init(minutesSince2024 count: Int) {
        let minutes = max(0, count)
        hour = minutes / 60 % 24
        minute = minutes % 60
        // Days since 1970-01-01 to a civil date (Howard Hinnant's civil_from_days).
        let days = 19_723 + minutes / (24 * 60)
        weekday = Self.weekdayNames[days % 7]
        let shifted = days + 719_468
        let era = shifted / 146_097
        let dayOfEra = shifted - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let monthIndex = (5 * dayOfYear + 2) / 153
        let month = monthIndex < 10 ? monthIndex + 3 : monthIndex - 9
        self.month = month
        day = dayOfYear - (153 * monthIndex + 2) / 5 + 1
        year = yearOfEra + era * 400 + (month <= 2 ? 1 : 0)
    }
}

extension FeedEndpoint {
    /// Appends `count` items (ids and `seq` continue from the last).
    static func add(_ count: Int, to items: inout [Item]) {
        var next = (items.map(\.seq).max() ?? -1) + 1
        for _ in 0..<max(0, count) {
            items.append(Item(id: items.count, seq: next, rev: 0))
            next += 1
        }
    }

    /// Gives item `id` a new `rev` and the newest `seq` (so a later `updated_at`).
    static func touch(_ id: Int, in items: inout [Item]) {
        guard let index = items.firstIndex(where: { $0.id == id }) else { return }
        items[index].seq = (items.map(\.seq).max() ?? 0) + 1
        items[index].rev += 1
    }
}

extension TestServer {
    /// Feeds that change by themselves, as `trawl serve` runs them: a feed not yet changed by ``feedAdd(_:count:)``
    /// starts with `initialItems` when it is first requested, and every `interval` each feed gains `added` items
    /// and `touched` of its items (picked at random) are changed as ``feedTouch(_:id:)`` changes them.
    ///
    /// ```swift
    /// let server = try await TestServer.start(livingFeeds: TestServer.LivingFeeds())
    /// // GET /feed/orders: 250 items; 3 s later 255, two of them with rev 1
    /// ```
    public struct LivingFeeds: Sendable, Hashable {
        /// Items a feed starts with when first requested.
        public var initialItems: Int
        /// How often every feed changes (zero: never; the feeds only start with items).
        public var interval: Duration
        /// New items per change.
        public var added: Int
        /// Existing items changed per change.
        public var touched: Int

        /// `trawl serve`'s defaults: 250 items to start with, then every 3 s 5 new items and 2 changed.
        public init(initialItems: Int = 250, interval: Duration = .seconds(3), added: Int = 5, touched: Int = 2) {
            self.initialItems = initialItems
            self.interval = interval
            self.added = added
            self.touched = touched
        }
    }

    /// Adds `count` items to the feed `name` (ids and `seq` continue from the last), at the newest end.
    ///
    /// ```swift
    /// server.feedAdd("orders", count: 25)   // GET /feed/orders?since=… lists them
    /// ```
    public func feedAdd(_ name: String, count: Int) {
        book.feeds.withLock { FeedEndpoint.add(count, to: &$0[name, default: []]) }
    }

    /// Changes item `id` of the feed `name`: a new `rev` and the newest `seq` (so a later `updated_at`).
    public func feedTouch(_ name: String, id: Int) {
        book.feeds.withLock { feeds in
            guard feeds[name] != nil else { return }
            FeedEndpoint.touch(id, in: &feeds[name, default: []])
        }
    }

    /// Makes every request of the feed `name` whose `since` is one of `values` answer 404 (not retried: the page
    /// fails for good), until called again with other values (`[]`: none fail).
    ///
    /// ```swift
    /// server.feedFail("w", since: ["2024-01-01T00:30:00Z"])   // that window's walk fails
    /// ```
    public func feedFail(_ name: String, since values: Set<String>) {
        book.feedFaults.withLock { $0[name] = values }
    }

    /// The JSONL line `trawl fetch` writes for item `id` of the feed as it is now.
    public func feedLine(_ name: String, id: Int) -> String? {
        book.feeds.withLock { $0[name]?.first { $0.id == id } }.map { FeedEndpoint.json($0) + "\n" }
    }

    /// The JSONL lines of every item of the feed as it is now, oldest `seq` first (empty for a feed never asked
    /// for or added to).
    ///
    /// ```swift
    /// let before = server.feedLines("events")
    /// // ... later, with living feeds: new and changed items are lines not in `before`
    /// ```
    public func feedLines(_ name: String) -> [String] {
        book.feeds.withLock { $0[name] ?? [] }.sorted { $0.seq < $1.seq }.map { FeedEndpoint.json($0) + "\n" }
    }
}

extension RequestBook {
    /// The items of the feed `name`; with living feeds, a feed asked for the first time starts with items.
    func feedItems(_ name: String) -> [FeedEndpoint.Item] {
        feeds.withLock { feeds in
            if feeds[name] == nil, let living = livingFeeds {
                FeedEndpoint.add(living.initialItems, to: &feeds[name, default: []])
            }
            return feeds[name] ?? []
        }
    }

    /// One change of every living feed: new items, and some existing ones touched.
    func changeFeeds() {
        guard let living = livingFeeds else { return }
        feeds.withLock { feeds in
            for name in feeds.keys {
                guard var items = feeds[name] else { continue }
                let existing = items.count
                if existing > 0 {
                    for _ in 0..<max(0, living.touched) { FeedEndpoint.touch(Int.random(in: 0..<existing), in: &items) }
                }
                FeedEndpoint.add(living.added, to: &items)
                feeds[name] = items
            }
        }
    }
}

extension InboundRequest {
    /// `Link: <same URL with NAME=VALUE>; rel="next"` (the other query pairs kept, NAME's old value dropped).
    func nextLink(setting name: String, to value: Int) -> (String, String) {
        let pairs = target.rawQuery.split(separator: "&").filter { !$0.hasPrefix(name + "=") }
        let query = (["\(name)=\(value)"] + pairs.map(String.init)).joined(separator: "&")
        let host = head.headers["Host"].first ?? "127.0.0.1"
        return ("Link", "<http://\(host)\(target.path)?\(query)>; rel=\"next\"")
    }
}
