import Foundation
import Testing
import TrawlTestSupport
@testable import TrawlJSON

/// `JSONFieldsDecodable` (the fast typed path) gives exactly what the `Decodable` path and Foundation's
/// `JSONDecoder` give, values and errors, over generated documents: escapes, unicode, big numbers, nested
/// objects and arrays of them, optionals, missing keys, nulls and values of the wrong kind.
@Suite(.hangGuard) struct FieldsDifferentialTests {
    typealias Writer = DifferentialTests.Writer
    typealias Generator = DifferentialTests.Generator

    enum Kind: String, Codable, Equatable { case alpha, beta, gamma }

    /// Read through `Decodable` only (synthesized, the document's keys).
    struct PlainChild: Decodable, Equatable {
        var label: String
        var values: [Double]
        var rank: Int?
    }

    struct PlainRecord: Decodable, Equatable {
        var id: Int64
        var name: String
        var ratio: Double
        var count: Int
        var small: Int32
        var big: UInt64
        var active: Bool
        var tags: [String]
        var note: String?
        var score: Double?
        var flag: Bool?
        var ref: Int?
        var child: PlainChild?
        var children: [PlainChild]
        var kind: Kind
        var grid: [[Int]]
        var first: PlainChild

        enum CodingKeys: String, CodingKey {
            case id, name, ratio, count, small, big, active, tags, note, score, flag, ref, child, children, kind, grid
            case first = "first_child"
        }
    }

    /// The same shapes read through `JSONFieldsDecodable` (and, by Foundation, through their `Decodable`).
    struct FastChild: Decodable, JSONFieldsDecodable, Equatable {
        var label: String
        var values: [Double]
        var rank: Int?

        init(fields: inout JSONFields) throws {
            label = try fields.decode("label")
            values = try fields.decode("values")
            rank = try fields.decodeIfPresent("rank")
        }
    }

    struct FastRecord: Decodable, JSONFieldsDecodable, Equatable {
        var id: Int64
        var name: String
        var ratio: Double
        var count: Int
        var small: Int32
        var big: UInt64
        var active: Bool
        var tags: [String]
        var note: String?
        var score: Double?
        var flag: Bool?
        var ref: Int?
        var child: FastChild?
        var children: [FastChild]
        var kind: Kind
        var grid: [[Int]]
        var first: FastChild

        enum CodingKeys: String, CodingKey {
            case id, name, ratio, count, small, big, active, tags, note, score, flag, ref, child, children, kind, grid
            case first = "first_child"
        }

        init(fields: inout JSONFields) throws {
            id = try fields.decode("id")
            name = try fields.decode("name")
            ratio = try fields.decode("ratio")
            count = try fields.decode("count")
            small = try fields.decode("small")
            big = try fields.decode("big")
            active = try fields.decode("active")
            tags = try fields.decode("tags")
            note = try fields.decodeIfPresent("note")
            score = try fields.decodeIfPresent("score")
            flag = try fields.decodeIfPresent("flag")
            ref = try fields.decodeIfPresent("ref")
            child = try fields.decodeIfPresent("child")
            children = try fields.decode("children")
            kind = try fields.decode("kind")
            grid = try fields.decode("grid")
            first = try fields.decode("first_child")
        }
    }

    /// The fast value as the plain type, to compare the two paths.
    static func plain(_ child: FastChild) -> PlainChild {
        PlainChild(label: child.label, values: child.values, rank: child.rank)
    }

    static func plain(_ r: FastRecord) -> PlainRecord {
        PlainRecord(
            id: r.id, name: r.name, ratio: r.ratio, count: r.count, small: r.small, big: r.big, active: r.active,
            tags: r.tags, note: r.note, score: r.score, flag: r.flag, ref: r.ref, child: r.child.map(plain),
            children: r.children.map(plain), kind: r.kind, grid: r.grid, first: plain(r.first))
    }

    // MARK: - Documents

    /// One way to break a record: where (a key, maybe inside a child) and what to write there instead.
    struct Fault {
        var path: [String]
        /// nil: leave the key out.
        var text: String?
    }

