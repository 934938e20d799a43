import Testing
import TrawlTestSupport

@testable import TrawlJSON

/// A duplicated key on the items path would mix two collections into one output: the document is refused at the
/// second occurrence (issue 22). Off the path, duplicates are kept as sent.
@Suite("duplicated keys on the items path are an error, never both arrays", .hangGuard)
struct DuplicateItemsTests {
    @Test("the items key twice, a parent key twice, a value then an array: refused at the second")
    func duplicatedOnThePath() throws {
        let cases: [(String, JSONKeyPath, [String])] = [
            (#"{"items":[1,2],"items":[3]}"#, "items", ["1", "2"]),
            (#"{"items":[1],"items":5}"#, "items", ["1"]),
            (#"{"data":{"items":[1]},"data":{"items":[2]}}"#, "data.items", ["1"]),
            (#"{"items":5,"items":[1]}"#, "items", ["5"]),
        ]
        for (document, path, before) in cases {
            for form in [JSONExtractor.Form.json, .values] {
                for chunkSize in [nil, 1, 3] {
                    let result = try extract(document, path: path, form: form, chunkSize: chunkSize)
                    #expect(result.error?.code == .duplicateKey, "\(document) \(form) \(String(describing: chunkSize))")
                    #expect(result.lines == before, "\(document)")
                    #expect(result.error?.message.contains("appears twice") == true)
                }
            }
        }
    }

    @Test("the same key name elsewhere, or inside the elements, is not a duplicate of the path")
    func notOnThePath() throws {
        let result = try extract(#"{"items":[{"items":1,"items":2}],"x":{"items":[9]},"y":1,"y":2}"#, path: "items")
        #expect(result.error == nil)
        #expect(result.lines == [#"{"items":1,"items":2}"#])
    }
}
