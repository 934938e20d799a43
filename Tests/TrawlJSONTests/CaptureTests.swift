import Testing
import TrawlTestSupport
@testable import TrawlJSON

@Suite(.hangGuard) struct CaptureTests {
    let stripe = #"""
        {"object": "list", "data": [{"id": "ch_1", "amount": 5}, {"id": "ch_2", "amount": 7},
         {"id": "ch_3", "amount": 9, "meta": {"id": "decoy"}}], "has_more": true,
         "url": "/v1/charges", "meta": {"next": "https://x/?p=2", "total_count": 12345678901234567890}}
        """#

    @Test func capturesSideFieldsInTheSamePass() throws {
        let capture: [JSONKeyPath] = ["has_more", "data.-1.id", "data.-2.amount", "data.0.id", "meta.next",
                                      "meta.total_count", "missing", "meta", "data.5.id"]
        for chunkSize in [nil, 1, 7] {
            let result = try extract(stripe, path: "data", capture: capture, chunkSize: chunkSize)
            #expect(result.lines.count == 3)
            let captured = try #require(result.summary).captured
            #expect(captured["has_more"] == .bool(true))
            #expect(captured["data.-1.id"] == .string("ch_3"))
            #expect(captured["data.-2.amount"] == .number("7"))
            #expect(captured["data.0.id"] == .string("ch_1"))
            #expect(captured["meta.next"] == .string("https://x/?p=2"))
            #expect(captured["meta.total_count"] == .number("12345678901234567890"))
            #expect(captured["meta"]?["total_count"]?.int64Value == nil)
            #expect(captured["missing"] == nil)
            #expect(captured["data.5.id"] == nil)
        }
    }

    @Test func fromTheEndIsMissingWhenTheLastElementLacksTheField() throws {
        // A nil capture must come from a finished extraction (a failed one has no summary at all), and the
        // element before the last, which has the field, must not stand in for the last.
        let result = try extract(#"{"data":[{"id":1},{"x":2}]}"#, path: "data", capture: ["data.-1.id", "data.-2.id"])
        #expect(result.error == nil)
        let summary = try #require(result.summary)
        #expect(summary.elementCount == 2)
        #expect(summary.captured["data.-2.id"] == .number("1"))
        #expect(summary.captured["data.-1.id"] == nil)
        let empty = try extract(#"{"data":[]}"#, path: "data", capture: ["data.-1.id"])
        #expect(empty.error == nil)
        let emptySummary = try #require(empty.summary)
        #expect(emptySummary.captured["data.-1.id"] == nil)
        #expect(emptySummary.collection == .array)
        #expect(emptySummary.elementCount == 0)
    }

    @Test func explicitNullIsCaptured() throws {
        let result = try extract(#"{"items":[],"next_cursor":null}"#, path: "items", capture: ["next_cursor"])
        #expect(result.summary?.captured["next_cursor"] == .null)
    }

    @Test func lastOccurrenceWinsForCaptures() throws {
        let result = try extract(#"{"next":"a","items":[1],"next":"b"}"#, path: "items", capture: ["next"])
        #expect(result.summary?.captured["next"] == .string("b"))
    }

    @Test func capturesWorkWithEveryForm() throws {
        for form in [JSONExtractor.Form.json, .values, .countOnly] {
            let result = try extract(stripe, path: "data", capture: ["data.-1.id", "url"], form: form)
            #expect(result.summary?.elementCount == 3)
            #expect(result.summary?.captured["data.-1.id"] == .string("ch_3"))
            #expect(result.summary?.captured["url"] == .string("/v1/charges"))
        }
    }

    @Test func rootCaptureAndElementValues() throws {
        let result = try extract(#"{"a":[1,{"b":[true,null]}]}"#, path: "a", capture: [""], form: .values)
        #expect(result.summary?.captured[.root] == ["a": [1, ["b": [true, nil]]]])
        let extractor = try JSONExtractor(path: "a", form: .values)
        var values: [JSONValue] = []
        try extractor.feed(Array(#"{"a":[1,{"b":[true,null]},"s"]}"#.utf8)) { values.append($0.value) }
        _ = try extractor.finish()
        #expect(values == [1, ["b": [true, nil]], "s"])
    }
}

@Suite(.hangGuard) struct KeyPathTests {
    @Test func parsesTheDottedForm() {
        #expect(JSONKeyPath("").components.isEmpty)
        #expect(JSONKeyPath("$") == .root)
        #expect(JSONKeyPath("$.items") == JSONKeyPath("items"))
        #expect(JSONKeyPath("data.-1.id").components == [.key("data"), .index(-1), .key("id")])
        #expect(JSONKeyPath("a.007").components == [.key("a"), .key("007")])
        #expect(JSONKeyPath(#"a\.b.c"#).components == [.key("a.b"), .key("c")])
        #expect(JSONKeyPath(#"a\.b.c"#).description == #"a\.b.c"#)
        #expect(JSONKeyPath.root.description == "$")
    }

    @Test func keysWithDotsMatch() throws {
        let result = try extract(#"{"a.b":{"c":[1]}}"#, path: #"a\.b.c"#)
        #expect(result.lines == ["1"])
    }
}