    static let faults: [Fault] = [
        Fault(path: ["id"], text: nil), Fault(path: ["id"], text: "null"), Fault(path: ["id"], text: "\"7\""),
        Fault(path: ["id"], text: "9223372036854775808"), Fault(path: ["id"], text: "1.5"),
        Fault(path: ["small"], text: "2147483648"), Fault(path: ["small"], text: "-2147483649"),
        Fault(path: ["count"], text: "1e30"), Fault(path: ["big"], text: "-1"), Fault(path: ["big"], text: "true"),
        Fault(path: ["name"], text: "12"), Fault(path: ["name"], text: "[]"), Fault(path: ["ratio"], text: "\"x\""),
        Fault(path: ["ratio"], text: "1e400"), Fault(path: ["active"], text: "0"), Fault(path: ["tags"], text: "{}"),
        Fault(path: ["tags"], text: "[\"a\",1]"), Fault(path: ["tags"], text: "null"), Fault(path: ["note"], text: "5"),
        Fault(path: ["score"], text: "\"NaN\""), Fault(path: ["flag"], text: "\"true\""),
        Fault(path: ["ref"], text: "1.25"),
        Fault(path: ["child"], text: "[]"), Fault(path: ["child"], text: "7"), Fault(path: ["children"], text: "{}"),
        Fault(path: ["children"], text: "[null]"), Fault(path: ["children"], text: "[5]"),
        Fault(path: ["kind"], text: "\"delta\""), Fault(path: ["kind"], text: "1"),
        Fault(path: ["grid"], text: "[[1],[\"2\"]]"),
        Fault(path: ["first_child"], text: nil), Fault(path: ["first_child"], text: "null"),
        Fault(path: ["first_child", "label"], text: nil), Fault(path: ["first_child", "label"], text: "false"),
        Fault(path: ["first_child", "values"], text: "[1,null]"), Fault(path: ["first_child", "rank"], text: "\"1\""),
        Fault(path: ["child", "values"], text: nil), Fault(path: ["children", "label"], text: "null"),
    ]

    static func child(_ writer: inout Writer, fault: Fault?) {
        var random = writer.random
        let label = DifferentialTests.randomText(&random)
        let values = (0..<Int.random(in: 0..<4, using: &random)).map { _ in
            DifferentialTests.randomDouble(&random).text
        }
        let rank: String? = Bool.random(using: &random) ? String(Int.random(in: -5...5, using: &random)) : nil
        writer.random = random
        var members: [(String, (inout Writer) -> Void)] = [
            ("label", { $0.string(label) }),
            ("values", { w in w.array(values) { $0.out += $1 } }),
        ]
        if let rank { members.append(("rank", { $0.out += rank })) } else if Bool.random(using: &writer.random) {
            members.append(("rank", { $0.out += "null" }))
        }
        writer.object(apply(fault, to: members))
    }

    /// `members` with the fault's key replaced or left out (the fault applies here when its path has one key).
    static func apply(
        _ fault: Fault?, to members: [(String, (inout Writer) -> Void)]
    ) -> [(String, (inout Writer) -> Void)] {
        guard let fault, fault.path.count == 1, let key = fault.path.first else { return members }
        var result = members.filter { $0.0 != key }
        if let text = fault.text { result.append((key, { $0.out += text })) }
        return result
    }

