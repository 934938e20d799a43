import Testing
import TrawlTestSupport
@testable import TrawlJSON

/// The fast lane (`ItemScanner`) takes the items array's elements whole when they are written as JSON, recorded
/// as events (`.values`, for decoding) or counted. `extract` in Support.swift runs every test's extraction with
/// and without it and expects the same elements (their event bytes too), summary and error; these tests feed it
/// generated documents, valid and broken, in random chunks.
@Suite(.hangGuard) struct FastLaneTests {
    struct Random {
        var state: UInt64
        mutating func next(_ bound: Int) -> Int {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return Int((state >> 33) % UInt64(Swift.max(bound, 1)))
        }
        mutating func pick<T>(_ choices: [T]) -> T { choices[next(choices.count)] }
    }

    static let strings = [
        "plain", "", "caf\u{E9}", "\u{1F600} emoji", "tab\\there", "quote\\\"d", "back\\\\slash", "sl\\/ash",
        "\\u00e9t\\u00E9", "\\ud83d\\ude00", "\\u0000nul", "\\u001f\\u007f", "\\uFFFF\\uFFFE\\uFEFF", "\\b\\f\\n\\r",
        "\u{7F}del", "\\u0041\\u0022\\u005c", "long-" + String(repeating: "x", count: 40),
    ]
    static let numbers = ["0", "-0", "1", "-12", "3.25", "1e5", "-2.5E-3", "1E+2", "12345678901234567890123", "0.0"]
    static let spaces = ["", "", "", " ", "\n", " \n\t", "\r\n  "]

    static func value(_ random: inout Random, depth: Int) -> String {
        let space = random.pick(spaces)
        switch random.next(depth > 4 ? 4 : 7) {
        case 0: return "\"" + random.pick(strings) + "\""
        case 1: return random.pick(numbers)
        case 2: return random.pick(["true", "false", "null"])
        case 3: return "\"" + random.pick(strings) + "\"" + space
        case 4, 5:
            let members = (0..<random.next(4)).map { index in
                // Sometimes a repeated key: the events flag such objects.
                let key = "k\(random.next(4) == 0 ? 0 : index)" + random.pick(["", "\\n", "\u{E9}"])
                return "\(random.pick(spaces))\"\(key)\"\(space):" + value(&random, depth: depth + 1)
            }
            return "{" + members.joined(separator: ",") + random.pick(spaces) + "}"
        default:
            let elements = (0..<random.next(4)).map { _ in random.pick(spaces) + value(&random, depth: depth + 1) }
            return "[" + elements.joined(separator: ",") + space + "]"
        }
    }

    static func document(_ random: inout Random) -> [UInt8] {
        let items = (0..<random.next(12)).map { _ in random.pick(spaces) + value(&random, depth: 0) }
        var text = "{\"meta\":{\"n\":1},\"items\":[" + items.joined(separator: ",") + random.pick(spaces)
            + "],\"next\":\"c\"}"
        if random.next(4) == 0 { text = "[" + items.joined(separator: ",") + "]" }
        var bytes = Array(text.utf8)
        // Broken documents: a byte replaced, removed or inserted, or the end cut off.
        let noise = Array("[]{}:,\"\\ \n0-.eEtfnu\u{1}".utf8) + [0xFF, 0xC3, 0xE0, 0x80, 0xED]
        switch random.next(6) {
        case 0 where !bytes.isEmpty: bytes[random.next(bytes.count)] = random.pick(noise)
        case 1 where !bytes.isEmpty: bytes.remove(at: random.next(bytes.count))
        case 2: bytes.insert(random.pick(noise), at: random.next(bytes.count + 1))
        case 3: bytes = Array(bytes.prefix(random.next(bytes.count + 1)))
        default: break
        }
        return bytes
    }

    @Test(arguments: [JSONExtractor.Form.json, .countOnly, .values])
    func generatedDocumentsAgreeWithTheSlowPath(form: JSONExtractor.Form) async throws {
        let seeds: [JSONExtractor.Form: UInt64] = [
            .json: 0x9E37_79B9_7F4A_7C15, .values: 0x2545_F491_4F6C_DD1D, .countOnly: 0xD1B5_4A32_D192_ED03,
        ]
        var random = Random(state: seeds[form] ?? 1)
        let limits = [
            JSONLimits(),
            JSONLimits(maxDepth: 3, maxTokenBytes: 12, maxElementBytes: 40, maxCaptureBytes: 64),
            JSONLimits(maxDepth: 5, maxTokenBytes: 30, maxElementBytes: 120, maxCaptureBytes: 64),
        ]
        // 600 documents per form here (15,000 passed once); the json-chunking fuzz target goes on from there.
        for round in 0..<600 {
            // CPU-bound: let the suite's timing-sensitive tests run on the cooperative pool meanwhile.
            if round % 5 == 0 { await Task.yield() }
            let document = Self.document(&random)
            let path: JSONKeyPath = document.first == UInt8(ascii: "[") ? .root : "items"
            let limit = random.pick(limits)
            let capture: [JSONKeyPath] = path == .root ? [] : ["next", "meta.n"]
            _ = try extract(document, path: path, capture: capture, form: form, limits: limit)
            _ = try extract(document, path: path, capture: capture, form: form, limits: limit, chunkSize: 1)
            _ = try extract(
                document, path: path, capture: capture, form: form, limits: limit, chunkSize: 1 + random.next(9))
            _ = try extract(
                document, path: path, capture: capture, form: form, limits: limit,
                splits: [random.next(document.count + 1)])
        }
    }

