import Foundation
import Trawl
import TrawlJSON

/// The settings of a pagination style given apart from its spec (`--paginate page --size 100`, or the keys of a
/// job file's `paginate:` mapping). Each is optional; an option the style does not take is an error.
///
/// ```swift
/// var options = PaginationOptions()
/// options.sizeParam = "per_page"
/// options.size = 100
/// options.totalPages = "total_pages"
/// let style = try PaginationStyle.parse("page", options: options)
/// ```
///
/// | style    | options (job file spelling)                                                   |
/// |----------|-------------------------------------------------------------------------------|
/// | `page`   | `param`, `start`, `size_param`, `size`, `total_pages`, `total_items` (`total`), `pages` |
/// | `offset` | `param`, `limit_param`, `limit`, `total` (`total_items`)                                |
/// | `cursor` | `cursor` (the key path), `param` (`cursor_param`), `has_more`                           |
/// | `next`   | `next` (the key path)                                                                   |
/// | `link`   | `page_param` (`param`)                                                                  |
public struct PaginationOptions: Sendable, Hashable {
    /// The query parameter that carries the position: the page number (`page`), the offset (`offset`), the
    /// cursor (`cursor`, as `cursorParam`) or, for `link`, the page number in `next`/`last` URLs.
    public var param: String?
    /// The first page number (`page`; default 1).
    public var start: Int?
    public var sizeParam: String?
    public var size: Int?
    public var totalPages: JSONKeyPath?
    public var totalItems: JSONKeyPath?
    /// The total item count (`offset`); for `page`, the same as `totalItems`.
    public var total: JSONKeyPath?
    /// Exactly these pages (`page`).
    public var pages: ClosedRange<Int>?
    /// The query parameter for the cursor (`cursor`; default `cursor`).
    public var cursorParam: String?
    /// Where the next cursor is (`cursor`), when the spec does not say (`cursor:KEYPATH`).
    public var cursorPath: JSONKeyPath?
    /// Stops on `false` (`cursor`; default `has_more`).
    public var hasMore: JSONKeyPath?
    /// Where the next URL is (`next`), when the spec does not say (`next:KEYPATH`).
    public var nextPath: JSONKeyPath?
    public var limitParam: String?
    public var limit: Int?
    /// The page-number parameter in `Link` URLs (`link`; default `page`).
    public var pageParam: String?
    /// `in: body`: the position (and page size) set at key paths of the JSON request body (`page`, `offset`,
    /// `cursor`); `param`, `size_param`, `limit_param` and `cursor_param` are then key paths such as `page.cursor`.
    public var inBody: Bool?

    public init(
        param: String? = nil, start: Int? = nil, sizeParam: String? = nil, size: Int? = nil,
        totalPages: JSONKeyPath? = nil, totalItems: JSONKeyPath? = nil, total: JSONKeyPath? = nil,
        pages: ClosedRange<Int>? = nil, cursorParam: String? = nil, cursorPath: JSONKeyPath? = nil,
        hasMore: JSONKeyPath? = nil, nextPath: JSONKeyPath? = nil, limitParam: String? = nil, limit: Int? = nil,
        pageParam: String? = nil
    ) {
        self.param = param
        self.start = start
        self.sizeParam = sizeParam
        self.size = size
        self.totalPages = totalPages
        self.totalItems = totalItems
        self.total = total
        self.pages = pages
        self.cursorParam = cursorParam
        self.cursorPath = cursorPath
        self.hasMore = hasMore
        self.nextPath = nextPath
        self.limitParam = limitParam
        self.limit = limit
        self.pageParam = pageParam
    }

    /// The options that are set, spelled as in a job file.
    var setNames: [String] {
        var names: [String] = []
        if param != nil { names.append("param") }
        if start != nil { names.append("start") }
        if sizeParam != nil { names.append("size_param") }
        if size != nil { names.append("size") }
        if totalPages != nil { names.append("total_pages") }
        if totalItems != nil { names.append("total_items") }
        if total != nil { names.append("total") }
        if pages != nil { names.append("pages") }
        if cursorParam != nil { names.append("cursor_param") }
        if cursorPath != nil { names.append("cursor") }
        if hasMore != nil { names.append("has_more") }
        if nextPath != nil { names.append("next") }
        if limitParam != nil { names.append("limit_param") }
        if limit != nil { names.append("limit") }
        if pageParam != nil { names.append("page_param") }
        if inBody != nil { names.append("in") }
        return names
    }
}

extension PaginationStyle {
    /// The style names, as written in specs.
    static let styleNames = ["link", "page", "offset", "cursor", "next"]

    /// The options each style takes, spelled as in a job file (a job file's `paginate:` mapping takes exactly
    /// these, with `style`).
    public static let optionNames: [String: [String]] = [
        "page": ["param", "start", "size_param", "size", "total_pages", "total_items", "total", "pages", "in"],
        "offset": ["param", "limit_param", "limit", "total", "total_items", "in"],
        "cursor": ["cursor", "param", "cursor_param", "has_more", "total", "total_items", "in"],
        "next": ["next", "total", "total_items"],
        "link": ["page_param", "param", "total", "total_items"],
    ]

