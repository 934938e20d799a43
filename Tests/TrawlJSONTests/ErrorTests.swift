import Testing
import TrawlTestSupport
@testable import TrawlJSON

/// A bad document, the elements that complete before the error, and the exact error.
struct BadCase: CustomTestStringConvertible, Sendable {
    var name: String
    var document: [UInt8]
    var path: JSONKeyPath = "items"
    var delivered: [String] = []
    var code: JSONError.Code
    /// The full description when the document is fed whole.
    var description: String
    var testDescription: String { name }

    init(
        _ name: String, _ document: String, path: JSONKeyPath = "items", delivered: [String] = [],
        code: JSONError.Code, _ description: String
    ) {
        self.init(name, Array(document.utf8), path: path, delivered: delivered, code: code, description)
    }

    init(
        _ name: String, _ document: [UInt8], path: JSONKeyPath = "items", delivered: [String] = [],
        code: JSONError.Code, _ description: String
    ) {
        self.name = name
        self.document = document
        self.path = path
        self.delivered = delivered
        self.code = code
        self.description = description
    }
}

let badCases: [BadCase] = [
    BadCase(
        "HTML error page", "<!DOCTYPE html><html><body>502 Bad Gateway</body></html>", code: .html,
        "body is HTML, not JSON (the server returned an error page?) at byte 0, line 1, column 1, in $, "
            + "near: >><!DOCTYPE html><"),
    BadCase(
        "HTML after whitespace", "\n  <html><body>Error</body></html>", code: .html,
        "body is HTML, not JSON (the server returned an error page?) at byte 3, line 2, column 3, in $, "
            + "near: \\n  >><html><body>Erro"),
    BadCase(
        "UTF-8 byte order mark", "\u{FEFF}{\"items\":[1]}", code: .byteOrderMark,
        "UTF-8 BOM at start at byte 0, line 1, column 1, in $, near: >>\\u{FEFF}{\"items\":[1]}"),
    BadCase(
        "truncated", "{\"items\":[1,2,{\"a\":", delivered: ["1", "2"], code: .truncated,
        "response ended early (truncated at byte 19) at byte 19, line 1, column 20, in items.2.a, "
            + "near: {\"items\":[1,2,{\"a\":>>"),
    BadCase(
        "truncated inside a string", "{\"items\":[\"abc", code: .truncated,
        "response ended early (truncated at byte 14) at byte 14, line 1, column 15, in items, "
            + "near: {\"items\":[\"abc>>"),
    BadCase(
        "trailing garbage", "{\"items\":[1,2]} x", delivered: ["1", "2"], code: .trailingData,
        "unexpected data after the end of the JSON document at byte 16, line 1, column 17, in $, "
            + "near: {\"items\":[1,2]} >>x"),
    BadCase(
        "two concatenated documents", "{\"items\":[1]}\n{\"items\":[2]}\n", delivered: ["1"], code: .trailingData,
        "a second JSON document follows the first (JSON Lines is not JSON) at byte 14, line 2, column 1, in $, "
            + "near: {\"items\":[1]}\\n>>{\"items\":[2]}\\n"),
    BadCase(
        "two root scalars", "1 2", path: "", delivered: ["1"], code: .trailingData,
        "unexpected data after the end of the JSON document at byte 2, line 1, column 3, in $, near: 1 >>2"),
    BadCase(
        "missing comma", "{\"items\":[1,2 3]}", delivered: ["1", "2"], code: .syntax,
        "invalid JSON: after array element, I expect ',' or ']' at byte 14, line 1, column 15, in items.1, "
            + "near: {\"items\":[1,2 >>3]}"),
    BadCase(
        "trailing comma", "{\"items\":[1,]}", delivered: ["1"], code: .syntax,
        "invalid JSON: unallowed token at this point in JSON text at byte 12, line 1, column 13, in items.0, "
            + "near: {\"items\":[1,>>]}"),
    BadCase(
        "bad literal on line 2", "{\"items\":[{\"a\":1,\n\"b\":tru}]}", code: .syntax,
        "invalid JSON: invalid string in json text at byte 25, line 2, column 8, in items.0.b, "
            + "near: \"items\":[{\"a\":1,\\n\"b\":tru>>}]}"),
    BadCase("empty body", "", code: .empty, "empty document: no JSON value at byte 0, line 1, column 1, in $"),
    BadCase(
        "whitespace only", "   \n  ", code: .empty,
        "empty document: no JSON value at byte 0, line 1, column 1, in $, near: >>   \\n  "),
    BadCase(
        "lone high surrogate escape", "{\"items\":[\"\\ud800\"]}", code: .invalidUTF8,
        "invalid UTF-8: \\uD800 escape is half a surrogate pair at byte 11, line 1, column 12, in items, "
            + "near: {\"items\":[\">>\\ud800\"]}"),
    BadCase(
        "lone low surrogate escape", "{\"items\":[\"ok\",\"\\udc00\"]}", delivered: ["\"ok\""], code: .invalidUTF8,
        "invalid UTF-8: \\uDC00 escape is half a surrogate pair at byte 16, line 1, column 17, in items.0, "
            + "near: {\"items\":[\"ok\",\">>\\udc00\"]}"),
    BadCase(
        "high surrogate then a non-surrogate escape", "[\"\\ud83d\\u0041\"]", path: "", code: .invalidUTF8,
        "invalid UTF-8: \\uD83D escape is half a surrogate pair at byte 2, line 1, column 3, in $, "
            + "near: [\">>\\ud83d\\u0041\"]"),
    BadCase(
        "vertical tab", "{\"items\":[1,\u{0B}2]}", delivered: ["1"], code: .syntax,
        "invalid JSON: control character 0x0B at byte 12, line 1, column 13, in items.0, "
            + "near: {\"items\":[1,>>\\x0B2]}"),
    BadCase(
        "overlong encoding", [0x5B, 0x22, 0xC0, 0xAF, 0x22, 0x5D], path: "", code: .invalidUTF8,
        "invalid UTF-8: overlong encoding at byte 2, line 1, column 3, in $, near: [\">>\\xC0\\xAF\"]"),
    BadCase(
        "overlong three-byte encoding", [0x5B, 0x22, 0xE0, 0x80, 0xAF, 0x22, 0x5D], path: "", code: .invalidUTF8,
        "invalid UTF-8: overlong encoding at byte 2, line 1, column 3, in $, near: [\">>\\xE0\\x80\\xAF\"]"),
    BadCase(
        "encoded surrogate", [0x5B, 0x22, 0xED, 0xA0, 0x80, 0x22, 0x5D], path: "", code: .invalidUTF8,
        "invalid UTF-8: encoded surrogate at byte 2, line 1, column 3, in $, near: [\">>\\xED\\xA0\\x80\"]"),
    BadCase(
        "above U+10FFFF", [0x5B, 0x22, 0xF4, 0x90, 0x80, 0x80, 0x22, 0x5D], path: "", code: .invalidUTF8,
        "invalid UTF-8: code point above U+10FFFF at byte 2, line 1, column 3, in $, "
            + "near: [\">>\\xF4\\x90\\x80\\x80\"]"),
    BadCase(
        "invalid byte", [0x5B, 0x31, 0x2C, 0x22, 0xFF, 0x22, 0x5D], path: "", delivered: ["1"], code: .invalidUTF8,
        "invalid UTF-8: invalid byte 0xFF at byte 4, line 1, column 5, in 0, near: [1,\">>\\xFF\"]"),
    BadCase(
        "truncated sequence", [0x5B, 0x22, 0xE2, 0x82, 0x22, 0x5D], path: "", code: .invalidUTF8,
        "invalid UTF-8: truncated multi-byte sequence at byte 2, line 1, column 3, in $, near: [\">>\\xE2\\x82\"]"),
    BadCase(
        "stray continuation byte", [0x5B, 0x22, 0x80, 0x22, 0x5D], path: "", code: .invalidUTF8,
        "invalid UTF-8: unexpected continuation byte 0x80 at byte 2, line 1, column 3, in $, near: [\">>\\x80\"]"),
]

