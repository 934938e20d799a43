import Foundation
import TrawlJSON
import Yams

/// `incremental:` and `primary_key:` of a source.
///
/// ```yaml
/// incremental: {cursor: updated_at, param: since, initial: "2024-01-01T00:00:00Z", lookback: 1h, order: asc}
/// primary_key: id
/// ```
extension JobFileReader {
    static let incrementalKeys = ["cursor", "param", "initial", "lookback", "order"]

    /// Reads the source's `incremental:` and `primary_key:` into `source`.
    func incremental(_ fields: OrderedEntries, _ field: String, into source: inout JobSource) throws(JobFileError) {
        if let node = fields["primary_key"]?.value { source.primaryKey = try keyPath(node, "\(field).primary_key") }
        guard let node = fields["incremental"]?.value else { return }
        let at = "\(field).incremental"
        let entries = try mapping(node, at, allowed: Self.incrementalKeys)
        func required(_ key: String, _ example: String) throws(JobFileError) -> Node {
            guard let value = entries[key]?.value else {
                throw error(node, at, "\(key) is missing", hint: "add \(key):, as in \(key): \(example)")
            }
            return value
        }
        let cursor = try keyPath(try required("cursor", "updated_at"), "\(at).cursor")
        let param = try string(try required("param", "since"), "\(at).param")
        let initial = try string(try required("initial", "\"2024-01-01T00:00:00Z\""), "\(at).initial")
        var spec = IncrementalSpec(cursor: cursor, param: param, initial: initial)
        if let value = entries["lookback"]?.value { spec.lookback = try string(value, "\(at).lookback") }
        if let value = entries["order"]?.value {
            let text = try string(value, "\(at).order")
            guard let order = IncrementalSpec.Order(rawValue: text) else {
                throw error(value, "\(at).order", "unknown order '\(text)'", hint: "write asc (oldest first) or desc")
            }
            spec.order = order
        }
        do {
            try spec.validate(field: at)
        } catch {
            let key = error.field.map { String($0.split(separator: ".").last ?? "") }
            throw self.error(
                key.flatMap { entries[$0]?.value } ?? node, error.field, error.message, hint: error.hint,
                code: error.code)
        }
        source.incremental = spec
    }
}