    @Test func escapesAreWrittenAsTheSlowPathWritesThem() throws {
        let result = try extract(
            #"{"items":["\u00e9\ud83d\ude00\u0000\u001F\/\"\\\b\f\n\r\t\u007f", {"k\u0041":"\uFFFF"}]}"#,
            path: "items")
        #expect(result.lines == ["\"é😀\\u0000\\u001f/\\\"\\\\\\b\\f\\n\\r\\t\u{7F}\"", "{\"kA\":\"\u{FFFF}\"}"])
    }

    /// The lane is what reads the items of an ordinary page: a change that quietly turned it off would only
    /// show in the benchmarks.
    @Test func theLaneTakesTheItemsOfAnOrdinaryPage() throws {
        let page = #"{"meta":{"page":1},"items":[{"id":1,"name":"a"},{"id":2,"tags":["x","y"]}],"next":"n2"}"#
        for form in [JSONExtractor.Form.json, .countOnly, .values] {
            let extractor = try JSONExtractor(path: "items", capture: ["next"], form: form)
            var lines: [String] = []
            for byte in page.utf8 {
                try extractor.feed([byte]) { lines.append(String(decoding: $0.json, as: UTF8.self)) }
            }
            let summary = try extractor.finish { lines.append(String(decoding: $0.json, as: UTF8.self)) }
            #expect(extractor.laneElements == 2)
            #expect(summary.elementCount == 2)
            #expect(summary.captured["next"] == .string("n2"))
            #expect(lines == (form == .countOnly ? [] : [#"{"id":1,"name":"a"}"#, #"{"id":2,"tags":["x","y"]}"#]))
        }
        // Not when a capture looks inside the elements: those need every token.
        let watched = try JSONExtractor(path: "items", capture: ["items.-1.id"])
        try watched.feed(Array(page.utf8))
        #expect(try watched.finish().captured["items.-1.id"] == .number("2"))
        #expect(watched.laneElements == 0)
    }

    /// Typed items read events: the lane records them byte for byte as the slow path does, the flag of an object
    /// whose keys repeat included (and not set when distinct keys only collide in the key filter).
    @Test func eventsAreRecordedAsTheSlowPathRecordsThem() throws {
        let many = (0..<80).map { "\"key\($0)\":\($0)" }.joined(separator: ",")
        let page = #"{"items":[{"a":1,"a":2},{"a\u0041":"x\n","b":[1,{"c":null}],"d":-0.5e+3},"s",1.5e3,"#
            + #"true,false,null,[],{},{"#  + many + #"},{"#  + many + #","key3":"again"}]}"#
        for chunkSize in [nil, 1, 7] {
            let result = try extract(page, path: "items", form: .values, chunkSize: chunkSize)
            #expect(result.raw.count == 11)
            #expect(result.lines[0] == #"{"a":1,"a":2}"#)
        }
        let extractor = try JSONExtractor(path: "items", form: .values)
        var flags: [Bool] = []
        try extractor.feed(Array(page.utf8)) { element in
            element.bytes.withUnsafeBytes { events in
                let reader = EventReader(events)
                if reader.tag(at: 0) == EventTag.object.rawValue { flags.append(reader.mayRepeatKeys(at: 0)) }
            }
        }
        _ = try extractor.finish()
        #expect(extractor.laneElements == 11)
        #expect(flags == [true, false, false, false, true])
    }

    /// The lane accepts only what the grammar allows: a value where a key must be, a key without its value, a
    /// closer of the other kind or a missing comma is left to the slow path, which fails it at the same byte.
    @Test func malformedContainersAreLeftToTheSlowPath() throws {
        let elements = [
            #"{"a":1,2}"#, #"{"a":1,[]}"#, #"{"a":1,"b"}"#, #"{"a":1,}"#, #"{"a" 1}"#, #"{1:2}"#, #"[1,2}"#,
            #"{"a":1]"#, #"[1 2]"#, #"{"a":1 "b":2}"#, #"[,1]"#, #"{,"a":1}"#, #"{"a"::1}"#, #"[1,]"#,
        ]
        for element in elements {
            for form in [JSONExtractor.Form.json, .values, .countOnly] {
                let page = #"{"items":[{"ok":true},"# + element + #",{"after":1}]}"#
                let result = try extract(page, path: "items", form: form)
                #expect(result.error != nil, "\(element) in form \(form) was accepted")
                #expect(result.lines.count == (form == .countOnly ? 0 : 1), "\(element): the element before it")
            }
        }
    }

    /// Memory stays bounded: an element the lane waits for is handed to the slow path past 1 MiB, and a
    /// string or number past the token limit as soon as it passes it.
    @Test func aHugeElementGoesToTheSlowPath() throws {
        let big = "[" + String(repeating: "\"abcdefghij\",", count: 150_000) + "1]"
        let document = Array(("{\"items\":[1," + big + ",2]}").utf8)
        for form in [JSONExtractor.Form.json, .values] {
            let result = try extract(document, path: "items", form: form, chunkSize: 65536)
            #expect(result.lines.count == 3)
            #expect(result.lines.first == "1" && result.lines.last == "2")
        }
    }

    /// An element nested deeper than the lane goes (63 levels) is read by the slow path, in every form.
    @Test func aDeepElementGoesToTheSlowPath() throws {
        let deep = String(repeating: "[{\"k\":", count: 40) + "0" + String(repeating: "}]", count: 40)
        let document = #"{"items":[{"a":1},"# + deep + #",{"b":2}]}"#
        for form in [JSONExtractor.Form.json, .values, .countOnly] {
            let result = try extract(document, path: "items", form: form, chunkSize: 100)
            #expect(result.error == nil)
            #expect(result.summary?.elementCount == 3)
            if form != .countOnly { #expect(result.lines[1] == deep) }
        }
    }
}