/// The error without its excerpt, which shows whatever bytes are still in memory.
func located(_ error: JSONError?) -> String {
    guard var error else { return "no error" }
    error.excerpt = nil
    return error.description
}

@Suite(.hangGuard) struct ErrorTests {
    @Test(arguments: badCases)
    func reportsWhatAndWhere(_ bad: BadCase) throws {
        let result = try extract(bad.document, path: bad.path)
        #expect(result.lines == bad.delivered)
        #expect(result.error?.code == bad.code)
        #expect(result.error?.description == bad.description)
    }

    @Test(arguments: badCases)
    func isChunkBoundaryInvariant(_ bad: BadCase) throws {
        let whole = try extract(bad.document, path: bad.path)
        for split in 0...bad.document.count {
            let result = try extract(bad.document, path: bad.path, splits: [split])
            #expect(result.lines == bad.delivered, "split at \(split)")
            #expect(located(result.error) == located(whole.error), "split at \(split)")
        }
        let bytewise = try extract(bad.document, path: bad.path, chunkSize: 1)
        #expect(bytewise.lines == bad.delivered)
        #expect(located(bytewise.error) == located(whole.error))
    }

    @Test func aMillionOpeningBrackets() throws {
        let document = [UInt8](repeating: UInt8(ascii: "["), count: 1_000_000)
        let result = try extract(document, path: "", chunkSize: 65536)
        #expect(result.error?.code == .tooDeep)
        let expected = "nesting deeper than 512 at byte 512, line 1, column 513, in 0.0.0.0.0.….0.0.0.0.0"
        #expect(located(result.error) == expected)
    }

