import Foundation
import TrawlEngine
import TrawlJSON

/// What a first page says about its collection: where the items are and how the next page is asked for, as
/// the same ``PaginationStyle`` and items key path explicit settings make, so the rest of the walk is the
/// ordinary one. Detection never guesses silently: two arrays of similar size, a cursor whose request parameter
/// is not a known convention, or a body with no array of objects is a ``PaginationDetectionError``.
///
/// ```swift
/// let detected = try PaginationDetection.detect(body: firstPage, headers: head.headers, url: head.url)
/// detected.style        // .nextURL(at: "links.next")
/// detected.items        // "data"
/// detected.settings     // [("paginate", "next:links.next")]
/// ```
///
/// The rules, in order: items are a bare array, else the one dominant array of objects at the top level or one
/// object down. Pagination: a `Link` header with `rel="next"`; a next page's URL in the body; a cursor or token
/// with a known request parameter; Stripe's `has_more` with items that have an `id`; a total of pages, or of items
/// with a page size; offsets (`offset`/`limit`, `start`/`count`, Jira's `startAt`/`maxResults`/`total`);
/// otherwise the first page is the whole collection (``isSinglePage``).
public struct PaginationDetection: Sendable, Hashable {
    /// The walk's pagination.
    public var style: PaginationStyle
    /// Where the items are in each page's body (`.root` for a bare array).
    public var items: JSONKeyPath
    /// Nothing in the first page points at another page: it is the whole collection.
    public var isSinglePage: Bool
    /// The pagination as job-file settings, in order: `paginate` (its spec, e.g. `cursor:nextPageToken`) first,
    /// then options such as `cursor_param`, `total_pages`, `total`, `page_param`, `limit_param`, `limit`.
    public var settings: [Setting]
    /// The key path the plan reads from every page (a next URL, a cursor), when it reads one: a later page
    /// without it contradicts the plan.
    public var readsPath: JSONKeyPath?
    /// The number of items in the first page.
    public var firstPageItems: Int

    /// One job-file setting of the detected pagination.
    public struct Setting: Sendable, Hashable {
        public var name: String
        public var value: String

        public init(name: String, value: String) {
            self.name = name
            self.value = value
        }
    }

    /// Detects the plan from the first page's parsed `body`, its response `headers` and its final `url`.
    /// `items`, when given, is where the items are (only the pagination is detected); `cursorParam`, when given,
    /// is the request parameter of a detected cursor (one with no known convention is then no error).
    public static func detect(
        body: JSONValue, headers: HTTPHeaders, url: String, items given: JSONKeyPath? = nil,
        cursorParam: String? = nil
    ) throws(PaginationDetectionError) -> PaginationDetection {
        if given == nil, let relay = relayConnection(body) { return relay }
        let items: JSONKeyPath
        let elements: [JSONValue]
        if let given {
            guard let value = value(body, at: given) else {
                throw PaginationDetectionError(
                    kind: .unknownShape, message: "the first page has no value at '\(given)'",
                    topLevelKeys: topLevelKeys(body))
            }
            items = given
            if case .array(let array) = value { elements = array } else { elements = [value] }
        } else {
            (items, elements) = try detectItems(body)
        }
        var detection = detectPagination(body, items: items, elements: elements, headers: headers, url: url)
        detection.items = items
        detection.firstPageItems = elements.count
        if case .object = body, detection.isSinglePage {
            // A key that looks like a cursor with no known request parameter is not taken for the end.
            if let unknown = unknownCursor(body, items: items) {
                if let cursorParam { return withCursor(detection, at: unknown, param: cursorParam) }
                throw PaginationDetectionError(
                    kind: .unknownCursorParameter,
                    message: "the first page has a cursor at '\(unknown)' "
                        + "whose request parameter is not a known convention",
                    cursorPath: unknown, topLevelKeys: topLevelKeys(body))
            }
            if let (path, total) = unreachedTotal(body, items: items, pageItems: elements.count) {
                throw PaginationDetectionError(
                    kind: .unknownShape,
                    message: "the first page holds \(elements.count) items at '\(items)' but its '\(path)' says "
                        + "\(total), and nothing in it names the next page in a way trawl knows; taking it for the "
                        + "only page would lose the rest",
                    topLevelKeys: topLevelKeys(body))
            }
        }
        if let cursorParam, case .cursor(let path, _, _) = detection.style.kind {
            return withCursor(detection, at: path, param: cursorParam)
        }
        return detection
    }

    /// `detection` walking the cursor at `path` sent as `param`.
    static func withCursor(_ detection: PaginationDetection, at path: JSONKeyPath, param: String) -> PaginationDetection
    {
        var detection = detection
        detection.style = .cursor(at: path, param: param)
        detection.style.expectedPath = path
        detection.readsPath = path
        detection.isSinglePage = false
        detection.settings = [
            .init(name: "paginate", value: "cursor:\(path)"), .init(name: "cursor_param", value: param),
        ]
        return detection
    }

    // MARK: Items

    /// Names an API gives its items, preferred when every candidate array is empty.
    static let itemNames: Set<String> = ["data", "results", "items", "records", "value", "entries"]

