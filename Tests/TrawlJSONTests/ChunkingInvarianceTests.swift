import Testing
import TrawlTestSupport
@testable import TrawlJSON

/// The extractor's answer does not depend on where the chunks end: the same elements are handed out before a
/// failure, and the failure is the same, at the same byte, line, column and key path. Every limit is checked at
/// the byte or token that crosses it; whitespace is never part of a token.
@Suite(.hangGuard) struct ChunkingInvarianceTests {
    static let small = JSONLimits(maxDepth: 8, maxTokenBytes: 24, maxElementBytes: 64, maxCaptureBytes: 16)

    /// Extracts whole, split at every offset, and a byte at a time; every run must agree with the whole one.
    func expectInvariant(
        _ text: String, path: JSONKeyPath = .root, capture: [JSONKeyPath] = [], limits: JSONLimits = .init(),
        sourceLocation: SourceLocation = #_sourceLocation
    ) throws -> Extraction {
        let document = Array(text.utf8)
        let whole = try extract(document, path: path, capture: capture, limits: limits)
        var runs: [(String, Extraction)] = [
            ("bytewise", try extract(document, path: path, capture: capture, limits: limits, chunkSize: 1))
        ]
        for split in 0...document.count {
            let run = try extract(document, path: path, capture: capture, limits: limits, splits: [split])
            runs.append(("split \(split)", run))
        }
        for (name, run) in runs {
            #expect(run.lines == whole.lines, "\(name)", sourceLocation: sourceLocation)
            #expect(located(run.error) == located(whole.error), "\(name)", sourceLocation: sourceLocation)
            #expect(run.summary == whole.summary, "\(name)", sourceLocation: sourceLocation)
        }
        return whole
    }

