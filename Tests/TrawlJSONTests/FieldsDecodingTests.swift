import Foundation
import Testing
import TrawlTestSupport
@testable import TrawlJSON

/// `JSONFieldsDecodable`: every way Trawl decodes takes it, and it reads what the `Decodable` path reads.
@Suite(.hangGuard) struct FieldsDecodingTests {
    /// Says which initializer made it.
    struct Probe: Decodable, JSONFieldsDecodable, Equatable {
        var name: String
        var via: String

        enum CodingKeys: String, CodingKey { case name }

        init(from decoder: any Decoder) throws {
            name = try decoder.container(keyedBy: CodingKeys.self).decode(String.self, forKey: .name)
            via = "Decodable"
        }

        init(fields: inout JSONFields) throws {
            name = try fields.decode("name")
            via = "fields"
        }
    }

    struct Envelope: Decodable {
        var one: Probe
        var many: [Probe]
        var maybe: Probe?
    }

    @Test func everyRouteTakesTheFieldsPath() throws {
        let decoder = JSONItemDecoder()
        let document = Array(#"{"one":{"name":"a"},"many":[{"name":"b"},{"name":"c"}],"maybe":{"name":"d"}}"#.utf8)
        let envelope = try decoder.decode(Envelope.self, from: document)
        #expect([envelope.one.via, envelope.maybe?.via] == ["fields", "fields"])
        #expect(envelope.many.map(\.via) == ["fields", "fields"])
        #expect(try decoder.decode(Probe.self, from: document, at: "one").via == "fields")
        #expect(try decoder.decode([Probe].self, from: document, at: "many").map(\.name) == ["b", "c"])
        #expect(try decoder.decode([Probe].self, from: document, at: "many").map(\.via) == ["fields", "fields"])
        let extractor = try JSONExtractor(path: "many", form: .values)
        var vias: [String] = []
        try extractor.feed(document) { vias.append(try $0.decode(Probe.self).via) }
        _ = try extractor.finish { vias.append(try $0.decode(Probe.self).via) }
        #expect(vias == ["fields", "fields"])
        // Elements recorded as JSON text (form .json) are parsed again, and still take it.
        let json = try JSONExtractor(path: "one", form: .json)
        var viaJSON: [String] = []
        try json.feed(document) { viaJSON.append(try $0.decode(Probe.self).via) }
        _ = try json.finish { viaJSON.append(try $0.decode(Probe.self).via) }
        #expect(viaJSON == ["fields"])
        // Foundation keeps using `init(from:)`.
        #expect(try JSONDecoder().decode(Probe.self, from: Data(#"{"name":"e"}"#.utf8)).via == "Decodable")
    }

    struct Pair: Decodable, JSONFieldsDecodable, Equatable {
        var a: Int
        var b: String?
        init(a: Int, b: String?) {
            self.a = a
            self.b = b
        }

        init(fields: inout JSONFields) throws {
            b = try fields.decodeIfPresent("b")
            a = try fields.decode("a")
        }
    }

    struct PlainPair: Decodable, Equatable {
        var a: Int
        var b: String?
    }

    /// A repeated key's last value wins, as on the `Decodable` path, whatever order the fields are read in.
    @Test func repeatedKeysLastValueWins() throws {
        for text in [#"{"a":1,"b":"x","a":2}"#, #"{"b":"x","a":1,"b":"y","a":3}"#, #"{"a":1,"b":null,"b":"z"}"#] {
            let fast = try JSONItemDecoder().decode(Pair.self, from: Array(text.utf8))
            let plain = try JSONItemDecoder().decode(PlainPair.self, from: Array(text.utf8))
            #expect(fast.a == plain.a && fast.b == plain.b, "\(text)")
        }
        let last = try JSONItemDecoder().decode(Pair.self, from: Array(#"{"a":1,"b":"x","a":2}"#.utf8))
        #expect(last == Pair(a: 2, b: "x"))
    }

    /// Fields looked up in any order, missing, null and unknown keys, over objects with many keys.
    @Test func lookupOrderDoesNotMatter() throws {
        struct Wide: Decodable, JSONFieldsDecodable {
            var values: [Int?]
            init(fields: inout JSONFields) throws {
                var values: [Int?] = []
                let keys: [StaticString] = ["k7", "k0", "k3", "k3", "missing", "k9", "k1", "k8", "k2", "k6", "k5", "k4"]
                for key in keys {
                    values.append(try fields.decodeIfPresent(key))
                }
                self.values = values
            }
        }
        let object = "{" + (0..<10).map { #""k\#($0)":\#($0 == 5 ? "null" : String($0 * 10))"# }.joined(separator: ",")
            + #","extra":[1,2,{"k0":99}]}"#
        let wide = try JSONItemDecoder().decode(Wide.self, from: Array(object.utf8))
        #expect(wide.values == [70, 0, 30, 30, nil, 90, 10, 80, 20, 60, nil, 40])
    }

    struct Event: Decodable, JSONFieldsDecodable {
        var at: Date
        var payload: Data?
        var path: [String]
        init(fields: inout JSONFields) throws {
            at = try fields.decode("at")
            payload = try fields.decodeIfPresent("payload")
            path = fields.codingPath.map(\.stringValue)
            #expect(fields.contains("at") && !fields.contains("nope"))
        }
    }

    /// Values other than the scalars follow the decoder's strategies; the coding path is the value's.
    @Test func decodableValuesFollowTheDecoderOptions() throws {
        var decoder = JSONItemDecoder()
        decoder.dateDecodingStrategy = .secondsSince1970
        let document = Array(#"{"events":[{"at":86400,"payload":"aGk="},{"at":0}]}"#.utf8)
        struct Log: Decodable { var events: [Event] }
        let log = try decoder.decode(Log.self, from: document)
        #expect(log.events.map(\.at.timeIntervalSince1970) == [86400, 0])
        #expect(log.events.map(\.payload) == [Data("hi".utf8), nil])
        #expect(log.events.map(\.path) == [["events", "Index 0"], ["events", "Index 1"]])
    }
}
