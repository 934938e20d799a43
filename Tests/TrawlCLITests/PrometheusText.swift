import Foundation

/// Prometheus text exposition format (0.0.4), parsed strictly enough to fail on malformed output: every sample
/// belongs to a family with `# HELP` and `# TYPE` lines before it, label syntax is checked, and histograms are
/// checked for consistency (buckets cumulative, `+Inf` equal to `_count`, a `_sum` per series).
struct PrometheusText {
    struct Sample {
        var name: String
        var labels: [String: String]
        var value: Double
    }

    struct Malformed: Error, CustomStringConvertible {
        var description: String
    }

    var types: [String: String] = [:]
    var helps: [String: String] = [:]
    var samples: [Sample] = []

    init(_ text: String) throws {
        for (number, line) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            func fail(_ why: String) -> Malformed { Malformed(description: "line \(number + 1) '\(line)': \(why)") }
            if line.isEmpty { continue }
            if line.hasPrefix("# ") {
                let parts = line.split(separator: " ", maxSplits: 3).map(String.init)
                guard parts.count >= 3, Self.isName(parts[2]) else { throw fail("bad comment") }
                if parts[1] == "TYPE" {
                    guard parts.count == 4, ["counter", "gauge", "histogram", "summary", "untyped"].contains(parts[3])
                    else { throw fail("bad TYPE") }
                    guard types[parts[2]] == nil else { throw fail("second TYPE") }
                    types[parts[2]] = parts[3]
                } else if parts[1] == "HELP" {
                    helps[parts[2]] = parts.count == 4 ? parts[3] : ""
                }
                continue
            }
            let sample = try Self.sample(Substring(line)) ?? { throw fail("bad sample") }()
            guard let family = family(of: sample.name) else { throw fail("no TYPE line before the sample") }
            guard helps[family] != nil else { throw fail("no HELP line before the sample") }
            samples.append(sample)
        }
        try checkHistograms()
    }

    /// The family a sample name belongs to (a histogram's `_bucket`, `_sum` and `_count` belong to its name).
    func family(of name: String) -> String? {
        if types[name] != nil { return name }
        for suffix in ["_bucket", "_sum", "_count"] where name.hasSuffix(suffix) {
            let base = String(name.dropLast(suffix.count))
            if types[base] == "histogram" { return base }
        }
        return nil
    }

    /// The sum of `name`'s samples whose labels include `matching`.
    func total(_ name: String, _ matching: [String: String] = [:]) -> Double {
        samples.filter { sample in
            sample.name == name && matching.allSatisfy { key, value in sample.labels[key] == value }
        }.reduce(0) { $0 + $1.value }
    }

    private func checkHistograms() throws {
        for (name, type) in types where type == "histogram" {
            var series: [[String: String]: [(le: Double, count: Double)]] = [:]
            for sample in samples where sample.name == name + "_bucket" {
                guard let le = sample.labels["le"].flatMap({ $0 == "+Inf" ? .infinity : Double($0) }) else {
                    throw Malformed(description: "\(name): a bucket without a numeric le")
                }
                var labels = sample.labels
                labels["le"] = nil
                series[labels, default: []].append((le, sample.value))
            }
            if series.isEmpty { throw Malformed(description: "\(name): a histogram without buckets") }
            for (labels, buckets) in series {
                let sorted = buckets.sorted { $0.le < $1.le }
                guard sorted.last?.le == .infinity else { throw Malformed(description: "\(name)\(labels): no +Inf") }
                for (lower, upper) in zip(sorted, sorted.dropFirst()) where upper.count < lower.count {
                    throw Malformed(description: "\(name)\(labels): buckets not cumulative")
                }
                let counts = samples.filter { $0.name == name + "_count" && $0.labels == labels }
                let sums = samples.filter { $0.name == name + "_sum" && $0.labels == labels }
                guard counts.count == 1, sums.count == 1, counts[0].value == sorted.last?.count, sums[0].value >= 0
                else { throw Malformed(description: "\(name)\(labels): _count/_sum disagree with the buckets") }
            }
        }
    }

    static func isName(_ text: String) -> Bool {
        guard let first = text.unicodeScalars.first, first == "_" || first == ":" || first.properties.isAlphabetic,
            first.isASCII
        else { return false }
        return text.unicodeScalars.allSatisfy { $0.isASCII && ($0 == "_" || $0 == ":" || $0.properties.isAlphabetic
            || ("0"..."9").contains($0)) }
    }

    /// `name{label="value",...} value`, or nil when malformed.
    static func sample(_ line: Substring) -> Sample? {
        var rest = line
        let nameEnd = rest.firstIndex { $0 == "{" || $0 == " " } ?? rest.endIndex
        let name = String(rest[..<nameEnd])
        guard isName(name) else { return nil }
        rest = rest[nameEnd...]
        var labels: [String: String] = [:]
        if rest.first == "{" {
            rest = rest.dropFirst()
            while rest.first != "}" {
                guard let equals = rest.firstIndex(of: "=") else { return nil }
                let label = String(rest[..<equals])
                guard isName(label), labels[label] == nil else { return nil }
                rest = rest[rest.index(after: equals)...]
                guard rest.first == "\"" else { return nil }
                rest = rest.dropFirst()
                var value = ""
                while let character = rest.first, character != "\"" {
                    rest = rest.dropFirst()
                    if character == "\\" {
                        guard let escaped = rest.first else { return nil }
                        rest = rest.dropFirst()
                        switch escaped {
                        case "n": value.append("\n")
                        case "\\", "\"": value.append(escaped)
                        default: return nil
                        }
                    } else {
                        value.append(character)
                    }
                }
                guard rest.first == "\"" else { return nil }
                rest = rest.dropFirst()
                labels[label] = value
                if rest.first == "," { rest = rest.dropFirst() } else if rest.first != "}" { return nil }
            }
            rest = rest.dropFirst()
        }
        guard rest.first == " " else { return nil }
        let fields = rest.dropFirst().split(separator: " ")
        guard (1...2).contains(fields.count) else { return nil }
        let text = String(fields[0])
        guard let value = text == "+Inf" ? .infinity : Double(text) else { return nil }
        return Sample(name: name, labels: labels, value: value)
    }
}
