// Built with the trait "Macros" only: `swift test --traits Macros` (.ci/run).
#if Macros
import Foundation
import Testing
import TrawlTestSupport
import TrawlMacros
@testable import TrawlJSON

/// `@JSONFieldsDecodable` (the macro that writes `init(fields:)`) gives exactly what the compiler's `Decodable`
/// gives, values and errors, over the generated documents and faults of ``FieldsDifferentialTests``, and under a
/// key decoding strategy.
@Suite(.hangGuard) struct MacroFieldsDifferentialTests {
    typealias Plain = FieldsDifferentialTests
    typealias Outcome = FieldsDifferentialTests.Outcome

    @JSONFieldsDecodable
    struct MacroChild: Decodable, Equatable {
        var label: String
        var values: [Double]
        var rank: Int?
    }

    @JSONFieldsDecodable
    struct MacroRecord: Decodable, Equatable {
        var id: Int64
        var name: String
        var ratio: Double
        var count: Int
        var small: Int32
        var big: UInt64
        var active: Bool
        var tags: [String]
        var note: String?
        var score: Optional<Double>
        var flag: Bool?
        var ref: Int?
        var child: MacroChild?
        var children: [MacroChild]
        var kind: Plain.Kind
        var grid: [[Int]]
        var first: MacroChild
        /// Left out of `CodingKeys`: keeps its value, as with `Decodable`.
        var local = 7
        let fixed = "fixed"

        enum CodingKeys: String, CodingKey {
            case id, name, ratio, count, small, big, active, tags, note, score, flag, ref, child, children, kind, grid
            case first = "first_child"
        }
    }

    static func plain(_ child: MacroChild) -> Plain.PlainChild {
        Plain.PlainChild(label: child.label, values: child.values, rank: child.rank)
    }

    static func plain(_ r: MacroRecord) -> Plain.PlainRecord {
        #expect(r.local == 7 && r.fixed == "fixed")
        return Plain.PlainRecord(
            id: r.id, name: r.name, ratio: r.ratio, count: r.count, small: r.small, big: r.big, active: r.active,
            tags: r.tags, note: r.note, score: r.score, flag: r.flag, ref: r.ref, child: r.child.map(plain),
            children: r.children.map(plain), kind: r.kind, grid: r.grid, first: plain(r.first))
    }

    struct MacroEnvelope: Decodable { var records: [MacroRecord] }

    /// The records through the plain type and the macro's, by every route: the whole document, at a key path, and
    /// each extracted element.
    static func outcomes(_ document: [UInt8], decoder: JSONItemDecoder = JSONItemDecoder()) throws
        -> (plain: [Outcome], macro: [Outcome])
    {
        let toPlain: (MacroRecord) -> Plain.PlainRecord = { Self.plain($0) }
        var plain = [Outcome { try decoder.decode(Plain.PlainEnvelope.self, from: document).records }]
        var macro = [Outcome { try decoder.decode(MacroEnvelope.self, from: document).records.map(toPlain) }]
        plain.append(Outcome { try decoder.decode([Plain.PlainRecord].self, from: document, at: "records") })
        macro.append(Outcome { try decoder.decode([MacroRecord].self, from: document, at: "records").map(toPlain) })
        let extractor = try JSONExtractor(path: "records", form: .values)
        let onElement: (JSONElement) -> Void = { element in
            plain.append(Outcome { try element.decode(Plain.PlainRecord.self, using: decoder) })
            macro.append(Outcome { toPlain(try element.decode(MacroRecord.self, using: decoder)) })
        }
        try extractor.feed(document, onElement: onElement)
        _ = try extractor.finish(onElement: onElement)
        return (plain, macro)
    }

    @Test("the macro's types conform, so every decoder takes init(fields:)")
    func conformance() {
        #expect((MacroRecord.self as Any.Type) is any JSONFieldsDecodable.Type)
        #expect((MacroChild.self as Any.Type) is any JSONFieldsDecodable.Type)
    }