    static let styleHint = "use link, page, offset, cursor:KEYPATH or next:KEYPATH"

    /// A style from its spec — `link`, `page`, `offset`, `cursor:KEYPATH` or `next:KEYPATH` — and options.
    ///
    /// ```swift
    /// try PaginationStyle.parse("link")
    /// try PaginationStyle.parse("next:links.next")
    /// try PaginationStyle.parse("cursor:data.-1.id", options: PaginationOptions(cursorParam: "starting_after"))
    /// try PaginationStyle.parse("offset", options: PaginationOptions(total: "total", limit: 100))
    /// ```
    ///
    /// Throws `JobSpecError` for an unknown style, a bad key path, a missing cursor or next path, an option the
    /// style does not take (its `option` names it) or a value out of range.
    public static func parse(_ spec: String, options: PaginationOptions = PaginationOptions()) throws(JobSpecError)
        -> PaginationStyle
    {
        let trimmed = spec.trimmingCharacters(in: .whitespaces)
        let name: String
        var path: String?
        if let colon = trimmed.firstIndex(of: ":") {
            name = String(trimmed[..<colon]).lowercased()
            path = String(trimmed[trimmed.index(after: colon)...])
        } else {
            name = trimmed.lowercased()
        }
        guard let allowed = optionNames[name] else {
            throw JobSpecError("unknown style '\(spec)'", hint: styleHint)
        }
        for option in options.setNames where !allowed.contains(option) {
            throw JobSpecError(
                "option \(option) does not apply to \(name) pagination",
                hint: "\(name) takes \(allowed.joined(separator: ", "))", option: option)
        }
        if let given = path, given.isEmpty {
            throw JobSpecError("'\(spec)' has an empty key path", hint: styleHint)
        }
        if path != nil, name != "cursor", name != "next" {
            throw JobSpecError("style '\(name)' takes no key path, but '\(spec)' gives one", hint: styleHint)
        }
        func positive(_ value: Int?, _ option: String) throws(JobSpecError) -> Int? {
            if let value, value < 1 {
                throw JobSpecError("\(option) must be at least 1, not \(value)", option: option)
            }
            return value
        }
        func keyPath(_ text: String, _ option: String) throws(JobSpecError) -> JSONKeyPath {
            do {
                return try JSONKeyPath.validated(text)
            } catch {
                var error = error
                error.option = option
                throw error
            }
        }
        func notEmpty(_ value: String?, _ option: String) throws(JobSpecError) -> String? {
            if let value, value.isEmpty { throw JobSpecError("\(option) is empty", option: option) }
            return value
        }
        /// The key path of `cursor:KEYPATH`/`next:KEYPATH` or of the option naming it; both must agree.
        func specPath(_ path: String?, option: JSONKeyPath?, name: String, spec: String)
            throws(JobSpecError) -> JSONKeyPath?
        {
            guard let path else { return option }
            let parsed = try keyPath(path, name)
            if let option, option != parsed {
                throw JobSpecError(
                    "'\(spec)' and the \(name) option name different key paths", hint: "give the path once",
                    option: name)
            }
            return parsed
        }

        let style = try parseKind(name, path: path, spec: spec, options: options, keyPath: keyPath, positive: positive,
            notEmpty: notEmpty, specPath: specPath)
        guard options.inBody == true else { return style }
        // Each parameter is a key path into the body: refuse one that is not.
        for (option, text) in [("param", options.param), ("size_param", options.sizeParam),
            ("limit_param", options.limitParam), ("cursor_param", options.cursorParam)]
        {
            if let text { _ = try keyPath(text, option) }
        }
        return style.inBody()
    }

