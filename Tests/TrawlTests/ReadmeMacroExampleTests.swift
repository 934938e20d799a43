// Built with the trait "Macros" only: `swift test --traits Macros` (.ci/run).
#if Macros
// BEGIN DOC docs/library.md "@JSONFieldsDecodable": a copy of its swift block, checked by docBlockIsVerbatim.
import Foundation
import Trawl
import TrawlMacros   // .product(name: "TrawlMacros", package: "Trawl"), with traits: ["Macros"]

@JSONFieldsDecodable
struct Project: Decodable {
    let id: Int
    let fullName: String
    let owner: Account          // @JSONFieldsDecodable too, or any Decodable
    let topics: [String]
    let pushedAt: Date?         // decodeIfPresent: missing or null is nil

    enum CodingKeys: String, CodingKey {
        case id, owner, topics
        case fullName = "full_name"
        case pushedAt = "pushed_at"
    }
}

@JSONFieldsDecodable
struct Account: Decodable {
    let login: String
    var siteAdmin = false       // left out of CodingKeys: keeps its value

    enum CodingKeys: String, CodingKey { case login }
}
// END DOC

import Testing
import TrawlTestSupport

@Suite("docs/library.md @JSONFieldsDecodable example", .hangGuard)
struct ReadmeMacroExampleTests {
    /// The swift block after docs/library.md's "Or let the `@JSONFieldsDecodable` macro" paragraph.
    static func docBlock() throws -> String {
        try codeBlock("swift", after: "Or let the `@JSONFieldsDecodable` macro", in: try docsFile("library.md"))
    }

    @Test("the compiled copy is docs/library.md's block, character for character")
    func docBlockIsVerbatim() throws {
        if let difference = firstDifference(
            documented: try Self.docBlock(), copy: try compiledCopy(), documentedIn: "docs/library.md's macro block") {
            Issue.record(Comment(rawValue: difference))
        }
    }

    @Test("the example reads what its comments say, through init(fields:)")
    func exampleDecodes() throws {
        #expect((Project.self as Any.Type) is any JSONFieldsDecodable.Type)
        let text = #"""
            {"items":[{"id":1,"full_name":"a/b","owner":{"login":"a","siteAdmin":true},"topics":["x"],"pushed_at":null},
                      {"id":2,"full_name":"c/d","owner":{"login":"c"},"topics":[]}]}
            """#
        let projects = try JSONItemDecoder().decode([Project].self, from: Array(text.utf8), at: "items")
        #expect(projects.map(\.fullName) == ["a/b", "c/d"])
        #expect(projects.map(\.owner.login) == ["a", "c"])
        #expect(projects.allSatisfy { $0.pushedAt == nil && !$0.owner.siteAdmin })
        #expect(throws: DecodingError.self) {
            try JSONItemDecoder().decode([Project].self, from: Array(#"{"items":[{"id":1}]}"#.utf8), at: "items")
        }
    }
}
#endif