    /// The fuzz finding: fed whole, an element was handed out before the syntax error; in pieces, the captured
    /// field's limit was noticed first, at the end of a piece. Now the capture fails at the token crossing it.
    @Test func elementsBeforeAnErrorDoNotDependOnTheChunking() throws {
        let result = try expectInvariant("[[[[0]]Closed]]]]i", path: "0", capture: ["-1"], limits: Self.small)
        #expect(result.lines == [])
        #expect(located(result.error) == "a captured field is larger than the 16-byte limit at byte 2, line 1, "
            + "column 3, in 0.0")
        let document = Array("[[[[0]]Closed]]]]i".utf8)
        let pieces = try extract(document, path: "0", capture: ["-1"], limits: Self.small, splits: [5, 5])
        #expect(located(pieces.error) == located(result.error))
    }

    /// An element whose last token takes it past the limit fails, whether or not a chunk ends inside it.
    @Test func elementLimitIsCheckedAtTheTokenThatCrossesIt() throws {
        let result = try expectInvariant(
            #"{"items":[[1],[1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20,21,22,23,24,25]]}"#,
            path: "items", limits: Self.small)
        #expect(result.lines == ["[1]"])
        #expect(result.error?.message == "element 1 is larger than the 64-byte limit")
    }

    @Test func aLongStringFailsAtTheFirstBytePastTheLimit() throws {
        let result = try expectInvariant(
            #"{"items":["ok","abcdefghijklmnopqrstuvwxyz0123"]}"#, path: "items", limits: Self.small)
        #expect(result.lines == ["\"ok\""])
        #expect(located(result.error) == "a single token is larger than the 24-byte limit at byte 40, line 1, "
            + "column 41, in items.0")
        // Escapes count as written: 13 escapes are 26 bytes in the document.
        let escaped = try expectInvariant(#"["\n\n\n\n\n\n\n\n\n\n\n\n\n"]"#, limits: Self.small)
        #expect(escaped.error?.code == .tooLarge)
        let exactly = try expectInvariant(#"["abcdefghijklmnopqrstuvwx"]"#, limits: Self.small)
        #expect(exactly.error == nil)
    }

    @Test func aLongNumberFailsAtTheFirstBytePastTheLimit() throws {
        let digits = String(repeating: "1", count: 30)
        for document in ["[1,\(digits)]", "[1,\(digits)", "[1,\(digits).x]", "[1,2\(digits)-3]", "[1 \(digits)]"] {
            let result = try expectInvariant(document, limits: Self.small)
            #expect(result.lines == ["1"], "\(document)")
            #expect(result.error?.code == .tooLarge, "\(document)")
        }
        let exactly = try expectInvariant("[" + String(repeating: "2", count: 24) + "]", limits: Self.small)
        #expect(exactly.error == nil)
    }

    /// yajl steps its offset back over the rejected token for this one message, by its length without quotes.
    @Test func tokenAfterAKeyAndValueIsPlacedAtItsStart() throws {
        let string = try expectInvariant(#"[{"a":1",{"b":"#)
        #expect(located(string.error) == "invalid JSON: after key and value, inside map, I expect ',' or '}' "
            + "at byte 7, line 1, column 8, in 0.a")
        let number = try expectInvariant(#"{"a":"" 12 }"#, path: "a")
        #expect(number.error?.byteOffset == 8)
        let longString = try expectInvariant(#"{"a":1 "a long string, longer than 32 bytes" }"#)
        #expect(longString.error?.byteOffset == 7)
    }

    /// Found by the fuzz target: garbage right after a long number is placed at the garbage, not the number.
    @Test func garbageAfterALongNumberIsPlacedAtTheGarbage() throws {
        let result = try expectInvariant(String(repeating: "3", count: 42) + "h3(")
        #expect(located(result.error) == "unexpected data after the end of the JSON document at byte 42, line 1, "
            + "column 43, in $")
    }

    /// Found by the fuzz target: a string after the root value that yajl rejects at a raw control character is
    /// placed at its opening quote.
    @Test func garbageStringRejectedInsideIsPlacedAtItsQuote() throws {
        let result = try expectInvariant("\r9\"" + String(repeating: "z", count: 60) + "\r9\"\"")
        #expect(result.error?.code == .trailingData)
        #expect(result.error?.byteOffset == 2)
    }

    /// Found by the fuzz target: a string of exactly the limit whose last escape is broken by its closing quote
    /// (`\u000"`). Fed whole it was the syntax error at the quote; cut just before the quote, a token too large.
    @Test func aBrokenEscapeAtTheLimitIsTheSameErrorWhateverTheSplit() throws {
        let result = try expectInvariant(#"{"ilexical err\u0000s\u000""#, limits: Self.small)
        #expect(result.error?.code == .syntax)
        #expect(result.error?.byteOffset == 26)
    }

    /// Found by the fuzz target: a literal ending exactly at a chunk's end, then a number yajl rejects after it
    /// (`{"":null2-`). yajl takes a literal in the chunk it ends in, so the rejected token is the number at byte 16;
    /// split right after `null`, the error was placed at the literal (byte 12). Outside the items (skipped
    /// values) and in any form.
    @Test func aLiteralEndingAChunkIsNotTheTokenRejectedAfterIt() throws {
        for path: JSONKeyPath in ["data.items", "0"] {
            let result = try expectInvariant("[\ntrue,\n{\"\":null2-", path: path)
            #expect(result.error?.byteOffset == 16, "\(path)")
            let document = Array("[\ntrue,\n{\"\":null2-".utf8)
            let counted = try extract(document, path: path, form: .countOnly, splits: [16])
            #expect(counted.error?.byteOffset == 16, "\(path)")
        }
    }

    /// A chunk ending on a backslash inside a long string: the quote after it is escaped, not the string's end.
    @Test func aRejectedStringHeldAcrossAnEscapeIsPlacedAtItsStart() throws {
        let text = "[1 \"" + String(repeating: "a", count: 40) + "\\\"cd\"]"
        let result = try expectInvariant(text)
        #expect(result.error?.byteOffset == 3)
    }

    /// A number held at the end of chunks is refused once it passes the limit, before it ends (memory stays
    /// bounded by the limit).
    @Test func aNumberHeldAcrossChunksIsRefusedBeforeItEnds() throws {
        let extractor = try JSONExtractor(path: "items", limits: JSONLimits(maxTokenBytes: 4096))
        try extractor.feed(Array(#"{"items":[1"#.utf8))
        let digits = [UInt8](repeating: UInt8(ascii: "7"), count: 100)
        var refusedAfter: Int?
        for chunk in 1...100 {
            do { try extractor.feed(digits) } catch let error as JSONError {
                #expect(error.code == .tooLarge)
                #expect(error.byteOffset == 10 + 4096)
                refusedAfter = chunk
                break
            }
        }
        #expect((41...82).contains(refusedAfter ?? 0), "held input is coalesced up to twice the limit")
    }

    /// Issue 22: whitespace between tokens is not a token, however much of it there is.
    @Test func runsOfWhitespaceDoNotCountTowardTheTokenLimit() throws {
        let limits = JSONLimits(maxTokenBytes: 4096)
        let gap = [UInt8](repeating: UInt8(ascii: " "), count: 1 << 20)
        let extractor = try JSONExtractor(path: "items", limits: limits)
        var lines: [UInt8] = []
        try extractor.feed(Array(#"{"items":[1,"#.utf8), appendingLinesTo: &lines)
        for separator in ["\n", "\t", "\r\n", " "] {
            for _ in 0..<3 { try extractor.feed(gap, appendingLinesTo: &lines) }
            try extractor.feed(Array(separator.utf8), appendingLinesTo: &lines)
        }
        try extractor.feed(Array(#"2,{"a" :   "b"}  ]  }"#.utf8), appendingLinesTo: &lines)
        try extractor.feed(gap, appendingLinesTo: &lines)
        let summary = try extractor.finish(appendingLinesTo: &lines)
        #expect(summary.elementCount == 3)
        #expect(String(decoding: lines, as: UTF8.self) == "1\n2\n{\"a\":\"b\"}\n")
    }

    /// 200 MB of whitespace between items with the default limits (64 MiB tokens), generated as a stream.
    @Test func twoHundredMegabytesOfWhitespaceBetweenItems() throws {
        let gap = [UInt8](repeating: UInt8(ascii: " "), count: 4 << 20)
        let extractor = try JSONExtractor(path: "items")
        var lines: [UInt8] = []
        try extractor.feed(Array(#"{"items":["a","#.utf8), appendingLinesTo: &lines)
        for _ in 0..<50 { try extractor.feed(gap, appendingLinesTo: &lines) }
        try extractor.feed(Array(#""b"]}"#.utf8), appendingLinesTo: &lines)
        let summary = try extractor.finish(appendingLinesTo: &lines)
        #expect(summary.elementCount == 2)
        #expect(summary.byteCount > 200 << 20)
        #expect(String(decoding: lines, as: UTF8.self) == "\"a\"\n\"b\"\n")
    }

    @Test func whitespaceOnlyIsAnEmptyDocumentWhateverItsLength() throws {
        let extractor = try JSONExtractor(path: "items", limits: JSONLimits(maxTokenBytes: 4096))
        for _ in 0..<8 { try extractor.feed([UInt8](repeating: UInt8(ascii: "\n"), count: 100_000)) }
        #expect(throws: JSONError.self) { _ = try extractor.finish() }
        do {
            let fresh = try JSONExtractor(path: "items", limits: JSONLimits(maxTokenBytes: 4096))
            try fresh.feed([UInt8](repeating: UInt8(ascii: " "), count: 100_000))
            _ = try fresh.finish()
        } catch let error as JSONError {
            #expect(error.code == .empty)
            #expect(error.message == "empty document: no JSON value")
        }
    }

    /// Generated broken documents (a fixed seed): every split agrees with the whole run.
    @Test func generatedDocumentsAgreeWhateverTheSplit() throws {
        var state: UInt64 = 0x2545_F491_4F6C_DD1D
        func next(_ bound: Int) -> Int {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return Int((state >> 33) % UInt64(bound))
        }
        let alphabet = Array("[]{}:,\"\"\"  \n1230.e-+truefalsenullab\\u00".utf8)
        let starts = ["[", "{\"a\":[", "[[", "{\"a\":", "[\"", "[1111111111"]
        let paths: [(JSONKeyPath, [JSONKeyPath])] = [("", []), ("0", ["-1"]), ("a", ["b"]), ("a.0", [])]
        for round in 0..<400 {
            var document = Array(starts[next(starts.count)].utf8)
            for _ in 0..<(1 + next(40)) { document.append(alphabet[next(alphabet.count)]) }
            let (path, capture) = paths[next(paths.count)]
            let limits = next(2) == 0 ? Self.small : JSONLimits()
            let whole = try extract(document, path: path, capture: capture, limits: limits)
            for split in 1..<document.count {
                let run = try extract(document, path: path, capture: capture, limits: limits, splits: [split])
                let text = String(decoding: document, as: UTF8.self)
                let name = "round \(round) \(text.debugDescription) split \(split)"
                #expect(run.lines == whole.lines, "\(name)")
                #expect(located(run.error) == located(whole.error), "\(name)")
            }
        }
    }
}