    private static func parseKind(
        _ name: String, path: String?, spec: String, options: PaginationOptions,
        keyPath: (String, String) throws(JobSpecError) -> JSONKeyPath,
        positive: (Int?, String) throws(JobSpecError) -> Int?,
        notEmpty: (String?, String) throws(JobSpecError) -> String?,
        specPath: (String?, JSONKeyPath?, String, String) throws(JobSpecError) -> JSONKeyPath?
    ) throws(JobSpecError) -> PaginationStyle {
        switch name {
        case "page":
            if let start = options.start, start < 0 {
                throw JobSpecError("start must not be negative, not \(start)", option: "start")
            }
            if options.totalItems != nil, options.total != nil {
                throw JobSpecError(
                    "total_items and total both given", hint: "give one of them", option: "total")
            }
            return .page(
                param: try notEmpty(options.param, "param") ?? "page", start: options.start ?? 1,
                sizeParam: try notEmpty(options.sizeParam, "size_param"), size: try positive(options.size, "size"),
                totalPages: options.totalPages, totalItems: options.totalItems ?? options.total, pages: options.pages)
        case "offset":
            if options.totalItems != nil, options.total != nil {
                throw JobSpecError(
                    "total_items and total both given", hint: "give one of them", option: "total")
            }
            return .offset(
                param: try notEmpty(options.param, "param") ?? "offset",
                limitParam: try notEmpty(options.limitParam, "limit_param") ?? "limit",
                limit: try positive(options.limit, "limit"), total: options.total ?? options.totalItems)
        case "cursor":
            guard let at = try specPath(path, options.cursorPath, "cursor", spec) else {
                throw JobSpecError(
                    "cursor pagination needs the key path of the next cursor",
                    hint: "write cursor:KEYPATH, as in cursor:data.-1.id or cursor:meta.next_cursor")
            }
            if options.param != nil, options.cursorParam != nil, options.param != options.cursorParam {
                throw JobSpecError(
                    "param and cursor_param both given", hint: "give one of them", option: "cursor_param")
            }
            return PaginationStyle.cursor(
                at: at,
                param: try notEmpty(options.cursorParam ?? options.param, "param") ?? "cursor",
                hasMore: options.hasMore ?? "has_more"
            ).checkingTotal(at: options.total ?? options.totalItems)
        case "next":
            guard let at = try specPath(path, options.nextPath, "next", spec) else {
                throw JobSpecError(
                    "next pagination needs the key path of the next page's URL",
                    hint: "write next:KEYPATH, as in next:next or next:links.next")
            }
            return PaginationStyle.nextURL(at: at).checkingTotal(at: options.total ?? options.totalItems)
        default:
            if options.param != nil, options.pageParam != nil, options.param != options.pageParam {
                throw JobSpecError("param and page_param both given", hint: "give one of them", option: "page_param")
            }
            return PaginationStyle.link(pageParam: try notEmpty(options.pageParam ?? options.param, "page_param") ?? "page")
                .checkingTotal(at: options.total ?? options.totalItems)
        }
    }

    /// A stable description of the style and its settings (hashed into a job's fingerprint).
    ///
    /// ```swift
    /// PaginationStyle.link().canonicalDescription   // "link page_param=page"
    /// ```
    public var canonicalDescription: String {
        // A total read only as a check is said only when set, so that older jobs keep their fingerprints.
        kindDescription + (totalPath.map { " check_total=\($0)" } ?? "") + (inBody ? " in=body" : "")
            + (graphQLConnection.map { " graphql=\($0)" } ?? "")
    }

    private var kindDescription: String {
        func path(_ path: JSONKeyPath?) -> String { path.map { $0.description } ?? "-" }
        func int(_ value: Int?) -> String { value.map(String.init) ?? "-" }
        switch kind {
        case .page(let param, let start, let sizeParam, let size, let totalPages, let totalItems, let pages):
            let range = pages.map { "\($0.lowerBound)..\($0.upperBound)" } ?? "-"
            return "page param=\(param) start=\(start) size_param=\(sizeParam ?? "-") size=\(int(size)) "
                + "total_pages=\(path(totalPages)) total_items=\(path(totalItems)) pages=\(range)"
        case .offset(let param, let limitParam, let limit, let total):
            return "offset param=\(param) limit_param=\(limitParam) limit=\(int(limit)) total=\(path(total))"
        case .cursor(let at, let param, let hasMore):
            return "cursor cursor=\(at) param=\(param) has_more=\(path(hasMore))"
        case .nextURL(let at):
            return "next next=\(at)"
        case .link(let pageParam):
            return "link page_param=\(pageParam)"
        }
    }
}

extension JSONKeyPath {
    /// A key path from its text, rejecting empty components (`a..b`, `.a`, `a.`) and a dangling `\`.
    ///
    /// ```swift
    /// try JSONKeyPath.validated("data.-1.id")   // data, -1, id
    /// try JSONKeyPath.validated("data..id")     // throws JobSpecError
    /// ```
    public static func validated(_ text: String) throws(JobSpecError) -> JSONKeyPath {
        var body = Substring(text)
        if body == "$" || body.isEmpty { return .root }
        if body.hasPrefix("$.") { body = body.dropFirst(2) }
        let hint = "write keys separated by dots, as in data.items or data.-1.id; \"\" or \"$\" is the root"
        var current = 0
        var escaped = false
        for character in body {
            if escaped {
                escaped = false
                current += 1
            } else if character == "\\" {
                escaped = true
            } else if character == "." {
                guard current > 0 else { throw JobSpecError("'\(text)' has an empty key", hint: hint) }
                current = 0
            } else {
                current += 1
            }
        }
        if escaped {
            throw JobSpecError("'\(text)' ends with a lone '\\'", hint: "write \\\\ for a backslash, \\. for a dot")
        }
        guard current > 0 else { throw JobSpecError("'\(text)' has an empty key", hint: hint) }
        return JSONKeyPath(text)
    }
}
