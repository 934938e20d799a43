import Foundation
import Testing
import TrawlTestSupport
@testable import TrawlJSON

/// Generated documents decode to the same values through TrawlJSON as through `JSONDecoder`.
@Suite(.hangGuard) struct DifferentialTests {
    struct Record: Codable, Equatable {
        enum Kind: String, Codable { case alpha, beta, gamma }
        var recordId: Int64
        var displayName: String
        var ratio: Double
        var small: Int8?
        var flags: [Bool]
        var counts: [String: Int]
        var child: Child?
        var kind: Kind
        var children: [Child]
        var big: UInt64
        var single: Float
    }

    struct Child: Codable, Equatable {
        var label: String
        var values: [Double]
        var grid: [[Int]]
    }

    /// SplitMix64: a small seeded generator, so failures reproduce.
    struct Generator: RandomNumberGenerator {
        var state: UInt64
        mutating func next() -> UInt64 {
            state &+= 0x9E37_79B9_7F4A_7C15
            var z = state
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            return z ^ (z >> 31)
        }
    }

    /// Writes JSON text by hand, with random whitespace, escapes and number spellings.
    struct Writer {
        var random: Generator
        var out = ""

        mutating func space() {
            if Int.random(in: 0..<4, using: &random) == 0 {
                out += [" ", "\n", "\t", "\r\n  "].randomElement(using: &random) ?? " "
            }
        }

        mutating func string(_ text: String) {
            out += "\""
            for scalar in text.unicodeScalars {
                switch scalar {
                case "\"": out += "\\\""
                case "\\": out += "\\\\"
                case "\n": out += "\\n"
                case "/": out += Bool.random(using: &random) ? "\\/" : "/"
                case _ where scalar.value < 0x20: out += String(format: "\\u%04x", scalar.value)
                case _ where scalar.value > 0x7F && Bool.random(using: &random):
                    for unit in String(scalar).utf16 { out += String(format: "\\u%04X", unit) }
                default: out.unicodeScalars.append(scalar)
                }
            }
            out += "\""
        }

        mutating func key(_ name: String) {
            space()
            string(name)
            space()
            out += ":"
            space()
        }

        mutating func object(_ members: [(String, (inout Writer) -> Void)]) {
            out += "{"
            for (index, member) in members.shuffled(using: &random).enumerated() {
                if index > 0 { out += "," }
                key(member.0)
                member.1(&self)
                space()
            }
            out += "}"
        }

        mutating func array<T>(_ values: [T], _ write: (inout Writer, T) -> Void) {
            out += "["
            space()
            for (index, value) in values.enumerated() {
                if index > 0 { out += "," }
                space()
                write(&self, value)
            }
            space()
            out += "]"
        }
    }

    static func randomText(_ random: inout Generator) -> String {
        let pieces = [
            "a", "Z", " ", "é", "日本", "😀", "\"", "\\", "/", "\n", "\t", "\u{1}", "ß", "\u{2028}", "x_y",
        ]
        return (0..<Int.random(in: 0..<8, using: &random)).map { _ in pieces.randomElement(using: &random) ?? "" }
            .joined()
    }

    static func randomDouble(_ random: inout Generator) -> (text: String, value: Double) {
        let mantissa = Int64.random(in: -9_999_999...9_999_999, using: &random)
        let exponent = Int.random(in: -30...30, using: &random)
        let text = ["\(mantissa)", "\(mantissa)e\(exponent)", "\(mantissa).25", "\(mantissa)E+\(abs(exponent))",
                    "0.\(abs(mantissa))"].randomElement(using: &random) ?? "0"
        return (text, Double(text) ?? 0)
    }

    static func child(_ writer: inout Writer) {
        var random = writer.random
        let label = randomText(&random)
        let values = (0..<Int.random(in: 0..<4, using: &random)).map { _ in randomDouble(&random).text }
        let grid = (0..<Int.random(in: 0..<3, using: &random)).map { _ in
            (0..<Int.random(in: 0..<3, using: &random)).map { _ in Int.random(in: -1000...1000, using: &random) }
        }
        writer.random = random
        writer.object([
            ("label", { $0.string(label) }),
            ("values", { w in w.array(values) { $0.out += $1 } }),
            ("grid", { w in w.array(grid) { w, row in w.array(row) { $0.out += String($1) } } }),
        ])
    }

