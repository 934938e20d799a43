import Synchronization
import TrawlEngine
import TrawlJSON

/// The distinct primary-key values among the items a unit wrote in this run, for the completeness check
/// (`allow_short`): a walk whose pages repeat items (an offset walk over a collection that shifted) has written
/// enough lines but not enough items. Each key is kept as 128 bits of its SHA-256, at most `limit` of them; past
/// that, or for a unit resumed with pages kept from an earlier run (whose keys were not read), the count is unknown.
///
/// ```swift
/// let distinct = DistinctItems(key: "id", withMeta: false)
/// distinct.add(Array("{\"id\":1}\n{\"id\":1}\n".utf8))
/// distinct.count   // 1
/// ```
final class DistinctItems: Sendable {
    /// Where the key is in a written line (under `item` when lines carry metadata).
    let path: JSONKeyPath
    let key: JSONKeyPath
    let limit: Int
    private let state = Mutex(State())

    private struct State {
        var keys = Set<KeyDigest>()
        var unknown = false
    }

    init(key: JSONKeyPath, withMeta: Bool, limit: Int = 1_000_000) {
        self.key = key
        self.path = withMeta ? JSONKeyPath(components: [.key("item")] + key.components) : key
        self.limit = limit
    }

    /// The items counted are not all the unit's (it resumed with pages kept from an earlier run).
    func markUnknown() { state.withLock { $0.unknown = true } }

    /// Reads the key of each line of `lines` (JSONL). An item without the key counts as distinct by its whole line.
    func add(_ lines: [UInt8]) {
        guard !state.withLock({ $0.unknown }) else { return }
        let decoder = JSONItemDecoder()
        var digests: [KeyDigest] = []
        var start = lines.startIndex
        while start < lines.endIndex {
            let end = lines[start...].firstIndex(of: UInt8(ascii: "\n")) ?? lines.endIndex
            let line = lines[start..<end]
            start = end + 1
            guard !line.isEmpty else { continue }
            let key = try? decoder.decode(JSONValue.self, from: Array(line), at: path)
            digests.append(
                KeyDigest { hasher in
                    if let key, !key.isNull {
                        hasher.update(key.json)
                    } else {
                        hasher.update([0])
                        hasher.update(line)
                    }
                })
        }
        state.withLock { state in
            for digest in digests where !state.unknown {
                state.keys.insert(digest)
                if state.keys.count > limit {
                    state.unknown = true
                    state.keys = []
                }
            }
        }
    }

    /// Distinct items written, or `nil` when not known.
    var count: Int? { state.withLock { $0.unknown ? nil : $0.keys.count } }
}