    static func detectItems(_ body: JSONValue) throws(PaginationDetectionError) -> (JSONKeyPath, [JSONValue]) {
        guard case .object(let members) = body else {
            if case .array(let elements) = body { return (.root, elements) }
            throw PaginationDetectionError(
                kind: .unknownShape, message: "the first page is \(kindName(body)), not an array or an object",
                topLevelKeys: [])
        }
        var candidates: [PaginationDetectionError.Candidate] = []
        var arrays: [JSONKeyPath: [JSONValue]] = [:]
        func consider(_ path: [String], _ value: JSONValue) {
            guard case .array(let elements) = value,
                elements.allSatisfy({ if case .object = $0 { true } else { false } })
            else { return }
            let keyPath = JSONKeyPath(components: path.map { .key($0) })
            candidates.append(.init(path: keyPath, count: elements.count))
            arrays[keyPath] = elements
        }
        for key in members.keys.sorted() {
            guard let value = members[key] else { continue }
            consider([key], value)
            if case .object(let inner) = value {
                for innerKey in inner.keys.sorted() {
                    if let nested = inner[innerKey] { consider([key, innerKey], nested) }
                }
            }
        }
        let ranked = candidates.sorted { $0.count > $1.count }
        guard let top = ranked.first else {
            throw PaginationDetectionError(
                kind: .unknownShape,
                message: "the first page has no array of objects at its top level or one level down",
                topLevelKeys: topLevelKeys(body))
        }
        var chosen: PaginationDetectionError.Candidate?
        if top.count > 0 {
            // Another array holding half as many elements or more: which one is the collection is a guess.
            if ranked.count == 1 || ranked[1].count * 2 < top.count { chosen = top }
        } else if ranked.count == 1 {
            chosen = top
        } else {
            let named = ranked.filter { itemNames.contains($0.path.components.last.map { "\($0)" } ?? "") }
            if named.count == 1 { chosen = named[0] }
        }
        guard let chosen else {
            throw PaginationDetectionError(
                kind: .ambiguousItems, message: "the first page has \(ranked.count) arrays of objects of similar size",
                candidates: ranked, topLevelKeys: topLevelKeys(body))
        }
        return (chosen.path, arrays[chosen.path] ?? [])
    }

    // MARK: Helpers

    static func topLevelKeys(_ body: JSONValue) -> [String] {
        if case .object(let members) = body { return members.keys.sorted() }
        return []
    }

    static func kindName(_ value: JSONValue) -> String {
        switch value {
        case .object: "an object"
        case .array: "an array"
        case .bool: "a boolean"
        case .number: "a number"
        case .string: "a string"
        case .null: "null"
        }
    }

    /// The value at a key path (an index also matches the object key of its text).
    static func value(_ body: JSONValue, at path: JSONKeyPath) -> JSONValue? {
        var current: JSONValue? = body
        for component in path.components {
            switch component {
            case .key(let key): current = current?[key]
            case .index(let index): current = current?[index] ?? current?[String(index)]
            }
        }
        return current
    }

    /// The value at `path` (keys only).
    static func value(_ body: JSONValue, _ path: [String]) -> JSONValue? {
        var current: JSONValue? = body
        for key in path { current = current?[key] }
        return current
    }

    static func keyPath(_ path: [String]) -> JSONKeyPath { JSONKeyPath(components: path.map { .key($0) }) }

    /// Every key path to a scalar at most `depth` objects down, arrays and the items left out, in a stable order.
    static func scalarPaths(_ body: JSONValue, items: JSONKeyPath, depth: Int = 3) -> [([String], JSONValue)] {
        var result: [([String], JSONValue)] = []
        func walk(_ value: JSONValue, _ path: [String]) {
            guard keyPath(path) != items || path.isEmpty else { return }
            switch value {
            case .object(let members):
                guard path.count < depth else { return }
                for key in members.keys.sorted() { if let member = members[key] { walk(member, path + [key]) } }
            case .array:
                return
            default:
                if !path.isEmpty { result.append((path, value)) }
            }
        }
        walk(body, [])
        return result
    }
}

/// Why a first page could not be read as a collection: the items are ambiguous, a cursor's request parameter is
/// unknown, or the body has no recognisable shape. Nothing was written.
public struct PaginationDetectionError: Error, Sendable, Hashable, CustomStringConvertible {
    public enum Kind: Sendable, Hashable {
        /// Two or more arrays of objects of similar size: ``candidates``.
        case ambiguousItems
        /// A cursor at ``cursorPath`` whose request parameter is not a known convention.
        case unknownCursorParameter
        /// No array of objects, or a body that is not an object or an array: ``topLevelKeys``.
        case unknownShape
    }

    /// An array that may hold the items.
    public struct Candidate: Sendable, Hashable {
        public var path: JSONKeyPath
        public var count: Int
    }

    public var kind: Kind
    public var message: String
    public var candidates: [Candidate] = []
    public var cursorPath: JSONKeyPath?
    public var topLevelKeys: [String] = []
    /// The candidate plans tried on page 2, none of which fit.
    public var probes: [DetectionProbe] = []

    public var description: String { message }
}

extension PaginationStyle {
    /// Why `page` contradicts a detected plan: the value it reads changed kind (a next URL that is no URL, a
    /// cursor that became a URL), which would otherwise send the walk to a wrong page or end it early. A missing
    /// or empty value is the end of the list, as Google's APIs leave `nextPageToken` out of the last page.
    func contradiction(in page: PageResponse) -> String? {
        guard let path = expectedPath, case .string(let text)? = page.captured[path],
            !text.trimmingCharacters(in: .whitespaces).isEmpty
        else { return nil }
        let isURL = PaginationDetection.looksLikeURL(text)
        switch kind {
        case .nextURL where !isURL:
            return "the value at '\(path)' is no longer a URL (it was one on the first page): the detected "
                + "pagination no longer fits the responses, so the walk stops here instead of guessing"
        case .cursor where text.lowercased().hasPrefix("http://") || text.lowercased().hasPrefix("https://"):
            return "the value at '\(path)' is now a URL (it was a cursor on the first page): the detected "
                + "pagination no longer fits the responses, so the walk stops here instead of guessing"
        default:
            return nil
        }
    }
}
