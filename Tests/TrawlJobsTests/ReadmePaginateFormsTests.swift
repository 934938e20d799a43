import Foundation
import Testing

@testable import Trawl
@testable import TrawlJobs
import TrawlTestSupport

/// docs/jobs.md shows every form of `paginate:`; each must parse into the style it documents.
@Suite("Documented paginate forms", .hangGuard)
struct ReadmePaginateFormsTests {
    /// The `paginate.yaml` block of docs/jobs.md.
    static func block() throws -> String {
        let block = try codeBlock("yaml", after: "Each `paginate:` form", in: try docsFile("jobs.md"))
        #expect(block.hasPrefix("# paginate.yaml"))
        return block
    }

    @Test("every form in docs/jobs.md parses, and every style and option of a style appears")
    func everyFormParses() throws {
        let job = try Job.parse(try Self.block(), file: "paginate.yaml", environment: [:])
        var kinds: Set<String> = []
        for source in job.sources {
            kinds.insert(String(source.pagination.canonicalDescription.prefix { $0 != " " }))
        }
        #expect(kinds == Set(PaginationStyle.styleNames))
        let text = try Self.block()
        // Aliases (page's total, offset's total, cursor's and link's param) need not be shown.
        let aliases: Set<String> = ["page.total", "offset.total", "cursor.param", "link.param"]
        for (style, options) in PaginationStyle.optionNames {
            for option in options where !aliases.contains("\(style).\(option)") {
                #expect(text.contains("\(option):"), "docs/jobs.md shows no \(style) option \(option)")
            }
        }
    }
}
