// JSON extraction and decoding over an in-memory document generated here (about 29 MB, 100,000 items).
//
// Custom metrics, measured inside each iteration:
//   MB/s            bytes of the document parsed per second (decimal MB)
//   items/s         items handed out (or decoded) per second
//   mallocs/1k items  mallocs counted by the malloc interposer while parsing, per 1,000 items
import Benchmark
import MallocInterposerSwift
import TrawlJSON
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The tolerance (percent) on time-based metrics: `TRAWL_BENCH_TIME_TOLERANCE`, else `fallback`.
/// `micro.sh --check-mallocs` sets it very high so that only malloc counts are checked (busy machine).
func timeTolerance(_ fallback: Double) -> Double {
    guard let raw = getenv("TRAWL_BENCH_TIME_TOLERANCE"), let value = Double(String(cString: raw)) else {
        return fallback
    }
    return value
}

/// The item type decoded by the decoding benchmarks (snake_case keys in the document).
struct Item: Decodable, Sendable {
    struct Owner: Decodable, Sendable {
        let login: String
        let id: Int
    }

    let id: Int
    let name: String
    let fullName: String
    let price: Double
    let inStock: Bool
    let tags: [String]
    let owner: Owner
    let description: String
    let score: Double?
}

enum Fixture {
    static let itemCount = 100_000
    static let chunkSize = 64 * 1024

    /// `{"total_count":N,"items":[{...},...],"next":"..."}`, about 290 bytes per item.
    static let document: [UInt8] = {
        var out = [UInt8]()
        out.reserveCapacity(itemCount * 260)
        out.append(contentsOf: #"{"total_count":\#(itemCount),"incomplete_results":false,"items":["#.utf8)
        for i in 0..<itemCount {
            if i > 0 { out.append(UInt8(ascii: ",")) }
            let score = i % 7 == 0 ? "null" : "\(Double(i % 1000) / 8)"
            let item = #"""
                {"id":\#(1_000_000 + i),"name":"item-\#(i)","full_name":"owner-\#(i % 977)/item-\#(i)",\#
                "price":\#(i % 10_000).\#(i % 100),"in_stock":\#(i % 3 == 0 ? "false" : "true"),\#
                "tags":["alpha","beta-\#(i % 13)","caf\u00e9"],"owner":{"login":"user-\#(i % 977)","id":\#(i % 977)},\#
                "description":"Item number \#(i) with an escaped \"quote\" and some padding text to look real",\#
                "score":\#(score)}
                """#
            out.append(contentsOf: item.utf8)
        }
        out.append(contentsOf: #"],"next":"https://api.example.com/items?page=2"}"#.utf8)
        return out
    }()

    static var megabytes: Double { Double(document.count) / 1_000_000 }

    static let decoder: JSONItemDecoder = {
        var decoder = JSONItemDecoder()
        decoder.keyDecodingStrategy = .convertFromSnakeCase
        return decoder
    }()
}

let megabytesPerSecond = BenchmarkMetric.custom("MB/s", polarity: .prefersLarger, useScalingFactor: false)
let itemsPerSecond = BenchmarkMetric.custom("items/s", polarity: .prefersLarger, useScalingFactor: false)
let mallocsPerThousandItems = BenchmarkMetric.custom(
    "mallocs/1k items", polarity: .prefersSmaller, useScalingFactor: false)

/// Runs `body` once, then records MB/s, items/s and mallocs per 1,000 items for it.
@inline(__always)
func measure(_ benchmark: Benchmark, _ body: () throws -> Int) rethrows {
    let mallocsBefore = MallocInterposerSwift.getStatistics().mallocCount
    let start = ContinuousClock.now
    let items = try body()
    let elapsed = ContinuousClock.now - start
    let mallocs = MallocInterposerSwift.getStatistics().mallocCount - mallocsBefore
    let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) * 1e-18
    precondition(items == Fixture.itemCount, "expected \(Fixture.itemCount) items, got \(items)")
    benchmark.measurement(megabytesPerSecond, Int((Fixture.megabytes / seconds).rounded()))
    benchmark.measurement(itemsPerSecond, Int((Double(items) / seconds).rounded()))
    benchmark.measurement(mallocsPerThousandItems, mallocs * 1000 / max(items, 1))
}

/// Feeds the document in `chunkSize` pieces, as a response body would arrive.
func extract(form: JSONExtractor.Form, onElement: (JSONElement) throws -> Void) throws -> Int {
    let extractor = try JSONExtractor(path: "items", capture: ["total_count", "next"], form: form)
    let document = Fixture.document
    var offset = 0
    while offset < document.count {
        let end = min(offset + Fixture.chunkSize, document.count)
        try extractor.feed(document[offset..<end], onElement: onElement)
        offset = end
    }
    let summary = try extractor.finish(onElement: onElement)
    precondition(summary.captured["total_count"] == .number("\(Fixture.itemCount)"))
    return summary.elementCount
}

// Benchmark names: letters, digits and dashes only. package-benchmark 1.38.1 writes threshold files
// with spaces and slashes replaced by underscores but reads them back by the raw name.
let benchmarks: @Sendable () -> Void = {
    // Loose bounds for a noisy shared 2-core machine on time-based metrics (p90 is what
    // `thresholds check` compares); malloc counts are deterministic and kept tight.
    let timing = BenchmarkThresholds(relative: [.p90: timeTolerance(35)])
    // Relative only: an absolute tolerance is checked as well, not instead, so it would be stricter.
    let mallocs = BenchmarkThresholds(relative: [.p90: 5.0])

    Benchmark.defaultConfiguration = .init(
        metrics: [.wallClock, .mallocCountTotal, megabytesPerSecond, itemsPerSecond, mallocsPerThousandItems],
        timeUnits: .milliseconds,
        warmupIterations: 1,
        maxDuration: .seconds(5),
        maxIterations: 15,
        thresholds: [
            .wallClock: timing,
            megabytesPerSecond: timing,
            itemsPerSecond: timing,
            .mallocCountTotal: mallocs,
            mallocsPerThousandItems: mallocs,
        ]
    )
    _ = Fixture.document  // generated once, outside any measurement

    // (1) Extraction: raw compact JSON per element, the `trawl extract` / JSONL path.
    Benchmark("extract-json") { benchmark in
        try measure(benchmark) {
            var bytes = 0
            let count = try extract(form: .json) { bytes &+= $0.json.count }
            blackHole(bytes)
            return count
        }
    }

    // Extraction without materialising elements: the parser and path matcher alone.
    Benchmark("extract-countOnly") { benchmark in
        try measure(benchmark) { try extract(form: .countOnly) { _ in } }
    }

    // (2) Decoding: each element straight into a Decodable struct (snake_case keys).
    Benchmark("decode-items-values") { benchmark in
        try measure(benchmark) {
            var total = 0
            let count = try extract(form: .values) { element in
                let item = try element.decode(Item.self, using: Fixture.decoder)
                total &+= item.id
            }
            blackHole(total)
            return count
        }
    }

    // Decoding the whole array at a key path in one call.
    Benchmark("decode-array-at-path") { benchmark in
        try measure(benchmark) {
            let items = try Fixture.decoder.decode([Item].self, from: Fixture.document, at: "items")
            blackHole(items)
            return items.count
        }
    }
}
