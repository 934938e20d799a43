import Foundation

/// `trawl bench --merge A.json B.json …`: one result from the results of several bench processes (machines), with
/// exact percentiles: their whole histograms (`histogram`, HdrHistogram's compressed form) are added, counts,
/// statuses and errors summed, and intervals summed by wall-clock time (`started_at`).
///
/// Every input is hostile: a file over ``maxFileBytes``, nested deeper than ``maxDepth``, with more than
/// ``maxRows`` interval rows in all or a number out of range is refused with the reason.
package enum BenchMerge {
    package struct Problem: Error, CustomStringConvertible {
        package let description: String
    }

    package static let maxFileBytes = 64 << 20
    package static let maxDepth = 16
    package static let maxInputs = 1000
    package static let maxRows = 1_000_000
    /// The largest count or sum accepted from a file.
    static let maxCount = 1e15

    /// Reads one result of `trawl bench --json`.
    package static func read(_ path: String) throws(Problem) -> [String: Any] {
        func fail(_ why: String) -> Problem { Problem(description: "--merge: '\(path)' \(why)") }
        guard let handle = FileHandle(forReadingAtPath: path) else { throw fail("cannot be read") }
        defer { try? handle.close() }
        let data = (try? handle.read(upToCount: maxFileBytes + 1)) ?? nil
        guard let data else { throw fail("cannot be read") }
        guard data.count <= maxFileBytes else { throw fail("is larger than \(maxFileBytes >> 20) MB") }
        guard depth(of: data) <= maxDepth else { throw fail("nests deeper than \(maxDepth) levels") }
        guard let object = (try? JSONSerialization.jsonObject(with: data)) as? [String: Any],
            object["histogram"] is String, object["requests_per_s"] is NSNumber
        else {
            throw fail("is not a result of trawl bench --json with a histogram")
        }
        return object
    }

    /// The deepest nesting of arrays and objects in JSON text (strings skipped).
    static func depth(of data: Data) -> Int {
        var depth = 0
        var deepest = 0
        var inString = false
        var escaped = false
        for byte in data {
            if inString {
                if escaped { escaped = false } else if byte == UInt8(ascii: "\\") { escaped = true }
                else if byte == UInt8(ascii: "\"") { inString = false }
                continue
            }
            switch byte {
            case UInt8(ascii: "\""): inString = true
            case UInt8(ascii: "["), UInt8(ascii: "{"):
                depth += 1
                deepest = max(deepest, depth)
            case UInt8(ascii: "]"), UInt8(ascii: "}"): depth -= 1
            default: break
            }
        }
        return deepest
    }

    /// The merged run of `inputs` (file name, result).
    package static func merge(_ inputs: [(name: String, object: [String: Any])]) throws(Problem) -> BenchReport {
        guard !inputs.isEmpty else { throw Problem(description: "--merge needs result files") }
        guard inputs.count <= maxInputs else { throw Problem(description: "--merge takes at most \(maxInputs) files") }
        var latencies = BenchHistogram.benchLatencies()
        var service: BenchHistogram? = BenchHistogram.benchLatencies()
        var urls: [String] = []
        var concurrency = 0, loops = 0, bytes = 0, lateStarts = 0, unsent = 0, cutOff = 0, warmupRequests = 0
        var cpuSeconds = 0.0, maxLateness = 0.0, warmupSeconds = 0.0, rate = 0.0
        var errors: [String: Int] = [:]
        var statuses: [Int: Int] = [:]
        var spans: [(start: Double, end: Double)] = []
        var mode: String?
        var intervalSeconds: Double?
        var rowCount = 0
        var expected = BenchStatusSet.success
        var timeout: Double?
        for (index, input) in inputs.enumerated() {
            let file = Fields(name: input.name, object: input.object)
            let histogram = try file.string("histogram")
            func maxMicros(_ key: String) -> UInt64? {
                (input.object[key] as? NSNumber).flatMap { UInt64(exactly: $0.doubleValue) }
            }
            do throws(BenchHistogramCodec.DecodeError) {
                latencies.add(try BenchHistogramCodec.decode(histogram, maxValue: maxMicros("max_us")))
                if let text = input.object["service_histogram"] as? String {
                    service?.add(try BenchHistogramCodec.decode(text, maxValue: maxMicros("service_max_us")))
                } else {
                    service = nil
                }
            } catch {
                throw file.problem(error.description)
            }
            let thisMode = try file.string("mode")
            if let mode, mode != thisMode { throw file.problem("is of the \(thisMode) model, another of the \(mode)") }
            mode = thisMode
            for url in (input.object["urls"] as? [Any] ?? []).prefix(1000) {
                if let url = url as? String, url.utf8.count <= 8192, !urls.contains(url) { urls.append(url) }
            }
            concurrency += try file.count("concurrency")
            loops += try file.count("loops", default: 1)
            bytes += try file.count("bytes")
            lateStarts += try file.count("late_starts", default: 0)
            unsent += try file.count("unsent", default: 0)
            cutOff += try file.count("cut_off", default: 0)
            warmupRequests += try file.count("warmup_requests", default: 0)
            let requests = try file.count("requests")
            cpuSeconds += try file.number("cpu_us_per_request", default: 0) * Double(requests) / 1e6
            maxLateness = max(maxLateness, try file.number("max_lateness_ms", default: 0))
            warmupSeconds = max(warmupSeconds, try file.number("warmup_s", default: 0))
            if input.object["rate_store"] is [String: Any] {
                rate = try file.number("rate", default: 0)
            } else {
                rate += try file.number("rate", default: 0)
            }
            for (kind, value) in try file.table("errors") { errors[kind, default: 0] += value }
            for (code, value) in try file.table("statuses") {
                guard let status = Int(code), (100...599).contains(status) else {
                    throw file.problem("has a status '\(code.prefix(20))'")
                }
                statuses[status, default: 0] += value
            }
            let started = try file.number("started_at")
            let duration = try file.number("duration_s")
            spans.append((started, started + duration))
            let length = try file.number("interval_s")
            guard length >= 0.001 else { throw file.problem("has an interval of \(length) s") }
            if let intervalSeconds, abs(intervalSeconds - length) > 1e-9 {
                throw file.problem("has intervals of \(length) s, another of \(intervalSeconds) s (give the same --interval)")
            }
            intervalSeconds = length
            rowCount += (input.object["intervals"] as? [Any])?.count ?? 0
            guard rowCount <= maxRows else { throw file.problem("brings the interval rows past \(maxRows)") }
            if index == 0 {
                if let text = input.object["expect_status"] as? String, let set = BenchStatusSet(parsing: text) {
                    expected = set
                }
                timeout = input.object["timeout_s"] as? Double
            }
        }
        let start = spans.map(\.start).min() ?? 0
        let end = spans.map(\.end).max() ?? 0
        let elapsed = max(0, end - start)
        var report = BenchReport(
            urls: urls, concurrency: concurrency, mode: mode == "open" ? .open : .closed,
            elapsed: BenchDurationText.duration(seconds: min(elapsed, BenchDurationText.longestSeconds)),
            latencies: latencies, bytes: bytes, errors: errors, statuses: statuses, cpuSeconds: cpuSeconds)
        report.loops = loops
        report.serviceLatencies = report.mode == .open ? service : nil
        report.rate = report.mode == .open ? rate : nil
        report.lateStarts = lateStarts
        report.maxLateness = BenchDurationText.duration(seconds: min(maxLateness / 1000, BenchDurationText.longestSeconds))
        report.unsent = unsent
        report.cutOff = cutOff
        report.warmupRequests = warmupRequests
        report.warmupSeconds = warmupSeconds
        report.expectedStatus = expected
        report.timeoutSeconds = timeout
        report.startedAt = start
        report.intervalSeconds = intervalSeconds ?? 1
        report.intervals = try rows(inputs, start: start, length: intervalSeconds ?? 1, elapsed: elapsed)
        return report
    }

    /// The inputs' interval rows summed by wall-clock time; a merged row's percentiles are the largest of its parts
    /// (an upper bound: per-interval histograms are not kept).
    private static func rows(
        _ inputs: [(name: String, object: [String: Any])], start: Double, length: Double, elapsed: Double
    ) throws(Problem) -> [BenchRecorder.Row] {
        let count = Int(min(Double(maxRows), (elapsed / length).rounded(.up)))
        guard count > 0 else { return [] }
        var rows = (0..<count).map { BenchRecorder.Row(start: Double($0) * length, end: Double($0 + 1) * length) }
        if let last = rows.indices.last { rows[last].end = max(rows[last].start, elapsed) }
        let classes = ["1xx", "2xx", "3xx", "4xx", "5xx"]
        for input in inputs {
            let file = Fields(name: input.name, object: input.object)
            let offset = try file.number("started_at") - start
            for case let object as [String: Any] in input.object["intervals"] as? [Any] ?? [] {
                let row = Fields(name: input.name, object: object)
                let middle = offset + (try row.number("start_s") + row.number("end_s")) / 2
                let index = min(count - 1, max(0, Int(middle / length)))
                rows[index].requests += try row.count("requests")
                rows[index].errors += try row.count("errors")
                rows[index].bytes += try row.count("bytes")
                rows[index].inFlight += try row.count("in_flight", default: 0)
                rows[index].p50 = max(rows[index].p50, UInt64(try row.number("p50_ms") * 1000))
                rows[index].p99 = max(rows[index].p99, UInt64(try row.number("p99_ms") * 1000))
                rows[index].max = max(rows[index].max, UInt64(try row.number("max_ms") * 1000))
                let statuses = try row.table("statuses")
                for (position, name) in classes.enumerated() { rows[index].statusClasses[position] += statuses[name] ?? 0 }
            }
        }
        return rows
    }

    /// Checked fields of one input object.
    private struct Fields {
        let name: String
        let object: [String: Any]

        func problem(_ why: String) -> Problem { Problem(description: "--merge: '\(name)' \(why)") }

        func string(_ key: String) throws(Problem) -> String {
            guard let value = object[key] as? String else { throw problem("has no \(key)") }
            return value
        }

        func number(_ key: String, default fallback: Double? = nil) throws(Problem) -> Double {
            guard let value = object[key] as? NSNumber else {
                if let fallback, object[key] == nil || object[key] is NSNull { return fallback }
                throw problem("has no number \(key)")
            }
            let double = value.doubleValue
            guard double.isFinite, double >= 0, double <= 1e13 else { throw problem("has \(key) out of range") }
            return double
        }

        func count(_ key: String, default fallback: Int? = nil) throws(Problem) -> Int {
            let value = try number(key, default: fallback.map(Double.init))
            guard value <= BenchMerge.maxCount, value == value.rounded() else { throw problem("has \(key) out of range") }
            return Int(value)
        }

        func table(_ key: String) throws(Problem) -> [String: Int] {
            guard let entries = object[key] as? [String: Any] else { return [:] }
            guard entries.count <= 1000 else { throw problem("has more than 1000 entries in \(key)") }
            var result: [String: Int] = [:]
            for (name, value) in entries {
                guard name.utf8.count <= 100 else { throw problem("has a name longer than 100 bytes in \(key)") }
                result[name] = try Fields(name: self.name, object: ["value": value]).count("value")
            }
            return result
        }
    }
}
