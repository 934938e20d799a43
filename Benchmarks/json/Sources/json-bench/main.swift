// Measures TrawlJSON on one file. Usage: json-bench MODE FILE
//   extract  — follow the document and count the elements at `items` (no recording)
//   jsonl    — re-emit each element as compact JSON (a JSON Lines stream, counted not written)
//   lines    — the same lines through `feed(_:appendingLinesTo:)` (what `trawl extract` and `trawl fetch` use)
//   decode   — decode each element into `Item` with JSONItemDecoder
//   fields   — the same through `JSONFieldsDecodable` (Trawl's fastest typed path)
//   values   — build a JSONValue for each element
//   record   — record each element for decoding, without decoding it
//   foundation — Foundation's JSONDecoder decoding the whole document into [Item]
// Prints one line: mode, seconds, MB/s, items/s. Peak memory is measured by run.sh.
import Foundation
import TrawlJSON

struct Item: Decodable {
    struct Owner: Decodable {
        let id: Int
    }
    let id: Int64
    let name: String
    let price: Double
    let tags: [String]
    let active: Bool
    let createdAt: String
    let score: Double
    let owner: Owner
}

/// `Item` with Trawl's fastest typed path (mode `fields`): the same values, read through `JSONFieldsDecodable`.
struct FieldsItem: Decodable, JSONFieldsDecodable {
    struct Owner: Decodable, JSONFieldsDecodable {
        let id: Int
        init(fields: inout JSONFields) throws { id = try fields.decode("id") }
    }
    let id: Int64
    let name: String
    let price: Double
    let tags: [String]
    let active: Bool
    let createdAt: String
    let score: Double
    let owner: Owner

    init(fields: inout JSONFields) throws {
        id = try fields.decode("id")
        name = try fields.decode("name")
        price = try fields.decode("price")
        tags = try fields.decode("tags")
        active = try fields.decode("active")
        createdAt = try fields.decode("created_at")
        score = try fields.decode("score")
        owner = try fields.decode("owner")
    }
}

struct Document: Decodable {
    let items: [Item]
}

let arguments = CommandLine.arguments
guard arguments.count == 3 else {
    FileHandle.standardError.write(
        Data("usage: json-bench extract|jsonl|lines|decode|fields|values|foundation FILE\n".utf8))
    exit(2)
}
let mode = arguments[1]
let path = arguments[2]

/// Reads the file in 64 KiB chunks into one reused buffer, as the C baseline does.
func readChunks(_ body: (ArraySlice<UInt8>) throws -> Void) throws -> Int {
    let descriptor = open(path, O_RDONLY)
    guard descriptor >= 0 else { throw CocoaError(.fileNoSuchFile) }
    defer { close(descriptor) }
    var buffer = [UInt8](repeating: 0, count: 64 << 10)
    var total = 0
    while true {
        let count = buffer.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
        guard count > 0 else { break }
        total += count
        try body(buffer[0..<count])
    }
    return total
}

var decoder = JSONItemDecoder()
decoder.keyDecodingStrategy = .convertFromSnakeCase
let start = DispatchTime.now()
var bytes = 0
var items = 0
var checksum = 0

switch mode {
case "lines":
    let extractor = try JSONExtractor(path: "items", capture: ["next_cursor"], form: .json)
    var output: [UInt8] = []
    output.reserveCapacity(1 << 17)
    bytes = try readChunks { chunk in
        try extractor.feed(chunk, appendingLinesTo: &output)
        if output.count >= 1 << 16 {
            checksum &+= output.count
            output.removeAll(keepingCapacity: true)
        }
    }
    let summary = try extractor.finish(appendingLinesTo: &output)
    checksum &+= output.count
    items = summary.elementCount
case "extract", "jsonl", "decode", "fields", "values", "record":
    let form: JSONExtractor.Form = mode == "extract" ? .countOnly : mode == "jsonl" ? .json : .values
    let extractor = try JSONExtractor(path: "items", capture: ["next_cursor"], form: form)
    var output: [UInt8] = []
    output.reserveCapacity(1 << 17)
    let onElement: (JSONElement) throws -> Void
    switch mode {
    case "jsonl":
        onElement = { element in
            output.append(contentsOf: element.json)
            output.append(10)
            if output.count >= 1 << 16 {
                checksum &+= output.count
                output.removeAll(keepingCapacity: true)
            }
        }
    case "decode":
        onElement = { element in checksum &+= Int(try element.decode(Item.self, using: decoder).id & 0xFF) }
    case "fields":
        onElement = { element in checksum &+= Int(try element.decode(FieldsItem.self, using: decoder).id & 0xFF) }
    case "values":
        onElement = { element in
            if case .object(let members) = element.value { checksum &+= members.count }
        }
    default:
        onElement = { _ in }
    }
    bytes = try readChunks { try extractor.feed($0, onElement: onElement) }
    let summary = try extractor.finish(onElement: onElement)
    checksum &+= output.count
    items = summary.elementCount
case "foundation":
    let data = try Data(contentsOf: URL(fileURLWithPath: path))
    bytes = data.count
    let jsonDecoder = JSONDecoder()
    jsonDecoder.keyDecodingStrategy = .convertFromSnakeCase
    let document = try jsonDecoder.decode(Document.self, from: data)
    items = document.items.count
    checksum = document.items.reduce(0) { $0 &+ Int($1.id & 0xFF) }
default:
    FileHandle.standardError.write(Data("unknown mode \(mode)\n".utf8))
    exit(2)
}

let seconds = Double(DispatchTime.now().uptimeNanoseconds - start.uptimeNanoseconds) / 1e9
print(String(
    format: "%@ bytes=%d items=%d seconds=%.3f MB/s=%.1f items/s=%.0f checksum=%d",
    mode, bytes, items, seconds, Double(bytes) / seconds / 1e6, Double(items) / seconds, checksum))
