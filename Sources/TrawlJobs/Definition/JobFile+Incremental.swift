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
    static let incrementalKeys = ["cursor", "param", "initial", "lookback", "order", "split"]
    static let splitKeys = ["until_param", "windows", "max_pages", "end"]

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
        if let value = entries["split"]?.value { spec.split = try split(value, "\(at).split") }
        do {
            try spec.validate(field: at)
        } catch {
            let key = error.field.map { String($0.split(separator: ".").last ?? "") }
            // A split key's problem points at that key of `split:`.
            let splitNode = entries["split"]?.value
            let inSplit = error.field?.contains(".split.") == true
            let scope = inSplit ? splitNode.flatMap { try? mapping($0, at, allowed: nil) } : entries
            throw self.error(
                key.flatMap { scope?[$0]?.value } ?? (inSplit ? splitNode : nil) ?? node, error.field, error.message,
                hint: error.hint,
                code: error.code)
        }
        source.incremental = spec
    }

    /// `split: {until_param: until, windows: 8, max_pages: 50, end: DATE}`.
    func split(_ node: Node, _ at: String) throws(JobFileError) -> SplitSpec {
        let entries = try mapping(node, at, allowed: Self.splitKeys)
        guard let until = entries["until_param"]?.value else {
            throw error(node, at, "until_param is missing", hint: "add until_param:, as in until_param: until")
        }
        var spec = SplitSpec(untilParam: try string(until, "\(at).until_param"), windows: 8, maxPages: 50)
        if let value = entries["windows"]?.value { spec.windows = try int(value, "\(at).windows", minimum: 1) }
        if let value = entries["max_pages"]?.value { spec.maxPages = try int(value, "\(at).max_pages", minimum: 1) }
        if let value = entries["end"]?.value { spec.end = try string(value, "\(at).end") }
        return spec
    }
}
