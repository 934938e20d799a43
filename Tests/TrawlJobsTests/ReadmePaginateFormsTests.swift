import Foundation
import Testing
import TrawlTestSupport

@testable import Trawl
@testable import TrawlJobs

/// README shows every form of `paginate:`; each must parse into the style it documents.
@Suite("README paginate forms", .hangGuard)
struct ReadmePaginateFormsTests {
    static func block() throws -> String {
        let url = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("README.md")
        let readme = try String(contentsOf: url, encoding: .utf8)
        let marker = "```yaml\n# paginate.yaml"
        let start = try #require(readme.range(of: marker))
        let body = readme[start.upperBound...]
        let end = try #require(body.range(of: "```"))
        return "# paginate.yaml" + String(body[..<end.lowerBound])
    }

    @Test("every form in README parses, and every style and option of a style appears")
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
                #expect(text.contains("\(option):"), "README shows no \(style) option \(option)")
            }
        }
    }
}