    @Test(arguments: 0..<30)
    func valuesMatchDecodable(seed: Int) throws {
        let document = Plain.document(seed: seed)
        let (plain, macro) = try Self.outcomes(document)
        #expect(macro == plain, "\(String(decoding: document, as: UTF8.self))")
        if case .error = plain[0] { Issue.record("a valid document failed: \(plain[0])") }
    }

    @Test(arguments: 0..<FieldsDifferentialTests.faults.count)
    func errorsMatchDecodable(fault: Int) throws {
        for seed in 0..<3 {
            let document = Plain.document(seed: seed * 31 + fault, fault: Plain.faults[fault])
            let (plain, macro) = try Self.outcomes(document)
            #expect(macro == plain, "\(Plain.faults[fault]) in \(String(decoding: document, as: UTF8.self))")
            if case .value = plain[0] { Issue.record("\(Plain.faults[fault]) did not fail") }
        }
    }

    // MARK: - Key decoding strategies

    /// Property names only (no `CodingKeys`): under `.convertFromSnakeCase` the document's snake_case keys match.
    @JSONFieldsDecodable
    struct SnakeMacro: Decodable, Equatable {
        let userId: Int
        let displayName: String?
        let owner: SnakeOwner
        let pastOwners: [SnakeOwner]
    }

    @JSONFieldsDecodable
    struct SnakeOwner: Decodable, Equatable {
        let firstName: String
    }

    struct SnakePlain: Decodable, Equatable {
        let userId: Int
        let displayName: String?
        let owner: SnakePlainOwner
        let pastOwners: [SnakePlainOwner]
    }

    struct SnakePlainOwner: Decodable, Equatable { let firstName: String }

    @Test("under a key decoding strategy the macro's types read as Decodable does (keys converted)")
    func keyStrategies() throws {
        let snake = #"{"user_id":1,"display_name":"a","owner":{"first_name":"b"},"past_owners":[{"first_name":"c"}]}"#
        let camel = #"{"userId":1,"displayName":null,"owner":{"firstName":"b"},"pastOwners":[]}"#
        let missing = #"{"user_id":1,"owner":{"firstName":"b"},"past_owners":[]}"#
        var snakeDecoder = JSONItemDecoder()
        snakeDecoder.keyDecodingStrategy = .convertFromSnakeCase
        var customDecoder = JSONItemDecoder()
        customDecoder.keyDecodingStrategy = .custom { path in
            let last = path[path.count - 1].stringValue
            return AnyKey(last.replacingOccurrences(of: "_", with: ""))
        }
        let shape: (SnakeMacro) -> String = {
            "\($0.userId) \($0.displayName ?? "nil") \($0.owner.firstName) \($0.pastOwners.map(\.firstName))"
        }
        let plainShape: (SnakePlain) -> String = {
            "\($0.userId) \($0.displayName ?? "nil") \($0.owner.firstName) \($0.pastOwners.map(\.firstName))"
        }
        for decoder in [JSONItemDecoder(), snakeDecoder, customDecoder] {
            for text in [snake, camel, missing] {
                let bytes = Array(text.utf8)
                let macro = Outcome { shape(try decoder.decode(SnakeMacro.self, from: bytes)) }
                let plain = Outcome { plainShape(try decoder.decode(SnakePlain.self, from: bytes)) }
                #expect(macro == plain, "\(text) with \(decoder.keyDecodingStrategy)")
            }
        }
        // The snake_case document reads under .convertFromSnakeCase, and not without it.
        #expect(try snakeDecoder.decode(SnakeMacro.self, from: Array(snake.utf8)).owner.firstName == "b")
        #expect(throws: DecodingError.self) { try JSONItemDecoder().decode(SnakeMacro.self, from: Array(snake.utf8)) }
    }

    struct AnyKey: CodingKey {
        var stringValue: String
        var intValue: Int? { nil }
        init(_ string: String) { stringValue = string }
        init?(stringValue: String) { self.stringValue = stringValue }
        init?(intValue: Int) { nil }
    }
}
#endif
