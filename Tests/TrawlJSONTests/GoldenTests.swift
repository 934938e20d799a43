import Testing
import TrawlTestSupport
@testable import TrawlJSON

/// A document, a key path, and the JSON Lines the extractor must produce for it.
struct GoldenCase: CustomTestStringConvertible, Sendable {
    var name: String
    var document: String
    var path: JSONKeyPath
    var expected: [String]
    var collection: JSONExtractor.Summary.Collection = .array
    var testDescription: String { name }
}

let goldenCases: [GoldenCase] = [
    GoldenCase(
        name: "decoys at other depths",
        document: """
            {"meta": {"items": ["decoy"], "count": 2},
             "items": [ {"id": 1, "items": [9, 9]}, {"id": 2, "child": {"items": "no"}} ],
             "after": {"items": [0]}}
            """,
        path: "items",
        expected: [#"{"id":1,"items":[9,9]}"#, #"{"id":2,"child":{"items":"no"}}"#]),
    GoldenCase(
        name: "nested path",
        document: #"{"data": {"results": [1, 2.50, -3e+2, true, false, null], "next": null}}"#,
        path: "data.results",
        expected: ["1", "2.50", "-3e+2", "true", "false", "null"]),
    GoldenCase(
        name: "root array with nested arrays",
        document: " [ [1, [2, [3]]], [], {}, [{}] ] ",
        path: "",
        expected: ["[1,[2,[3]]]", "[]", "{}", "[{}]"]),
    GoldenCase(
        name: "empty array",
        document: #"{"items": [], "total": 0}"#,
        path: "items",
        expected: []),
    GoldenCase(
        name: "missing path",
        document: #"{"data": [1, 2]}"#,
        path: "items",
        expected: [],
        collection: .missing),
    GoldenCase(
        name: "object at the path is one element",
        document: #"{"item": {"a": [1, {"b": "c"}]}}"#,
        path: "item",
        expected: [#"{"a":[1,{"b":"c"}]}"#],
        collection: .value),
    GoldenCase(
        name: "scalar at the path is one element",
        document: #"{"count": 12345678901234567890123}"#,
        path: "count",
        expected: ["12345678901234567890123"],
        collection: .value),
    GoldenCase(
        name: "escapes and unicode",
        document: #"{"items": ["a\"b\\c\/d", "tab\there\nnew", "\u00e9t\u00E9 caf\u00e9", "日本語 ✓ 😀", "#
            + #""\ud83d\ude00", "\u0000\u001f"]}"#,
        path: "items",
        expected: [
            #""a\"b\\c/d""#, #""tab\there\nnew""#, #""été café""#, #""日本語 ✓ 😀""#, #""😀""#,
            #""\u0000\u001f""#,
        ]),
    GoldenCase(
        name: "index into an array, and numeric object keys",
        document: #"{"pages": [{"items": [1]}, {"items": [2, 3]}], "0": {"items": ["zero"]}}"#,
        path: "pages.1.items",
        expected: ["2", "3"]),
    GoldenCase(
        name: "numeric component matches an object key",
        document: #"{"pages": [{"items": [1]}], "0": {"items": ["zero"]}}"#,
        path: "0.items",
        expected: [#""zero""#]),
    GoldenCase(
        // Duplicates inside an element or off the path are kept as sent; a duplicated key on the items path is
        // an error (DuplicateItemsTests).
        name: "duplicate keys keep every occurrence as sent",
        document: #"{"items": [{"a": 1, "a": 2}], "other": [3], "other": 4}"#,
        path: "items",
        expected: [#"{"a":1,"a":2}"#]),
    GoldenCase(
        name: "huge and precise numbers as written",
        document: #"[9223372036854775808, -9223372036854775809, 1e400, 0.1000000000000000000001, -0]"#,
        path: "$",
        expected: ["9223372036854775808", "-9223372036854775809", "1e400", "0.1000000000000000000001", "-0"]),
    GoldenCase(
        name: "pretty printed with CRLF",
        document: "{\r\n  \"items\" : [\r\n    { \"k\" : \"v\" } ,\r\n    [ ]\r\n  ]\r\n}\r\n",
        path: "items",
        expected: [#"{"k":"v"}"#, "[]"]),
]

@Suite(.hangGuard) struct GoldenTests {
    @Test(arguments: goldenCases)
    func extractsElements(_ golden: GoldenCase) throws {
        for form in [JSONExtractor.Form.json, .values] {
            let result = try extract(golden.document, path: golden.path, form: form)
            #expect(result.error == nil)
            #expect(result.lines == golden.expected, "form \(form)")
            #expect(result.summary?.collection == golden.collection)
            #expect(result.summary?.elementCount == golden.expected.count)
        }
        let counted = try extract(golden.document, path: golden.path, form: .countOnly)
        #expect(counted.lines.isEmpty)
        #expect(counted.summary?.elementCount == golden.expected.count)
    }

    /// Every way of cutting the document in two, and one byte at a time, gives the same output.
    @Test(arguments: goldenCases)
    func isChunkBoundaryInvariant(_ golden: GoldenCase) throws {
        let bytes = Array(golden.document.utf8)
        for form in [JSONExtractor.Form.json, .values] {
            let whole = try extract(bytes, path: golden.path, form: form)
            for split in 0...bytes.count {
                let result = try extract(bytes, path: golden.path, form: form, splits: [split])
                #expect(result.lines == whole.lines, "split at \(split)")
                #expect(result.summary == whole.summary, "split at \(split)")
            }
            let bytewise = try extract(bytes, path: golden.path, form: form, chunkSize: 1)
            #expect(bytewise.lines == whole.lines)
            #expect(bytewise.summary == whole.summary)
        }
    }

    @Test func elementsAreValidJSONForFoundation() throws {
        for golden in goldenCases {
            let result = try extract(golden.document, path: golden.path)
            for line in result.lines {
                #expect(throws: Never.self) {
                    _ = try JSONItemDecoder().decode(JSONValue.self, from: Array(line.utf8))
                }
            }
        }
    }

    @Test func elementIndicesCountFromZero() throws {
        let extractor = try JSONExtractor(path: "a")
        var indices: [Int] = []
        try extractor.feed(Array(#"{"a":[1,2"#.utf8)) { indices.append($0.index) }
        try extractor.feed(Array(#",3]}"#.utf8)) { indices.append($0.index) }
        _ = try extractor.finish { indices.append($0.index) }
        #expect(indices == [0, 1, 2])
    }

    @Test func elementsCompletedInAChunkAreHandedOutWithIt() throws {
        let extractor = try JSONExtractor(path: "a")
        var seen: [String] = []
        try extractor.feed(Array(#"{"a":[{"x":1},{"y""#.utf8)) { seen.append(String(decoding: $0.json, as: UTF8.self)) }
        #expect(seen == [#"{"x":1}"#])
        try extractor.feed(Array(#":2}]}"#.utf8)) { seen.append(String(decoding: $0.json, as: UTF8.self)) }
        #expect(seen == [#"{"x":1}"#, #"{"y":2}"#])
    }
}
