import ArgumentParser
import Trawl
import TrawlJobs

/// The pagination flags shared by `trawl fetch` and `trawl bench`, turned into a `PaginationStyle` the same way
/// for both (each option goes to the setting its style takes: `--page-size` is a page size for `page`, the limit
/// for `offset`).
struct PaginationFlags: ParsableArguments {
    @Option(help: "link | page | offset | cursor:KEYPATH | next:KEYPATH")
    var paginate: String?

    @Option(name: .customLong("page-param"), help: "Page/offset query parameter (page: 'page', offset: 'offset').")
    var pageParam: String?

    @Option(name: .customLong("start"), help: "First page number (default 1).")
    var start: Int?

    @Option(name: .customLong("size-param"), help: "Page-size query parameter (e.g. per_page).")
    var sizeParam: String?

    @Option(name: .customLong("limit-param"), help: "Offset's limit query parameter (default 'limit').")
    var limitParam: String?

    @Option(name: .customLong("page-size"), help: "Page size to ask for (with --size-param), or offset's limit.")
    var pageSize: Int?

    @Option(name: .customLong("total-pages"), help: "Key path of the page count in the body.")
    var totalPages: String?

    @Option(
        name: .customLong("total"),
        help: "Key path of the item total in the body (with next:, cursor: or link: a completeness check).")
    var total: String?

    @Option(name: .customLong("cursor-param"), help: "Query parameter carrying the cursor (default 'cursor').")
    var cursorParam: String?

    @Option(name: .customLong("has-more"), help: "Key path of a has-more flag (default has_more).")
    var hasMore: String?

    @Option(
        name: .customLong("paginate-in"),
        help: "query (default) | body: set the page, offset or cursor (and page size) at key paths of the JSON body.")
    var paginateIn: String?

    /// The pagination options given, spelled as flags (for "needs --paginate" messages).
    var given: [String] { givenFlags.filter(\.1).map(\.0) }

    private var givenFlags: [(String, Bool)] {
        [
            ("--page-param", pageParam != nil), ("--start", start != nil), ("--size-param", sizeParam != nil),
            ("--page-size", pageSize != nil), ("--limit-param", limitParam != nil),
            ("--total-pages", totalPages != nil), ("--total", total != nil), ("--cursor-param", cursorParam != nil),
            ("--has-more", hasMore != nil), ("--paginate-in", paginateIn != nil),
        ]
    }

    /// The style for `--paginate` (or `defaultSpec`), with `defaultTotalPages` when `--total-pages` is absent.
    func style(defaultSpec: String, defaultTotalPages: String? = nil) throws -> PaginationStyle {
        let spec = paginate ?? defaultSpec
        let name = spec.split(separator: ":").first.map { $0.lowercased() } ?? spec
        var options = PaginationOptions()
        options.param = pageParam
        options.start = start
        options.sizeParam = sizeParam
        options.limitParam = limitParam
        if name == "offset" { options.limit = pageSize } else { options.size = pageSize }
        options.totalPages = (totalPages ?? defaultTotalPages).map { JSONKeyPath($0) }
        options.totalItems = total.map { JSONKeyPath($0) }
        options.cursorParam = cursorParam
        options.hasMore = hasMore.map { JSONKeyPath($0) }
        switch paginateIn?.lowercased() {
        case nil: break
        case "body": options.inBody = true
        case "query": options.inBody = false
        case let other?: throw ValidationError("--paginate-in must be query or body, not '\(other)'")
        }
        if let allowed = PaginationStyle.optionNames[name] {
            let takes = Self.flags.filter { allowed.contains($0.option) }.map(\.flag)
            for (flag, isGiven) in givenFlags where isGiven && !takes.contains(flag) {
                throw ValidationError(
                    "\(flag) does not apply to --paginate \(name)"
                        + (takes.isEmpty ? " (it takes no options)" : " (it takes \(takes.joined(separator: ", ")))"))
            }
        }
        do {
            return try PaginationStyle.parse(spec, options: options)
        } catch {
            throw ValidationError("--paginate: \(error)")
        }
    }

    /// Each flag and the option (job-file spelling) it sets.
    static let flags: [(flag: String, option: String)] = [
        ("--page-param", "param"), ("--start", "start"), ("--size-param", "size_param"), ("--page-size", "size"),
        ("--page-size", "limit"), ("--limit-param", "limit_param"), ("--total-pages", "total_pages"),
        ("--total", "total"), ("--cursor-param", "cursor_param"), ("--has-more", "has_more"), ("--paginate-in", "in"),
    ]
}
