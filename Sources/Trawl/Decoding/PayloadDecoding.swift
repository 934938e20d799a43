import Foundation
import TrawlJSON

/// Decodes a route's payload from the response body. Use the built-in streaming decoder (the default),
/// Foundation's `JSONDecoder`, or conform your own:
///
/// ```swift
/// struct MyDecoder: PayloadDecoding {
///     func decode<T: Decodable>(_ type: T.Type, from body: [UInt8], at keyPath: JSONKeyPath?) throws -> T {
///         try MyJSON.decode(type, from: PayloadBytes.value(in: body, at: keyPath))
///     }
/// }
/// api.decoder = MyDecoder()
/// ```
public protocol PayloadDecoding: Sendable {
    /// Decodes the value at `keyPath` (the whole body when `nil`).
    func decode<T: Decodable>(_ type: T.Type, from body: [UInt8], at keyPath: JSONKeyPath?) throws -> T

    /// How the elements of a streamed collection (the items of a page) should be recorded for
    /// ``decode(_:element:)``: `.json` (the default) or, for decoders that read parser events, `.values`.
    var elementForm: JSONExtractor.Form { get }

    /// Decodes one element of a streamed collection: each item of a page, as the page's body arrives.
    /// The default decodes the element's compact JSON with ``decode(_:from:at:)``, so a decoder that
    /// conforms with that one method decodes pages the same way as `send`.
    func decode<T: Decodable>(_ type: T.Type, element: JSONElement) throws -> T
}

extension PayloadDecoding {
    public var elementForm: JSONExtractor.Form { .json }

    public func decode<T: Decodable>(_ type: T.Type, element: JSONElement) throws -> T {
        try decode(type, from: Array(element.json), at: nil)
    }
}

/// Decodes with `TrawlJSON`'s `JSONItemDecoder`, straight from parser events: one pass reaches the key path
/// and decodes the value there, without building a tree or copying the value out first.
///
/// ```swift
/// var items = JSONItemDecoder()
/// items.keyDecodingStrategy = .convertFromSnakeCase
/// api.decoder = StreamingPayloadDecoder(items)
/// ```
public struct StreamingPayloadDecoder: PayloadDecoding {
    public var decoder: JSONItemDecoder

    public init(_ decoder: JSONItemDecoder = JSONItemDecoder()) {
        self.decoder = decoder
    }

    public func decode<T: Decodable>(_ type: T.Type, from body: [UInt8], at keyPath: JSONKeyPath?) throws -> T {
        guard let keyPath else { return try decoder.decode(type, from: body) }
        return try decoder.decode(type, from: body, at: keyPath)
    }

    /// Items are decoded straight from the parser events, never written out as JSON text.
    public var elementForm: JSONExtractor.Form { .values }

    public func decode<T: Decodable>(_ type: T.Type, element: JSONElement) throws -> T {
        try element.decode(type, using: decoder)
    }
}

/// Decodes with Foundation's `JSONDecoder` (made fresh for each response by `makeDecoder`).
///
/// ```swift
/// api.decoder = FoundationPayloadDecoder {
///     let decoder = JSONDecoder()
///     decoder.dateDecodingStrategy = .iso8601
///     return decoder
/// }
/// ```
public struct FoundationPayloadDecoder: PayloadDecoding {
    public let makeDecoder: @Sendable () -> JSONDecoder

    public init(_ makeDecoder: @escaping @Sendable () -> JSONDecoder = { JSONDecoder() }) {
        self.makeDecoder = makeDecoder
    }

    public func decode<T: Decodable>(_ type: T.Type, from body: [UInt8], at keyPath: JSONKeyPath?) throws -> T {
        try makeDecoder().decode(type, from: Data(PayloadBytes.value(in: body, at: keyPath)))
    }
}

/// Helpers for decoders: the JSON text of the value at a key path.
///
/// ```swift
/// PayloadBytes.value(in: Array(#"{"data": {"items": [1, 2]}}"#.utf8), at: "data.items")   // "[1,2]"
/// ```
public enum PayloadBytes {
    /// The compact JSON of the value at `keyPath` (the body itself when `nil` or the root).
    ///
    /// - Throws: `JSONError` for malformed JSON; `DecodingError.valueNotFound` when the path is missing.
    public static func value(in body: [UInt8], at keyPath: JSONKeyPath?) throws -> [UInt8] {
        guard let keyPath, !keyPath.components.isEmpty else { return body }
        let extractor = try JSONExtractor(path: keyPath, form: .json)
        var elements: [ArraySlice<UInt8>] = []
        try extractor.feed(body) { elements.append($0.json) }
        let summary = try extractor.finish { elements.append($0.json) }
        switch summary.collection {
        case .value:
            return elements.first.map(Array.init) ?? Array("null".utf8)
        case .array:
            var out: [UInt8] = [UInt8(ascii: "[")]
            for (index, element) in elements.enumerated() {
                if index > 0 { out.append(UInt8(ascii: ",")) }
                out += element
            }
            out.append(UInt8(ascii: "]"))
            return out
        case .missing:
            throw DecodingError.valueNotFound(
                Any.self, .init(codingPath: [], debugDescription: "no value at key path \(keyPath)"))
        }
    }
}

/// Decodes each element of a page as a GraphQL edge and hands out its `node` (decoded with `base`): a
/// ``PaginationStyle/graphQL(connection:cursorVariable:)`` walk whose items path is the connection's `edges`.
struct EdgeNodeDecoding: PayloadDecoding {
    let base: any PayloadDecoding

    private struct Edge<Node: Decodable>: Decodable {
        var node: Node
    }

    var elementForm: JSONExtractor.Form { base.elementForm }

    func decode<T: Decodable>(_ type: T.Type, from body: [UInt8], at keyPath: JSONKeyPath?) throws -> T {
        try base.decode(type, from: body, at: keyPath)
    }

    func decode<T: Decodable>(_ type: T.Type, element: JSONElement) throws -> T {
        try base.decode(Edge<T>.self, element: element).node
    }
}
