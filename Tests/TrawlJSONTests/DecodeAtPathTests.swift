import Testing
import TrawlTestSupport
import TrawlJSON

@Suite("Decoding the value at a key path in one pass", .hangGuard)
struct DecodeAtPathTests {
    struct Item: Decodable, Equatable {
        let id: Int
    }

    let body = Array(#"{"meta":{"n":2},"data":{"items":[{"id":1},{"id":2}],"next":null},"tail":[1,2,3]}"#.utf8)

    @Test("arrays, objects and scalars at a path")
    func values() throws {
        let decoder = JSONItemDecoder()
        #expect(try decoder.decode([Item].self, from: body, at: "data.items") == [Item(id: 1), Item(id: 2)])
        #expect(try decoder.decode(Item.self, from: body, at: "data.items.1") == Item(id: 2))
        #expect(try decoder.decode(Int.self, from: body, at: "meta.n") == 2)
        #expect(try decoder.decode(Int?.self, from: body, at: "data.next") == nil)
        #expect(try decoder.decode([Int].self, from: body, at: "tail") == [1, 2, 3])
        #expect(try decoder.decode([Int].self, from: Array("[4,5]".utf8), at: .root) == [4, 5])
    }

    @Test("a missing path is valueNotFound; malformed JSON is a JSONError")
    func errors() throws {
        #expect(throws: DecodingError.self) { try JSONItemDecoder().decode(Int.self, from: body, at: "meta.missing") }
        #expect(throws: JSONError.self) {
            try JSONItemDecoder().decode(Int.self, from: Array(#"{"meta":{"n":2"#.utf8), at: "meta.n")
        }
    }
}