    static func record(_ writer: inout Writer) {
        var random = writer.random
        let id = Int64.random(in: Int64.min...Int64.max, using: &random)
        let name = randomText(&random)
        let ratio = randomDouble(&random).text
        let small: Int8? = Bool.random(using: &random) ? Int8.random(in: .min ... .max, using: &random) : nil
        let flags = (0..<Int.random(in: 0..<4, using: &random)).map { _ in Bool.random(using: &random) }
        // Distinct keys: for a repeated key JSONDecoder keeps the first value and TrawlJSON the last.
        var seen: Set<String> = []
        let counts = (0..<Int.random(in: 0..<3, using: &random)).map { _ in
            (randomText(&random), Int.random(in: -99...99, using: &random))
        }.filter { seen.insert($0.0).inserted }
        let hasChild = Bool.random(using: &random)
        let kind = ["alpha", "beta", "gamma"].randomElement(using: &random) ?? "alpha"
        let childCount = Int.random(in: 0..<3, using: &random)
        let big = UInt64.random(in: 0...UInt64.max, using: &random)
        let single = ["1.5", "-0.25", "3e2", "0"].randomElement(using: &random) ?? "0"
        writer.random = random
        var members: [(String, (inout Writer) -> Void)] = [
            ("record_id", { $0.out += String(id) }),
            ("display_name", { $0.string(name) }),
            ("ratio", { $0.out += ratio }),
            ("flags", { w in w.array(flags) { $0.out += $1 ? "true" : "false" } }),
            ("counts", { w in w.object(counts.map { pair in (pair.0, { $0.out += String(pair.1) }) }) }),
            ("child", { w in if hasChild { child(&w) } else { w.out += "null" } }),
            ("kind", { $0.string(kind) }),
            ("children", { w in w.array(Array(0..<childCount)) { w, _ in child(&w) } }),
            ("big", { $0.out += String(big) }),
            ("single", { $0.out += single }),
        ]
        if let small { members.append(("small", { $0.out += String(small) })) }
        writer.object(members)
    }

    @Test(arguments: 0..<40)
    func matchesFoundation(seed: Int) throws {
        var writer = Writer(random: Generator(state: UInt64(seed)))
        let count = Int.random(in: 0..<12, using: &writer.random)
        writer.object([
            ("meta", { $0.object([("records", { $0.out += "[1]" })]) }),
            ("records", { w in w.array(Array(0..<count)) { w, _ in Self.record(&w) } }),
        ])
        let document = Array(writer.out.utf8)

        struct Envelope: Decodable { var records: [Record] }
        let foundation = JSONDecoder()
        foundation.keyDecodingStrategy = .convertFromSnakeCase
        let expected = try foundation.decode(Envelope.self, from: Data(document)).records

        var decoder = JSONItemDecoder()
        decoder.keyDecodingStrategy = .convertFromSnakeCase
        #expect(try decoder.decode(Envelope.self, from: document).records == expected)

        for chunkSize in [document.count, 1 + seed % 17] {
            let extractor = try JSONExtractor(path: "records", form: .values)
            var records: [Record] = []
            var start = 0
            while start < document.count {
                let end = min(start + chunkSize, document.count)
                try extractor.feed(document[start..<end]) { records.append(try $0.decode(using: decoder)) }
                start = end
            }
            _ = try extractor.finish()
            #expect(records == expected, "chunk size \(chunkSize)")
        }

        // Re-emitted elements are JSON that Foundation reads to the same values.
        let lines = try extract(document, path: "records").lines
        let reparsed = try lines.map { try foundation.decode(Record.self, from: Data($0.utf8)) }
        #expect(reparsed == expected)
    }
}
