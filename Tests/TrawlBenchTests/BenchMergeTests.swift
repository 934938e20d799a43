import Foundation
import Histogram
import Testing
import TrawlTestSupport
@testable import TrawlBench

@Suite("bench: histograms in HdrHistogram's compressed form merge exactly", .hangGuard)
struct BenchMergeTests {
    /// Latencies spread over six decades, as a run with stalls records them.
    private func values(seed: UInt64, count: Int) -> [UInt64] {
        var state = seed
        return (0..<count).map { _ in
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            let decade = Double((state >> 33) % 6)
            let fraction = Double((state >> 11) % 1000) / 1000
            return UInt64(pow(10, decade + fraction))
        }
    }

    private func histogram(_ values: [UInt64]) -> BenchHistogram {
        var histogram = BenchHistogram.benchLatencies()
        for value in values { histogram.record(value) }
        return histogram
    }

    private let levels = [0, 10, 50, 90, 99, 99.9, 99.99, 100.0]

    @Test func encodingRoundTripsEveryCount() throws {
        let original = histogram(values(seed: 1, count: 20_000))
        let text = BenchHistogramCodec.encode(original)
        #expect(text.hasPrefix("HISTF"), "HdrHistogram's compressed V2 cookie: \(text.prefix(12))")
        let decoded = try BenchHistogramCodec.decode(text, maxValue: original.maxRecorded)
        #expect(decoded.totalCount == original.totalCount)
        for level in levels {
            #expect(decoded.valueAtPercentile(level) == original.valueAtPercentile(level), "p\(level)")
        }
        #expect(decoded.max == original.max)
        #expect(decoded.maxRecorded == original.maxRecorded)
        #expect(Array(decoded.recordedValues()).map(\.count) == Array(original.recordedValues()).map(\.count))
        #expect(try BenchHistogramCodec.decode(BenchHistogramCodec.encode(BenchHistogram.benchLatencies())).totalCount == 0)
    }

    @Test func readsWhatAnotherHdrHistogramWrites() throws {
        // Python's hdrh 0.10.8: HdrHistogram(1, 3600000000, 3), values 1, 5, 100, 1000, 123456, encode().
        let text = "HISTFAAAACx4nJNpmSzMwMDAywABzFCaEURcm7yEwf4DVICJlWk3I1MrH9P+PCYAm6sHIA=="
        let decoded = try BenchHistogramCodec.decode(text)
        #expect(decoded.totalCount == 5)
        #expect(decoded.valueAtPercentile(50) == 100)
        #expect(decoded.valuesAreEquivalent(decoded.max, 123_456))
    }

    @Test func mergedPercentilesEqualOneRecordOfEveryRequest() throws {
        let a = values(seed: 2, count: 7_000)
        let b = values(seed: 3, count: 13_000).map { $0 * 3 }
        let parts = [histogram(a), histogram(b)]
        var merged = try BenchHistogramCodec.decode(BenchHistogramCodec.encode(parts[0]), maxValue: parts[0].maxRecorded)
        merged.add(try BenchHistogramCodec.decode(BenchHistogramCodec.encode(parts[1]), maxValue: parts[1].maxRecorded))
        let all = histogram(a + b)
        for level in levels {
            #expect(merged.valueAtPercentile(level) == all.valueAtPercentile(level), "p\(level)")
        }
    }

    @Test func hostileHistogramsAreRefused() throws {
        let good = BenchHistogramCodec.encode(histogram([1, 2, 3, 1000]))
        var bytes = [UInt8](try #require(Data(base64Encoded: good)))
        let cases: [String] = [
            "", "not base64!", Data([1, 2, 3, 4, 5, 6, 7, 8]).base64EncodedString(),
            String(good.dropLast(8)), Data(bytes.prefix(10)).base64EncodedString(),
            String(repeating: "A", count: (1 << 20) + 4),
        ]
        for text in cases {
            #expect(throws: BenchHistogramCodec.DecodeError.self, "\(text.prefix(40))") {
                try BenchHistogramCodec.decode(text)
            }
        }
        bytes[bytes.count - 3] ^= 0xFF
        #expect(throws: BenchHistogramCodec.DecodeError.self) {
            try BenchHistogramCodec.decode(Data(bytes).base64EncodedString())
        }
    }

    @Test func deepOrHugeResultFilesAreRefused() throws {
        #expect(BenchMerge.depth(of: Data(#"{"a":[[1]],"b":"[[[[["}"#.utf8)) == 3)
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("merge-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let deep = directory.appendingPathComponent("deep.json")
        try Data((String(repeating: "[", count: 100_000) + String(repeating: "]", count: 100_000)).utf8).write(to: deep)
        #expect(throws: BenchMerge.Problem.self) { try BenchMerge.read(deep.path) }
        let other = directory.appendingPathComponent("other.json")
        try Data(#"{"requests_per_s": 1}"#.utf8).write(to: other)
        #expect(throws: BenchMerge.Problem.self) { try BenchMerge.read(other.path) }
    }
}