    static func record(_ writer: inout Writer, fault: Fault?) {
        var random = writer.random
        let id = Int64.random(in: Int64.min...Int64.max, using: &random)
        let name = DifferentialTests.randomText(&random)
        let ratio = DifferentialTests.randomDouble(&random).text
        let counts = ["0", "-0", "12", "1e3", "2.5e1", "-9223372036854775808", "100.0"]
        let count = counts.randomElement(using: &random) ?? "0"
        let small = Int32.random(in: .min ... .max, using: &random)
        let big = UInt64.random(in: 0...UInt64.max, using: &random)
        let active = Bool.random(using: &random)
        let tags = (0..<Int.random(in: 0..<4, using: &random)).map { _ in DifferentialTests.randomText(&random) }
        let optionals = (0..<4).map { _ in Int.random(in: 0..<3, using: &random) }  // 0 missing, 1 null, 2 value
        let note = DifferentialTests.randomText(&random)
        let score = DifferentialTests.randomDouble(&random).text
        // A fault inside `child` or `children` needs one there.
        let needsChild = fault?.path.count == 2 && fault?.path.first == "child"
        let hasChild = needsChild ? 2 : Int.random(in: 0..<3, using: &random)
        let needsChildren = fault?.path.count == 2 && fault?.path.first == "children"
        let childCount = Int.random(in: (needsChildren ? 1 : 0)..<3, using: &random)
        let kind = ["alpha", "beta", "gamma"].randomElement(using: &random) ?? "alpha"
        let grid = (0..<Int.random(in: 0..<3, using: &random)).map { _ in
            (0..<Int.random(in: 0..<3, using: &random)).map { _ in Int.random(in: -1000...1000, using: &random) }
        }
        writer.random = random
        let inner: (String) -> Fault? = { key in
            guard let fault, fault.path.count == 2, fault.path[0] == key else { return nil }
            return Fault(path: [fault.path[1]], text: fault.text)
        }
        var members: [(String, (inout Writer) -> Void)] = [
            ("id", { $0.out += String(id) }),
            ("name", { $0.string(name) }),
            ("ratio", { $0.out += ratio }),
            ("count", { $0.out += count }),
            ("small", { $0.out += String(small) }),
            ("big", { $0.out += String(big) }),
            ("active", { $0.out += active ? "true" : "false" }),
            ("tags", { w in w.array(tags) { $0.string($1) } }),
            ("children", { w in
                w.array(Array(0..<childCount)) { w, index in
                    child(&w, fault: index == childCount - 1 ? inner("children") : nil)
                }
            }),
            ("kind", { $0.string(kind) }),
            ("grid", { w in w.array(grid) { w, row in w.array(row) { $0.out += String($1) } } }),
            ("first_child", { child(&$0, fault: inner("first_child")) }),
            ("unknown", { $0.object([("deep", { $0.out += "[1,{\"a\":null}]" })]) }),
        ]
        let optional: [(String, (inout Writer) -> Void)] = [
            ("note", { $0.string(note) }), ("score", { $0.out += score }),
            ("flag", { $0.out += "true" }), ("ref", { $0.out += "-42" }),
        ]
        for (index, member) in optional.enumerated() where optionals[index] > 0 {
            members.append(optionals[index] == 1 ? (member.0, { $0.out += "null" }) : member)
        }
        if hasChild == 1 { members.append(("child", { $0.out += "null" })) }
        if hasChild == 2 { members.append(("child", { child(&$0, fault: inner("child")) })) }
        writer.object(apply(fault, to: members))
    }

    static func document(seed: Int, fault: Fault? = nil) -> [UInt8] {
        var writer = Writer(random: Generator(state: UInt64(seed) &* 7919))
        let count = Int.random(in: 1..<6, using: &writer.random)
        let broken = Int.random(in: 0..<count, using: &writer.random)
        writer.object([
            ("meta", { $0.object([("records", { $0.out += "[1]" })]) }),
            ("records", { w in
                w.array(Array(0..<count)) { w, index in record(&w, fault: index == broken ? fault : nil) }
            }),
        ])
        return Array(writer.out.utf8)
    }

    // MARK: - Comparing

    /// A decoding outcome in comparable form: the value's description, or the error's kind, coding path and message.
    enum Outcome: Equatable, CustomStringConvertible {
        case value(String)
        case error(kind: String, path: [String], message: String)

        var description: String {
            switch self {
            case .value(let text): "value \(text)"
            case .error(let kind, let path, let message): "\(kind) at \(path): \(message)"
            }
        }

