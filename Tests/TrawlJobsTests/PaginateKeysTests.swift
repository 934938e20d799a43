import Foundation
import Testing
import TrawlTestSupport

@testable import Trawl
@testable import TrawlJobs

/// A job file's `paginate:` mapping: every key an error lists as allowed is accepted, and offset takes
/// `total_items` as page does.
@Suite("job file paginate keys", .hangGuard)
struct PaginateKeysTests {
    /// A value for each option that the style can take alone.
    static let values: [String: String] = [
        "param": "p", "start": "0", "size_param": "per_page", "size": "10", "total_pages": "meta.pages",
        "total_items": "meta.total", "total": "meta.total", "pages": "\"1..3\"", "cursor": "next_cursor",
        "cursor_param": "after", "has_more": "more", "next": "links.next", "limit_param": "size", "limit": "10",
        "page_param": "pg", "in": "query",
    ]

    func parse(_ paginate: String) throws -> Job {
        try Job.parse(
            "sources:\n  - {name: a, url: \"http://127.0.0.1:9/\", items: items, paginate: \(paginate)}\n",
            environment: [:])
    }

    @Test("each key named in 'allowed here' is accepted by its style")
    func listedKeysAreAccepted() throws {
        for (style, options) in PaginationStyle.optionNames {
            do {
                _ = try parse("{style: \(style), no_such_key: 1}")
                Issue.record("\(style): an unknown key was accepted")
            } catch {
                let hint = try #require((error as? JobFileError)?.hint)
                let listed = hint.replacingOccurrences(of: "allowed here: ", with: "").components(separatedBy: ", ")
                #expect(Set(listed) == Set(["style"] + options), "\(style): \(hint)")
            }
            for key in options {
                let spec = style == "cursor" && key != "cursor" ? "{style: cursor, cursor: c, \(key): "
                    : style == "next" && key != "next" ? "{style: next, next: n, \(key): "
                    : "{style: \(style), \(key): "
                let value = try #require(Self.values[key])
                #expect(throws: Never.self, "\(style).\(key)") { try parse(spec + value + "}") }
            }
        }
    }

    @Test("offset takes total_items, the same as total")
    func offsetTakesTotalItems() throws {
        let job = try parse("{style: offset, total_items: meta.total}")
        guard case .offset(_, _, _, let total) = job.sources[0].pagination.kind else {
            Issue.record("not an offset walk")
            return
        }
        #expect(total == JSONKeyPath("meta.total"))
    }
}
