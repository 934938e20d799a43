// Built with the trait "Macros" only: `swift test --traits Macros` (.ci/run).
#if Macros
import Foundation
import Testing
import TrawlTestSupport
import TrawlMacros
@testable import TrawlJSON

// The forms a struct's properties take, each read by `@JSONFieldsDecodable` as the compiler's `Decodable` reads
// it: the macro type and its plain twin decode the same documents to the same values and fail with the same errors.

@JSONFieldsDecodable
struct FormsMacro: Decodable, Equatable {
    let id: Int
    var name: String?
    let tags: Optional<[String]>
    let alias: Swift.Optional<String>
    var score: Double = 1          // a var with a value is decoded (required)
    static let shared = 1
    var label: String { name ?? "" }
    var seen: Bool {
        didSet { _ = oldValue }
    }
    let a, b: Int
    let `default`: Int?
    let when: Date
}

struct FormsPlain: Decodable, Equatable {
    let id: Int
    var name: String?
    let tags: Optional<[String]>
    let alias: Swift.Optional<String>
    var score: Double = 1
    static let shared = 1
    var label: String { name ?? "" }
    var seen: Bool {
        didSet { _ = oldValue }
    }
    let a, b: Int
    let `default`: Int?
    let when: Date
}

/// `CodingKeys` with raw values that need escaping, and a property it leaves out. (A `let` with a value, which
/// neither reads, is in MacroRefusalTests' cases: the compiler warns about one here.)
@JSONFieldsDecodable
public struct KeysMacro: Decodable, Equatable {
    public let createdAt: String
    let id: Int
    var cached = 0
    let quoted: Int
    let unicode: Bool

    enum CodingKeys: String, CodingKey {
        case createdAt = "created_at"
        case id
        case quoted = "a \"b\"\\c\td"
        case unicode = "é日本😀"
    }
}

public struct KeysPlain: Decodable, Equatable {
    public let createdAt: String
    let id: Int
    var cached = 0
    let quoted: Int
    let unicode: Bool

    enum CodingKeys: String, CodingKey {
        case createdAt = "created_at"
        case id
        case quoted = "a \"b\"\\c\td"
        case unicode = "é日本😀"
    }
}

/// `CodingKeys` without `String` raw values: the case names are the keys.
@JSONFieldsDecodable
package struct IntKeysMacro: Decodable, Equatable {
    let id: Int
    let rank: Int?
    enum CodingKeys: Int, CodingKey {
        case id = 7
        case rank
    }
}

package struct IntKeysPlain: Decodable, Equatable {
    let id: Int
    let rank: Int?
    enum CodingKeys: Int, CodingKey {
        case id = 7
        case rank
    }
}

/// A generic struct, and an empty one.
@JSONFieldsDecodable
struct BoxMacro<Value: Decodable & Equatable>: Decodable, Equatable {
    let value: Value
    let values: [Value]?
}

struct BoxPlain<Value: Decodable & Equatable>: Decodable, Equatable {
    let value: Value
    let values: [Value]?
}

@JSONFieldsDecodable
struct EmptyMacro: Decodable, Equatable {}

struct EmptyPlain: Decodable, Equatable {}

@Suite(.endToEnd) struct MacroFormsTests {
    typealias Outcome = FieldsDifferentialTests.Outcome

    /// `text` through both types, by the whole document and by extraction at `items` when it holds an array.
    func same<M: Decodable & Equatable, P: Decodable & Equatable>(
        _ text: String, _ macro: M.Type, _ plain: P.Type, decoder: JSONItemDecoder = JSONItemDecoder(),
        sourceLocation: SourceLocation = #_sourceLocation
    ) {
        let bytes = Array(text.utf8)
        let m = Outcome { "\(try decoder.decode(M.self, from: bytes))".replacingOccurrences(of: "Macro", with: "") }
        let p = Outcome { "\(try decoder.decode(P.self, from: bytes))".replacingOccurrences(of: "Plain", with: "") }
        #expect(m == p, "\(text)", sourceLocation: sourceLocation)
    }

    @Test("optional forms, defaults, static, computed, observed, shared annotations, backticks, dates")
    func propertyForms() {
        #expect((FormsMacro.self as Any.Type) is any JSONFieldsDecodable.Type)
        let full = #"{"id":1,"name":"n","tags":["t"],"alias":"x","score":2.5,"seen":true,"a":3,"b":4,"default":5,"when":0}"#
        let sparse = #"{"id":1,"name":null,"score":0,"seen":false,"a":3,"b":4,"when":86400}"#
        for text in [full, sparse] { same(text, FormsMacro.self, FormsPlain.self) }
        // Each required key missing, null or of the wrong kind fails the same way.
        for key in ["id", "score", "seen", "a", "b", "when"] {
            same(full.replacingOccurrences(of: #""\#(key)":"#, with: #""x\#(key)":"#), FormsMacro.self, FormsPlain.self)
        }
        for (key, bad) in [("name", "1"), ("tags", "[1]"), ("default", #""5""#), ("when", #""now""#), ("score", "null")] {
            let broken = full.replacingOccurrences(
                of: #""\#(key)":"#, with: #""\#(key)":\#(bad),"old\#(key)":"#)
            same(broken, FormsMacro.self, FormsPlain.self)
        }
        // A date strategy applies to Decodable values read by the macro's initializer too.
        var decoder = JSONItemDecoder()
        decoder.dateDecodingStrategy = .millisecondsSince1970
        same(full, FormsMacro.self, FormsPlain.self, decoder: decoder)
    }

    @Test("CodingKeys raw values with quotes, backslashes, tabs and unicode; a left-out property keeps its value")
    func codingKeys() throws {
        let text = #"{"created_at":"c","id":1,"cached":9,"a \"b\"\\c\td":2,"é日本😀":true}"#
        same(text, KeysMacro.self, KeysPlain.self)
        let value = try JSONItemDecoder().decode(KeysMacro.self, from: Array(text.utf8))
        #expect(value.cached == 0 && value.quoted == 2 && value.unicode)
        same(#"{"created_at":"c","id":1,"quoted":2,"unicode":true}"#, KeysMacro.self, KeysPlain.self)
    }

    @Test("CodingKeys that are not String-backed give their case names; generic and empty structs")
    func otherShapes() throws {
        same(#"{"id":1,"rank":2}"#, IntKeysMacro.self, IntKeysPlain.self)
        same(#"{"7":1}"#, IntKeysMacro.self, IntKeysPlain.self)
        same(#"{"value":"a","values":["b"]}"#, BoxMacro<String>.self, BoxPlain<String>.self)
        same(#"{"value":1,"values":null}"#, BoxMacro<Int>.self, BoxPlain<Int>.self)
        same(#"{"value":{"value":1}}"#, BoxMacro<BoxMacro<Int>>.self, BoxPlain<BoxPlain<Int>>.self)
        same(#"{"x":1}"#, EmptyMacro.self, EmptyPlain.self)
        // The one difference: with no property to read, the compiler's init(from:) asks for no container and
        // accepts any value; init(fields:) reads an object.
        #expect(throws: DecodingError.self) { try JSONItemDecoder().decode(EmptyMacro.self, from: Array("[]".utf8)) }
        #expect(try JSONItemDecoder().decode(EmptyPlain.self, from: Array("[]".utf8)) == EmptyPlain())
    }
}
#endif