        init(_ body: () throws -> Any) {
            do {
                self = .value("\(try body())")
            } catch let error as DecodingError {
                let path: (DecodingError.Context) -> [String] = {
                    $0.codingPath.map { $0.intValue.map { "#\($0)" } ?? $0.stringValue }
                }
                switch error {
                case .keyNotFound(let key, let context):
                    // The message names the key's type (the synthesized `CodingKeys` or Trawl's own key): compare
                    // the key's name instead.
                    self = .error(kind: "keyNotFound", path: path(context), message: key.stringValue)
                case .typeMismatch(_, let context):
                    self = .error(kind: "typeMismatch", path: path(context), message: context.debugDescription)
                case .valueNotFound(_, let context):
                    self = .error(kind: "valueNotFound", path: path(context), message: context.debugDescription)
                case .dataCorrupted(let context):
                    self = .error(kind: "dataCorrupted", path: path(context), message: context.debugDescription)
                @unknown default:
                    self = .error(kind: "unknown", path: [], message: "\(error)")
                }
            } catch {
                self = .error(kind: "other", path: [], message: "\(error)")
            }
        }

        /// The kind and coding path only: Foundation words some messages differently, and gives a number that does
        /// not fit its type (`dataCorrupted`) an empty coding path.
        func sameShape(asFoundation foundation: Outcome) -> Bool {
            guard case .error(let kind, let path, _) = self, case .error(let otherKind, let otherPath, _) = foundation
            else { return self == foundation }
            return kind == otherKind && (path == otherPath || kind == "dataCorrupted" && otherPath.isEmpty)
        }
    }

    struct PlainEnvelope: Decodable { var records: [PlainRecord] }
    struct FastEnvelope: Decodable { var records: [FastRecord] }

    /// Every route to the records: the whole document, each extracted element, and Foundation.
    static func outcomes(_ document: [UInt8]) throws -> (plain: [Outcome], fast: [Outcome], foundation: Outcome) {
        let decoder = JSONItemDecoder()
        let toPlain: (FastRecord) -> PlainRecord = { Self.plain($0) }
        var plain = [Outcome { try decoder.decode(PlainEnvelope.self, from: document).records }]
        var fast = [Outcome { try decoder.decode(FastEnvelope.self, from: document).records.map(toPlain) }]
        plain.append(Outcome { try decoder.decode([PlainRecord].self, from: document, at: "records") })
        fast.append(Outcome { try decoder.decode([FastRecord].self, from: document, at: "records").map(toPlain) })
        let extractor = try JSONExtractor(path: "records", form: .values)
        let onElement: (JSONElement) -> Void = { element in
            plain.append(Outcome { try element.decode(PlainRecord.self) })
            fast.append(Outcome { toPlain(try element.decode(FastRecord.self)) })
        }
        try extractor.feed(document, onElement: onElement)
        _ = try extractor.finish(onElement: onElement)
        let foundation = Outcome {
            try JSONDecoder().decode(FastEnvelope.self, from: Data(document)).records.map(toPlain)
        }
        return (plain, fast, foundation)
    }

    @Test(arguments: 0..<30)
    func valuesMatchDecodableAndFoundation(seed: Int) throws {
        let document = Self.document(seed: seed)
        let (plain, fast, foundation) = try Self.outcomes(document)
        #expect(fast == plain)
        #expect(plain[0] == foundation, "\(String(decoding: document, as: UTF8.self))")
        if case .error = plain[0] { Issue.record("a valid document failed: \(plain[0])") }
    }

    @Test(arguments: 0..<faults.count)
    func errorsMatchDecodableAndFoundation(fault: Int) throws {
        for seed in 0..<3 {
            let document = Self.document(seed: seed * 31 + fault, fault: Self.faults[fault])
            let (plain, fast, foundation) = try Self.outcomes(document)
            let text = String(decoding: document, as: UTF8.self)
            #expect(fast == plain, "\(Self.faults[fault]) in \(text)")
            #expect(plain[0].sameShape(asFoundation: foundation), "\(plain[0]) vs \(foundation): \(text)")
            if case .value = plain[0] { Issue.record("\(Self.faults[fault]) did not fail: \(text)") }
        }
    }
}
