import Foundation
import Testing
import TrawlTestSupport
@testable import TrawlJSON

/// Decoders and their keyed containers are reused from one value to the next (issue 15): nothing of one
/// value may leak into the next, whatever their types and shapes.
@Suite(.hangGuard) struct DecoderReuseTests {
    struct Pair: Decodable, Equatable {
        let first: Int
        let second: String
    }

    struct Other: Decodable, Equatable {
        struct Inner: Decodable, Equatable { let second: Int }
        let inner: Inner
        let first: String
    }

    /// Items of two types with their keys in varying orders, decoded in turn with one `JSONItemDecoder`:
    /// the key-lookup hint and the container kept for a slot belong to the value they were made for.
    @Test func alternatingTypesAndKeyOrdersDecodeEachValueAfresh() throws {
        let decoder = JSONItemDecoder()
        for round in 0..<50 {
            let pair = round % 2 == 0
                ? #"{"a":0,"second":"s\#(round)","first":\#(round)}"#
                : #"{"first":\#(round),"zz":[1,2,3],"second":"s\#(round)"}"#
            #expect(try decoder.decode(Pair.self, from: Array(pair.utf8)) == Pair(first: round, second: "s\(round)"))
            let other = round % 3 == 0
                ? #"{"first":"o\#(round)","inner":{"second":\#(round)}}"#
                : #"{"inner":{"x":null,"second":\#(round)},"first":"o\#(round)"}"#
            #expect(
                try decoder.decode(Other.self, from: Array(other.utf8))
                    == Other(inner: .init(second: round), first: "o\(round)"))
        }
    }

    /// A `Decodable` that decodes another value inside its own `init(from:)` gets a decoder of its own.
    @Test func decodingInsideDecodingUsesAnotherDecoder() throws {
        struct Outer: Decodable {
            let pair: Pair
            let first: Int
            init(from decoder: any Decoder) throws {
                let container = try decoder.container(keyedBy: Pair.CodingKeysProbe.self)
                let nested = try JSONItemDecoder().decode(Pair.self, from: Array(#"{"first":7,"second":"x"}"#.utf8))
                pair = nested
                first = try container.decode(Int.self, forKey: .first)
            }
        }
        let outer = try JSONItemDecoder().decode(Outer.self, from: Array(#"{"second":"y","first":3}"#.utf8))
        #expect(outer.pair == Pair(first: 7, second: "x"))
        #expect(outer.first == 3)
    }

    /// Many threads decoding at once each get a working decoder.
    @Test func concurrentDecodingStaysCorrect() async throws {
        let decoder = JSONItemDecoder()
        let failures = await withTaskGroup(of: Int.self) { group in
            for task in 0..<8 {
                group.addTask {
                    var failures = 0
                    for i in 0..<500 {
                        let n = task * 1000 + i
                        let json = Array(#"{"second":"\#(n)","first":\#(n)}"#.utf8)
                        if (try? decoder.decode(Pair.self, from: json)) != Pair(first: n, second: "\(n)") {
                            failures += 1
                        }
                    }
                    return failures
                }
            }
            return await group.reduce(0, +)
        }
        #expect(failures == 0)
    }
}

extension DecoderReuseTests.Pair {
    enum CodingKeysProbe: String, CodingKey { case first, second }
}