    @Test func depthLimitAppliesInsideSkippedContainers() throws {
        let document = "{\"other\":" + String(repeating: "[", count: 600) + "], \"items\": []}"
        let result = try extract(document, path: "items", limits: JSONLimits(maxDepth: 100))
        #expect(result.error?.code == .tooDeep)
        #expect(result.error?.byteOffset == 9 + 99)
        #expect(result.error?.message == "nesting deeper than 100")
    }

    @Test func laterCallsRethrowTheError() throws {
        let extractor = try JSONExtractor(path: "items")
        #expect(throws: JSONError.self) { try extractor.feed(Array("{\"items\":[1,]".utf8)) }
        #expect(throws: JSONError.self) { try extractor.feed(Array("2]}".utf8)) }
        #expect(throws: JSONError.self) { _ = try extractor.finish() }
    }

    @Test func errorsFromTheElementHandlerStopTheExtraction() throws {
        struct Stop: Error {}
        let extractor = try JSONExtractor(path: "")
        var seen = 0
        #expect(throws: Stop.self) {
            try extractor.feed(Array("[1,2,3]".utf8)) { _ in
                seen += 1
                if seen == 2 { throw Stop() }
            }
        }
        #expect(seen == 2)
        #expect(throws: Stop.self) { _ = try extractor.finish() }
    }

    @Test func itemPathsCannotCountFromTheEnd() throws {
        #expect(throws: JSONError.self) { _ = try JSONExtractor(path: "data.-1") }
        #expect(throws: JSONError.self) { _ = try JSONExtractor(path: "a", capture: ["x.-1.y.-2"]) }
    }
}

@Suite(.hangGuard) struct LimitTests {
    /// The linear-time path for long tokens: a 40 MB string fed 16 KB at a time.
    @Test func fortyMegabyteStringInSixteenKilobyteChunks() throws {
        let length = 40 << 20
        // Built through String, whose bulk operations are fast in debug builds too.
        let kilobyte = String(repeating: "a", count: 1024)
        let document = Array(("{\"items\":[\"" + String(repeating: kilobyte, count: length / 1024) + "\",1]}").utf8)
        let extractor = try JSONExtractor(path: "items")
        var sizes: [Int] = []
        var start = 0
        while start < document.count {
            let end = min(start + (16 << 10), document.count)
            try extractor.feed(document[start..<end]) { sizes.append($0.json.count) }
            start = end
        }
        _ = try extractor.finish { sizes.append($0.json.count) }
        #expect(sizes == [length + 2, 1])
    }

    @Test func tokenLimit() throws {
        let document = "{\"items\":[\"" + String(repeating: "x", count: 5000) + "\"]}"
        let limits = JSONLimits(maxTokenBytes: 1000)
        let whole = try extract(document, path: "items", limits: limits)
        #expect(whole.error?.code == .tooLarge)
        #expect(whole.error?.message == "a single token is larger than the 1000-byte limit")
        let chunked = try extract(document, path: "items", limits: limits, chunkSize: 100)
        #expect(chunked.error?.code == .tooLarge)
        #expect(chunked.error?.message == "a single token is larger than the 1000-byte limit")
    }

    @Test func longRunsOfSmallTokensAreNotOneLongToken() throws {
        for literal in ["true", "null", "1", "\"s\"", "[]"] {
            let run = Array(repeating: literal, count: 20000).joined(separator: ",")
            let document = "{\"skip\":[" + run + "],\"items\":[1]}"
            let result = try extract(document, path: "items", limits: JSONLimits(maxTokenBytes: 4096), chunkSize: 1000)
            #expect(result.error == nil, "\(literal)")
            #expect(result.lines == ["1"])
        }
    }

    @Test func elementLimit() throws {
        let big = "[" + Array(repeating: "1", count: 3000).joined(separator: ",") + "]"
        let document = "{\"items\":[[1]," + big + "]}"
        let result = try extract(document, path: "items", limits: JSONLimits(maxElementBytes: 4096), chunkSize: 512)
        #expect(result.lines == ["[1]"])
        #expect(result.error?.code == .tooLarge)
        #expect(result.error?.message == "element 1 is larger than the 4 KiB limit")
    }

    @Test func captureLimit() throws {
        let document = "{\"meta\":\"" + String(repeating: "m", count: 3000) + "\",\"items\":[]}"
        let result = try extract(document, path: "items", capture: ["meta"], limits: JSONLimits(maxCaptureBytes: 1024))
        #expect(result.error?.code == .tooLarge)
        #expect(result.error?.message == "a captured field is larger than the 1 KiB limit")
    }
}
