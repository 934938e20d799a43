import Foundation
import Testing
import TrawlTestSupport
@testable import TrawlJSON

/// The fast element output (`feed(_:appendingLinesTo:)`, straight from the recorded compact JSON) writes
/// byte for byte what the element path and the event writer write, over generated documents with escapes,
/// unicode, big numbers, deep nesting and random whitespace, fed in random chunks.
@Suite(.hangGuard) struct ElementOutputTests {
    /// Random JSON text, compact or with whitespace, and the compact form every writer must produce.
    struct Document {
        var random: DifferentialTests.Generator
        var pretty: Bool
        var text = ""

        mutating func space() {
            guard pretty, Int.random(in: 0..<3, using: &random) == 0 else { return }
            text += [" ", "\n", "\t", "\r\n  "].randomElement(using: &random) ?? " "
        }

        mutating func string() {
            let pieces = [
                "plain", "with space", "é", "日本", "😀", "\"", "\\", "/", "\n", "\t", "\u{01}", "\u{1F}", "\u{7F}",
                "\u{2028}", "",
            ]
            text += "\""
            for _ in 0..<Int.random(in: 0..<5, using: &random) {
                let piece = pieces.randomElement(using: &random) ?? ""
                for scalar in piece.unicodeScalars {
                    switch scalar {
                    case "\"": text += "\\\""
                    case "\\": text += "\\\\"
                    case "\n": text += Bool.random(using: &random) ? "\\n" : "\\u000a"
                    case "\t": text += "\\t"
                    case "/": text += Bool.random(using: &random) ? "\\/" : "/"
                    case _ where scalar.value < 0x20: text += String(format: "\\u%04x", scalar.value)
                    case _ where scalar.value > 0x7F && Int.random(in: 0..<3, using: &random) == 0:
                        for unit in String(scalar).utf16 { text += String(format: "\\u%04X", unit) }
                    default: text.unicodeScalars.append(scalar)
                    }
                }
            }
            text += "\""
        }

        mutating func number() {
            let spellings = [
                "0", "-0", "7", "-12", "3.25", "1e10", "-2.5E-3", "18446744073709551616", "-9223372036854775809",
                "123456789012345678901234567890.123456789e+300", "0.000000000000000000001",
            ]
            text += spellings.randomElement(using: &random) ?? "0"
        }

        mutating func value(depth: Int) {
            space()
            switch Int.random(in: 0..<(depth > 6 ? 5 : 8), using: &random) {
            case 0: text += "null"
            case 1: text += Bool.random(using: &random) ? "true" : "false"
            case 2, 3: number()
            case 4: string()
            case 5:
                text += "["
                let n = Int.random(in: 0..<4, using: &random)
                for i in 0..<n {
                    if i > 0 { text += "," }
                    value(depth: depth + 1)
                }
                space()
                text += "]"
            default:
                text += "{"
                let n = Int.random(in: 0..<4, using: &random)
                for i in 0..<n {
                    if i > 0 { text += "," }
                    space()
                    string()
                    space()
                    text += ":"
                    value(depth: depth + 1)
                }
                space()
                text += "}"
            }
            space()
        }

        /// `{"meta":…,"items":[…],"next":…}` with `count` random items.
        mutating func page(count: Int) {
            text += "{\"meta\":"
            value(depth: 3)
            text += ",\"items\":["
            for i in 0..<count {
                if i > 0 { text += "," }
                value(depth: 0)
            }
            text += "],\"next\":"
            value(depth: 3)
            text += "}"
        }
    }

    /// The lines of `bytes`, fed at `cuts`, through the given path.
    static func lines(_ bytes: [UInt8], cuts: [Int], form: JSONExtractor.Form, fast: Bool) throws -> [UInt8] {
        let extractor = try JSONExtractor(path: "items", capture: ["next", "meta"], form: form)
        var out: [UInt8] = []
        let collect: (JSONElement) -> Void = { element in
            out.append(contentsOf: element.json)
            out.append(UInt8(ascii: "\n"))
        }
        var start = 0
        for cut in cuts + [bytes.count] where cut >= start {
            if fast {
                try extractor.feed(bytes[start..<cut], appendingLinesTo: &out)
            } else {
                try extractor.feed(bytes[start..<cut], onElement: collect)
            }
            start = cut
        }
        _ = fast ? try extractor.finish(appendingLinesTo: &out) : try extractor.finish(onElement: collect)
        return out
    }

    @Test(arguments: [false, true])
    func fastLinesMatchElementAndEventWriters(pretty: Bool) throws {
        var checked = 0
        for seed in UInt64(1)...60 {
            var document = Document(random: .init(state: seed &* 7919), pretty: pretty)
            document.page(count: Int.random(in: 0..<40, using: &document.random))
            let bytes = Array(document.text.utf8)
            var cuts: [Int] = []
            var position = 0
            while position < bytes.count {
                position += Int.random(in: 1...max(1, bytes.count / 3), using: &document.random)
                if position < bytes.count { cuts.append(position) }
            }
            let fast = try Self.lines(bytes, cuts: cuts, form: .json, fast: true)
            let elements = try Self.lines(bytes, cuts: cuts, form: .json, fast: false)
            let events = try Self.lines(bytes, cuts: cuts, form: .values, fast: false)
            #expect(fast == elements, "seed \(seed): \(document.text)")
            #expect(fast == events, "seed \(seed): \(document.text)")
            checked += fast.count(where: { $0 == UInt8(ascii: "\n") })
        }
        #expect(checked > 200)
    }

    @Test func fastLinesAreAppendedAfterWhatTheBufferHeld() throws {
        let extractor = try JSONExtractor(path: "items")
        var out = Array("head\n".utf8)
        try extractor.feed(Array(#"{"items":[{"a" : "x\/y\u00e9"}, [1, 2e5 ,"#.utf8), appendingLinesTo: &out)
        #expect(String(decoding: out, as: UTF8.self) == "head\n{\"a\":\"x/yé\"}\n")
        try extractor.feed(Array("3]".utf8), appendingLinesTo: &out)
        #expect(String(decoding: out, as: UTF8.self) == "head\n{\"a\":\"x/yé\"}\n[1,2e5,3]\n")
        try extractor.feed(Array("]}".utf8), appendingLinesTo: &out)
        let summary = try extractor.finish(appendingLinesTo: &out)
        #expect(summary.elementCount == 2)
        #expect(String(decoding: out, as: UTF8.self) == "head\n{\"a\":\"x/yé\"}\n[1,2e5,3]\n")
    }

    @Test func fastLinesKeepTheElementsBeforeAnError() throws {
        let extractor = try JSONExtractor(path: "items")
        var out: [UInt8] = []
        #expect(throws: JSONError.self) {
            try extractor.feed(Array(#"{"items":[1,{"b":[true]},"#.utf8), appendingLinesTo: &out)
            try extractor.feed(Array("x]}".utf8), appendingLinesTo: &out)
        }
        #expect(String(decoding: out, as: UTF8.self) == "1\n{\"b\":[true]}\n")
    }
}
