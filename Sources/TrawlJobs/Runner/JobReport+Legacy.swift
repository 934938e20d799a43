import Foundation

/// The report's keys that earlier releases wrote in camelCase, and the snake_case they have now. Only these
/// exact names are renamed, so a source or host named anything else passes as it is.
enum LegacyReportKeys {
    static let renamed: [String: String] = [
        "startedAt": "started_at", "stateDirectory": "state_directory", "settledBytes": "settled_bytes",
        "failedAttempts": "failed_attempts", "rateLimitWaits": "rate_limit_waits",
        "rateLimitWaitSeconds": "rate_limit_wait_seconds", "cappedWaits": "capped_waits",
        "notModified": "not_modified", "latencyMs": "latency_ms", "pageIndex": "page_index",
        "keptPages": "kept_pages", "keptItems": "kept_items", "pageIndices": "page_indices",
    ]
    static let restored = Dictionary(uniqueKeysWithValues: renamed.map { ($0.value, $0.key) })

    struct Key: CodingKey {
        var stringValue: String
        var intValue: Int?
        init(stringValue: String) { self.stringValue = stringValue }
        init?(intValue: Int) {
            self.stringValue = String(intValue)
            self.intValue = intValue
        }
    }

    /// For a decoder's `keyDecodingStrategy`: an old key read as its new name. The checkpoint holds flags and
    /// failure records, whose field names are all in the table; its own fields and its dictionaries' keys
    /// (ordinals, output paths) are none of these names in practice, and a path named so only reads as renamed.
    static func snakeCase(_ path: [any CodingKey]) -> any CodingKey {
        guard let last = path.last else { return Key(stringValue: "") }
        guard last.intValue == nil, let new = renamed[last.stringValue] else { return last }
        return Key(stringValue: new)
    }

    /// For an encoder's `keyEncodingStrategy`: a new key written as an earlier release wrote it.
    static func camelCase(_ path: [any CodingKey]) -> any CodingKey {
        guard let last = path.last else { return Key(stringValue: "") }
        guard last.intValue == nil, let old = restored[last.stringValue] else { return last }
        return Key(stringValue: old)
    }
}

extension JobReport {
    /// Reads a report as `trawl fetch --report` writes it (ISO-8601 dates), or as earlier releases wrote it: no
    /// `version` and camelCase keys (`startedAt`, `failedAttempts`, …), which are read under their new names.
    ///
    /// ```swift
    /// let report = try JobReport.decoded(from: Data(contentsOf: URL(fileURLWithPath: "report.json")))
    /// print(report.totals.failedAttempts)
    /// ```
    public static func decoded(from data: Data) throws -> JobReport {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .iso8601
        do {
            return try decoder.decode(JobReport.self, from: data)
        } catch {
            // Not the current layout: a report without `version` is the camelCase one (its renamed keys are
            // read by the table); anything else fails with the first error.
            guard let object = try? JSONSerialization.jsonObject(with: data) as? [String: Any],
                object["version"] == nil
            else { throw error }
            let legacy = JSONDecoder()
            legacy.dateDecodingStrategy = .iso8601
            legacy.keyDecodingStrategy = .custom { path in
                // `sources`, `hosts`, `marks` and `concurrency` are keyed by names from the job: kept as they are.
                let dictionaries: Set<String> = ["sources", "hosts", "marks", "concurrency"]
                if path.count == 2, dictionaries.contains(path[0].stringValue) { return path[1] }
                return LegacyReportKeys.snakeCase(path)
            }
            var report = try legacy.decode(LegacyReport.self, from: data).report
            report.version = formatVersion
            return report
        }
    }
}

/// A report of an earlier release: the same fields, no `version`.
private struct LegacyReport: Decodable {
    var report: JobReport

    init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: JobReport.CodingKeys.self)
        func value<T: Decodable>(_ key: JobReport.CodingKeys) throws -> T {
            try container.decode(T.self, forKey: key)
        }
        func optional<T: Decodable>(_ key: JobReport.CodingKeys) throws -> T? {
            try container.decodeIfPresent(T.self, forKey: key)
        }
        report = JobReport(
            startedAt: try value(.startedAt), seconds: try value(.seconds), complete: try value(.complete),
            resumed: try value(.resumed), units: try value(.units), totals: try value(.totals),
            sources: try value(.sources), hosts: try value(.hosts), failures: try value(.failures),
            flags: try value(.flags), outputs: try value(.outputs), stateDirectory: try optional(.stateDirectory),
            marks: try optional(.marks), concurrency: try optional(.concurrency), kept: try optional(.kept))
    }
}
