import ArgumentParser
import TrawlJSON
import TrawlJobs

/// `trawl fetch`'s incremental-sync flags for a `--url` source (a job file says `incremental:` per source).
struct IncrementalFlags: ParsableArguments {
    @Option(
        name: .customLong("incremental"),
        help: """
            Incremental sync: the key path of each item's cursor (an ISO-8601 date or integer, e.g. updated_at). \
            Each run asks for what changed since the last committed run's largest cursor (needs --state, \
            --since-param and --initial).
            """)
    var cursor: String?

    @Option(name: .customLong("since-param"), help: "The query parameter that carries the mark (e.g. since).")
    var sinceParam: String?

    @Option(name: .customLong("initial"), help: "The first run's mark (e.g. 2024-01-01T00:00:00Z, or 0).")
    var initial: String?

    @Option(name: .customLong("lookback"), help: "Re-read this much before the mark (90s, 15m, 2h, 1d; or N).")
    var lookback: String?

    @Option(name: .customLong("order"), help: "asc (oldest first, default) or desc (newest first: stop past the mark).")
    var order: String?

    @Option(
        name: .customLong("primary-key"),
        help: """
            Key path of each item's identity. Incremental: an item written by an earlier run is written again only \
            if changed. Otherwise: each key is written once, and a walk whose keys repeat or go missing (data \
            changing under it) is read again once (see --allow-drift).
            """)
    var primaryKey: String?

    static let jobFileMessage =
        "--incremental, --since-param, --initial, --lookback, --order and --primary-key go with --url; "
        + "a job file says incremental: and primary_key: per source"

    var isEmpty: Bool {
        cursor == nil && sinceParam == nil && initial == nil && lookback == nil && order == nil && primaryKey == nil
    }

    func validate() throws {
        guard !isEmpty else { return }
        if cursor != nil || sinceParam != nil || initial != nil || lookback != nil || order != nil {
            guard cursor != nil, sinceParam != nil, initial != nil else {
                throw ValidationError("--incremental needs --since-param NAME and --initial VALUE (and --state DIR)")
            }
        }
        if let order, IncrementalSpec.Order(rawValue: order) == nil {
            throw ValidationError("--order '\(order)' is not asc or desc")
        }
    }

    /// The `--url` source with these flags; a job file says it per source instead.
    func apply(to source: inout JobSource) throws {
        if let primaryKey { source.primaryKey = JSONKeyPath(primaryKey) }
        guard let cursor, let sinceParam, let initial else { return }
        let spec = IncrementalSpec(
            cursor: JSONKeyPath(cursor), param: sinceParam, initial: initial, lookback: lookback,
            order: order.flatMap(IncrementalSpec.Order.init(rawValue:)) ?? .asc)
        do {
            try spec.validate(field: "incremental")
        } catch {
            let flag = error.field.map { "--" + ($0.split(separator: ".").last.map(String.init) ?? "incremental") }
            throw ValidationError("\(flag.map { $0 == "--param" ? "--since-param" : $0 } ?? "--incremental"): "
                + "\(error.message)" + (error.hint.map { " (\($0))" } ?? ""))
        }
        source.incremental = spec
    }
}
