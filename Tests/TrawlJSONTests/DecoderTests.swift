import Foundation
import Testing
import TrawlTestSupport
@testable import TrawlJSON

@Suite(.hangGuard) struct DecoderTests {
    struct Repo: Codable, Equatable {
        struct Owner: Codable, Equatable { var login: String; var siteAdmin: Bool }
        var id: Int64
        var fullName: String
        var owner: Owner
        var topics: [String]
        var license: String?
        var score: Double
        var createdAt: Date
    }

    func decodeItems<T: Decodable>(
        _ type: T.Type, _ document: String, path: JSONKeyPath = "", decoder: JSONItemDecoder
    ) throws -> [Result<T, any Error>] {
        let extractor = try JSONExtractor(path: path, form: .values)
        var results: [Result<T, any Error>] = []
        let handle: (JSONElement) -> Void = { element in
            results.append(Result { try element.decode(T.self, using: decoder) })
        }
        try extractor.feed(Array(document.utf8), onElement: handle)
        _ = try extractor.finish(onElement: handle)
        return results
    }

    @Test func snakeCaseAndISODates() throws {
        var decoder = JSONItemDecoder()
        decoder.keyDecodingStrategy = .convertFromSnakeCase
        decoder.dateDecodingStrategy = .iso8601
        let document = #"""
            {"items": [{"id": 9007199254740993, "full_name": "a/b", "owner": {"login": "a", "site_admin": false},
              "topics": ["x", "y"], "license": null, "score": 1.5, "created_at": "2024-01-02T03:04:05Z"}]}
            """#
        let repos = try decodeItems(Repo.self, document, path: "items", decoder: decoder).map { try $0.get() }
        #expect(repos.count == 1)
        #expect(repos.first?.id == 9_007_199_254_740_993)
        #expect(repos.first?.owner == Repo.Owner(login: "a", siteAdmin: false))
        #expect(repos.first?.license == nil)
        #expect(repos.first?.createdAt == Date(timeIntervalSince1970: 1_704_164_645))
    }

    @Test func numberOverflowFailsThatElementOnly() throws {
        struct Item: Decodable { var n: Int }
        let results = try decodeItems(Item.self, #"[{"n":1},{"n":9223372036854775808},{"n":1e400},{"n":3}]"#,
                                      decoder: JSONItemDecoder())
        #expect(results.count == 4)
        #expect((try? results[0].get().n) == 1)
        #expect((try? results[3].get().n) == 3)
        guard case .failure(let error) = results[1], case DecodingError.dataCorrupted(let context) = error else {
            Issue.record("expected dataCorrupted")
            return
        }
        #expect(context.debugDescription == "Number 9223372036854775808 does not fit in Int.")
        #expect(context.codingPath.map(\.stringValue) == ["n"])
        guard case .failure(DecodingError.dataCorrupted) = results[2] else {
            Issue.record("expected dataCorrupted")
            return
        }
    }

    @Test func integersFromExponentsAndFractions() throws {
        let values = try JSONItemDecoder().decode([Int].self, from: Array("[1.0, 1e2, 1.5e1, 100e-2, -0, 0.0]".utf8))
        #expect(values == [1, 100, 15, 1, 0, 0])
        #expect(throws: DecodingError.self) { try JSONItemDecoder().decode([Int].self, from: Array("[1.5]".utf8)) }
        #expect(throws: DecodingError.self) { try JSONItemDecoder().decode([UInt8].self, from: Array("[256]".utf8)) }
        #expect(throws: DecodingError.self) { try JSONItemDecoder().decode([UInt].self, from: Array("[-1]".utf8)) }
        #expect(try JSONItemDecoder().decode(UInt64.self, from: Array("18446744073709551615".utf8)) == .max)
        #expect(try JSONItemDecoder().decode(Int64.self, from: Array("-9223372036854775808".utf8)) == .min)
    }

    @Test func dateAndDataStrategies() throws {
        var decoder = JSONItemDecoder()
        decoder.dateDecodingStrategy = .secondsSince1970
        #expect(try decoder.decode(Date.self, from: Array("1.5".utf8)) == Date(timeIntervalSince1970: 1.5))
        decoder.dateDecodingStrategy = .millisecondsSince1970
        #expect(try decoder.decode(Date.self, from: Array("1500".utf8)) == Date(timeIntervalSince1970: 1.5))
        decoder.dateDecodingStrategy = .custom { decoder in
            let text = try decoder.singleValueContainer().decode(String.self)
            return Date(timeIntervalSince1970: Double(text.dropFirst()) ?? 0)
        }
        #expect(try decoder.decode(Date.self, from: Array(#""@42""#.utf8)) == Date(timeIntervalSince1970: 42))
        decoder.dateDecodingStrategy = .deferredToDate
        #expect(try decoder.decode(Date.self, from: Array("0".utf8)) == Date(timeIntervalSinceReferenceDate: 0))
        #expect(try decoder.decode(Data.self, from: Array(#""aGVsbG8=""#.utf8)) == Data("hello".utf8))
        #expect(throws: DecodingError.self) { try decoder.decode(Data.self, from: Array(#""%%%""#.utf8)) }
        decoder.dataDecodingStrategy = .deferredToData
        #expect(try decoder.decode(Data.self, from: Array("[104,105]".utf8)) == Data("hi".utf8))
        #expect(try decoder.decode(URL.self, from: Array(#""https://example.com/a""#.utf8)).host == "example.com")
        #expect(try decoder.decode(Decimal.self, from: Array("12.50".utf8)) == Decimal(string: "12.5"))
    }

    @Test func nonConformingFloats() throws {
        var decoder = JSONItemDecoder()
        decoder.nonConformingFloatDecodingStrategy = .convertFromString(
            positiveInfinity: "+inf", negativeInfinity: "-inf", nan: "nan")
        let values = try decoder.decode([Double].self, from: Array(#"["+inf","-inf",2]"#.utf8))
        #expect(values == [.infinity, -.infinity, 2])
        #expect(try decoder.decode(Double.self, from: Array(#""nan""#.utf8)).isNaN)
    }

    /// Containers by hand, `superDecoder`, and coding paths in errors.
    final class Base: Decodable {
        let id: Int
        init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: AnyCodingKey.self)
            id = try container.decode(Int.self, forKey: AnyCodingKey(stringValue: "id"))
        }
    }

    struct Manual: Decodable {
        var first: Int
        var nested: [String]
        var base: Int
        var superID: Int
        init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: AnyCodingKey.self)
            var list = try container.nestedUnkeyedContainer(forKey: AnyCodingKey(stringValue: "list"))
            first = try list.decode(Int.self)
            let inner = try list.nestedContainer(keyedBy: AnyCodingKey.self)
            nested = try inner.decode([String].self, forKey: AnyCodingKey(stringValue: "names"))
            #expect(try list.decodeNil())
            #expect(list.isAtEnd)
            base = try Base(from: container.superDecoder(forKey: AnyCodingKey(stringValue: "parent"))).id
            superID = try Base(from: container.superDecoder()).id
        }
    }

    @Test func manualContainersAndSuperDecoders() throws {
        let document = #"{"list":[7,{"names":["a","b"]},null],"parent":{"id":3},"super":{"id":4}}"#
        let value = try JSONItemDecoder().decode(Manual.self, from: Array(document.utf8))
        #expect(value.first == 7)
        #expect(value.nested == ["a", "b"])
        #expect(value.base == 3)
        #expect(value.superID == 4)
    }

    @Test func errorsCarryTheCodingPath() throws {
        struct Outer: Decodable { var items: [Inner] }
        struct Inner: Decodable { var name: String }
        let document = #"{"items":[{"name":"a"},{"name":5}]}"#
        do {
            _ = try JSONItemDecoder().decode(Outer.self, from: Array(document.utf8))
            Issue.record("expected an error")
        } catch DecodingError.typeMismatch(_, let context) {
            #expect(context.codingPath.map { $0.intValue.map(String.init) ?? $0.stringValue } == ["items", "1", "name"])
            #expect(context.debugDescription == "Expected to decode String but found number 5 instead.")
        }
        do {
            _ = try JSONItemDecoder().decode(Outer.self, from: Array(#"{"items":[{}]}"#.utf8))
            Issue.record("expected an error")
        } catch DecodingError.keyNotFound(let key, let context) {
            #expect(key.stringValue == "name")
            #expect(context.codingPath.count == 2)
        }
    }

    /// A decoder keeps the state of its first four keyed containers in itself and the rest in an array: containers
    /// on either side, and the item's own after its nested ones, keep their coding paths and key indexes.
    @Test func manyKeyedContainersInOneItem() throws {
        struct Leaf: Decodable { var name: String }
        struct Item: Decodable { var a, b, c, d, e: Leaf; var f: [String: Int]; var g: Int }
        let wide = "{" + (0..<30).map { "\"K\($0)\":\($0)" }.joined(separator: ",") + "}"
        func item(e: String = #""E""#, g: String = "7") -> String {
            #"{"A":{"NAME":"A"},"B":{"NAME":"B"},"C":{"NAME":"C"},"D":{"NAME":"D"},"E":{"NAME":\#(e)},"F":\#(wide),"G":\#(g)}"#
        }
        var decoder = JSONItemDecoder()
        // A custom strategy gives every container a key index; the 30-key dictionary keeps its keys as they are.
        decoder.keyDecodingStrategy = .custom { path in
            AnyCodingKey(stringValue: path.last?.stringValue.lowercased() ?? "")
        }
        let results = try decodeItems(Item.self, "[\(item()),\(item(e: "5")),\(item(g: "\"x\""))]", decoder: decoder)
        #expect(results.count == 3)
        let value = try results[0].get()
        #expect([value.a, value.b, value.c, value.d, value.e].map(\.name) == ["A", "B", "C", "D", "E"])
        #expect(value.f.count == 30)
        #expect(value.f["K29"] == 29)
        #expect(value.g == 7)
        for (result, path) in zip(results.dropFirst(), [["e", "name"], ["g"]]) {
            guard case .failure(DecodingError.typeMismatch(_, let context)) = result else {
                Issue.record("expected typeMismatch at \(path)")
                continue
            }
            #expect(context.codingPath.map(\.stringValue) == path)
        }
    }

    @Test func lastDuplicateKeyWinsForDecoding() throws {
        struct Item: Decodable { var a: Int; var b: Int }
        let item = try JSONItemDecoder().decode(Item.self, from: Array(#"{"a":1,"b":2,"a":3}"#.utf8))
        #expect(item.a == 3)
        #expect(item.b == 2)
        let nested = #"{"b":{"a":[1,{"a":2}],"s":"x"},"a":4,"b":5,"a":6}"#
        for chunkSize in [1, 5, 1000] {
            let extractor = try JSONExtractor(path: "", form: .values)
            var items: [Item] = []
            var start = 0
            let bytes = Array(("[" + nested + "]").utf8)
            while start < bytes.count {
                let end = min(start + chunkSize, bytes.count)
                try extractor.feed(bytes[start..<end]) { items.append(try $0.decode(Item.self)) }
                start = end
            }
            _ = try extractor.finish()
            #expect(items.map(\.a) == [6])
            #expect(items.map(\.b) == [5])
        }
        let many = "{" + (0..<40).map { "\"k\($0)\":\($0)" }.joined(separator: ",") + ",\"k3\":99}"
        let dictionary = try JSONItemDecoder().decode([String: Int].self, from: Array(many.utf8))
        #expect(dictionary["k3"] == 99)
        #expect(dictionary.count == 40)
    }

    @Test func dictionaryKeysAreNotConverted() throws {
        var decoder = JSONItemDecoder()
        decoder.keyDecodingStrategy = .convertFromSnakeCase
        let value = try decoder.decode([String: Int].self, from: Array(#"{"a_b":1,"_c_d_":2}"#.utf8))
        #expect(value == ["a_b": 1, "_c_d_": 2])
    }

    @Test func customKeyStrategy() throws {
        struct Item: Decodable { var name: String }
        var decoder = JSONItemDecoder()
        decoder.keyDecodingStrategy = .custom { path in
            AnyCodingKey(stringValue: path.last?.stringValue.lowercased() ?? "")
        }
        #expect(try decoder.decode(Item.self, from: Array(#"{"NAME":"x"}"#.utf8)).name == "x")
    }

    @Test func jsonValueKeepsNumberText() throws {
        let text = #"{"n":[1e400,-0,12345678901234567890]}"#
        let value = try JSONItemDecoder().decode(JSONValue.self, from: Array(text.utf8))
        #expect(value["n"] == [.number("1e400"), .number("-0"), .number("12345678901234567890")])
        #expect(String(decoding: value.json, as: UTF8.self) == #"{"n":[1e400,-0,12345678901234567890]}"#)
        let viaFoundation = try JSONDecoder().decode(JSONValue.self, from: Data(#"{"a":[1,2.5,"s",true,null]}"#.utf8))
        #expect(viaFoundation == ["a": [1, 2.5, "s", true, nil]])
        let original: JSONValue = ["a": [1, "s"]]
        let encoded = try JSONEncoder().encode(original)
        #expect(try JSONDecoder().decode(JSONValue.self, from: encoded) == ["a": [1, "s"]])
    }

    @Test func jsonFormElementsDecodeToo() throws {
        let extractor = try JSONExtractor(path: "items")
        var names: [String] = []
        try extractor.feed(Array(#"{"items":[{"name":"a"},{"name":"b"}]}"#.utf8)) { element in
            names.append(try element.decode([String: String].self)["name"] ?? "")
            #expect(element.value["name"] != nil)
        }
        #expect(names == ["a", "b"])
        let values = try JSONExtractor(path: "items", form: .values)
        var lines: [String] = []
        try values.feed(Array(#"{"items":[{"a":"\"q\"","b":[1,{}]}]}"#.utf8)) {
            lines.append(String(decoding: $0.json, as: UTF8.self))
        }
        #expect(lines == [#"{"a":"\"q\"","b":[1,{}]}"#])
    }
}
