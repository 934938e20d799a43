// walk-bench URL CONCURRENCY: the paginated walk (c) through Trawl's public API, items decoded into a struct.
//
// URL lists pages with `page=P` (`{"items":[...],"total_pages":T}`); `api.items(of:as:at:style:)` reads page 1,
// learns the total and fetches the rest CONCURRENCY at a time, in order, decoding each item as its page streams in.
// Prints one JSON line like the Python walkers (Benchmarks/peers/py/walk.py).
import Foundation
import Trawl
import TrawlJSON
import TrawlMacros

struct Item: Decodable, Sendable {
    struct Owner: Decodable, Sendable { let id: Int }
    let id: Int
    let name: String
    let tag: String
    let score: Double
    let createdAt: String
    let active: Bool
    let owner: Owner

    enum CodingKeys: String, CodingKey {
        case id, name, tag, score, active, owner
        case createdAt = "created_at"
    }
}

/// `Item` with Trawl's fastest typed path (MODE api-fields): the same values, read through `JSONFieldsDecodable`.
struct FieldsItem: Decodable, Sendable, JSONFieldsDecodable {
    struct Owner: Decodable, Sendable, JSONFieldsDecodable {
        let id: Int
        init(fields: inout JSONFields) throws { id = try fields.decode("id") }
    }
    let id: Int
    let name: String
    let tag: String
    let score: Double
    let createdAt: String
    let active: Bool
    let owner: Owner

    init(fields: inout JSONFields) throws {
        id = try fields.decode("id")
        name = try fields.decode("name")
        tag = try fields.decode("tag")
        score = try fields.decode("score")
        createdAt = try fields.decode("created_at")
        active = try fields.decode("active")
        owner = try fields.decode("owner")
    }
}

/// `Item` with one attribute (MODE api-macro): `@JSONFieldsDecodable` writes the `init(fields:)` above.
@JSONFieldsDecodable
struct MacroItem: Decodable, Sendable {
    @JSONFieldsDecodable
    struct Owner: Decodable, Sendable { let id: Int }
    let id: Int
    let name: String
    let tag: String
    let score: Double
    let createdAt: String
    let active: Bool
    let owner: Owner

    enum CodingKeys: String, CodingKey {
        case id, name, tag, score, active, owner
        case createdAt = "created_at"
    }
}

/// What the walk counts of an item.
protocol WalkItem: Decodable, Sendable { var id: Int { get } }
extension Item: WalkItem {}
extension FieldsItem: WalkItem {}
extension MacroItem: WalkItem {}

struct Listing: GetRoute {
    let url: URL
    var baseURL: String? { url.absoluteString }
    var path: RoutePath { "" }
}

let arguments = CommandLine.arguments
guard arguments.count >= 3, let url = URL(string: arguments[1]), let concurrency = Int(arguments[2]) else {
    FileHandle.standardError.write(Data("usage: walk-bench URL CONCURRENCY\n".utf8))
    exit(2)
}
var configuration = Client.Configuration()
configuration.maxConcurrentTransfers = concurrency
configuration.maxConnectionsPerHost = concurrency
let api = API(baseURL: url.absoluteString, client: Client(configuration: configuration))

let clock = ContinuousClock()
let start = clock.now
/// MODE api: iterated off the main actor, as a server or a job runner would; api-main: on the main actor, as
/// top-level code does (the iterators read on the caller's actor, so neither hops threads per item); api-fields:
/// as api, items read through `JSONFieldsDecodable` (Trawl's fastest typed path); api-macro: the same, its
/// `init(fields:)` written by `@JSONFieldsDecodable`.
nonisolated func walk<T: WalkItem>(
    _ type: T.Type
) async -> (items: Int, checksum: Int, errors: Int, firstError: String) {
    await walk(T.self, isolation: nil)
}

@MainActor func walkOnMain() async -> (items: Int, checksum: Int, errors: Int, firstError: String) {
    await walk(Item.self, isolation: MainActor.shared)
}

func walk<T: WalkItem>(
    _ type: T.Type, isolation: isolated (any Actor)?
) async -> (items: Int, checksum: Int, errors: Int, firstError: String) {
    var items = 0
    var checksum = 0
    do {
        let sequence = try await api.items(
            of: Listing(url: url), as: T.self, at: "items", style: .page(totalPages: "total_pages"),
            maxConcurrentPages: concurrency)
        for try await item in sequence {
            items += 1
            checksum = (checksum &+ (item.id & 0xFF)) & 0xFFFF_FFFF
        }
    } catch {
        return (items, checksum, 1, "\(error)")
    }
    return (items, checksum, 0, "")
}
/// The same pages without the paginator (diagnostics): MODE stream = `client.items` per page, send = buffered
/// `client.send` then extraction; CONCURRENCY pages in a task group, in no particular order.
nonisolated func walkPages(streaming: Bool) async -> (items: Int, checksum: Int, errors: Int, firstError: String) {
    let client = api.client
    let decoder = JSONItemDecoder()
    return await withTaskGroup(of: (Int, Int, String?).self) { group in
        var next = 1
        func add() {
            let page = next
            next += 1
            let request = Request(url: url.absoluteString + "?page=\(page)")
            group.addTask {
                var items = 0
                var checksum = 0
                do {
                    if streaming {
                        for try await item in client.items(Item.self, at: "items", in: request, decoder: decoder) {
                            items += 1
                            checksum &+= item.id & 0xFF
                        }
                    } else {
                        let response = try await client.send(request)
                        let extractor = try JSONExtractor(path: "items", form: .values)
                        let onElement: (JSONElement) throws -> Void = { element in
                            items += 1
                            checksum &+= try element.decode(Item.self, using: decoder).id & 0xFF
                        }
                        try extractor.feed(response.body, onElement: onElement)
                        _ = try extractor.finish(onElement: onElement)
                    }
                } catch {
                    return (items, checksum, "\(error)")
                }
                return (items, checksum, nil)
            }
        }
        for _ in 0..<concurrency { add() }
        var items = 0, checksum = 0, errors = 0
        var firstError = ""
        for await (count, sum, error) in group {
            items += count
            checksum = (checksum &+ sum) & 0xFFFF_FFFF
            if let error {
                errors += 1
                if firstError.isEmpty { firstError = error }
            }
            if next <= pages { add() }
        }
        return (items, checksum, errors, firstError)
    }
}
let mode = arguments.count > 3 ? arguments[3] : "api"
let pages = arguments.count > 4 ? Int(arguments[4]) ?? 10_000 : 10_000
let (items, checksum, errors, firstError) =
    switch mode {
    case "stream": await walkPages(streaming: true)
    case "send": await walkPages(streaming: false)
    case "api-main": await walkOnMain()
    case "api-fields": await walk(FieldsItem.self)
    case "api-macro": await walk(MacroItem.self)
    default: await walk(Item.self)
    }
let elapsed = start.duration(to: clock.now)
let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
let line: [String: Any] = [
    "client": "trawl (\(mode), decoded)", "items": items, "errors": errors, "first_error": firstError,
    "checksum": checksum, "seconds": seconds, "items_per_s": Double(items) / seconds,
]
let data = try JSONSerialization.data(withJSONObject: line, options: [.sortedKeys])
print(String(decoding: data, as: UTF8.self))
exit(errors == 0 ? 0 : 1)
