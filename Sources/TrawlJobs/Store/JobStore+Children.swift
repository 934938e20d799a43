import Foundation
import TrawlEngine

/// A parent unit's children of one child source: the unit that holds them in the output order (its parent end) is
/// `parent`'s, for the source at index `source`.
struct ParentEndKey: Sendable, Hashable {
    var source: Int
    var parent: Int

    var text: String { "\(source)-\(parent)" }
}

/// The children one parent page brought: their descriptor lines (appended to the parent unit's children file)
/// and the slots of those this run writes (in this shard), placed before the parent end in the output order.
struct ChildBatch: Sendable {
    var end: ParentEndKey
    var lines: [UInt8]
    var slots: [JobStore.UnitSlot]
}

/// Dynamic child units (a source with `parent:`).
///
/// The children of a parent unit are known only as its pages arrive, so each child source's place in the output
/// order holds one *parent end* per parent unit; a child unit is inserted before its parent's end as the parent
/// page naming it is committed, and the end is done when the parent unit is (it has no segment). The merge cannot
/// pass an end before every child of its parent is known, so the output holds children in parent order whatever order
/// they finished in.
///
/// A parent page's children are recorded in `children/SOURCE-PARENT.jsonl` (one descriptor line each) in the same
/// batch as the page, and the checkpoint records the file's length with the page: after `kill -9` the resumed
/// run cuts the file back, rebuilds exactly the child units of the committed parent pages (same ordinals, same
/// order), resumes those not merged, and the parent's remaining pages add the rest.
extension JobStore {
    static func childrenPath(_ stateDirectory: String, _ key: ParentEndKey) -> String {
        stateDirectory + "/children/\(key.text).jsonl"
    }

    /// On open: the parent ends' recorded children, cut back to their checkpointed lengths, placed before each end.
    static func openChildren(_ writer: WriterState, checkpoint: Checkpoint, options: Options) throws {
        let ends = writer.slots.values.filter { $0.parentEnd != nil }
        guard !ends.isEmpty else { return }
        try createDirectoryDurably(options.stateDirectory + "/children")
        for slot in ends {
            guard let key = slot.parentEnd else { continue }
            writer.parentEnds[key] = slot
            let length = checkpoint.children?[key.text] ?? 0
            let file = try DurableFile(path: childrenPath(options.stateDirectory, key), truncatingTo: length)
            writer.children[key] = file
            guard length > 0, let bytes = try DurableFiles.read(file.path) else { continue }
            let lines = bytes.prefix(Int(length)).split(separator: UInt8(ascii: "\n")).map { Array($0) }
            let slots = options.expandChildren?(key, lines) ?? []
            place(slots, before: slot, in: writer)
        }
    }

    /// Puts `slots` in the output order right before `end`.
    private static func place(_ slots: [UnitSlot], before end: UnitSlot, in writer: WriterState) {
        for slot in slots { writer.slots[slot.ordinal] = slot }
        _ = writer.ledger.childrenAnnounced(slots.map(\.ordinal), before: end.ordinal)
    }

    /// Queues a parent page together with its children: one batch writes both, so no checkpoint holds one
    /// without the other.
    func submitPage(
        ordinal: Int, lines: [UInt8], state: Checkpoint.UnitState, children: [ChildBatch]
    ) -> PendingCommit {
        let pending = PendingCommit()
        let accepted = queue.withLock { queue -> Bool in
            guard !queue.closed else { return false }
            for batch in children { queue.operations.append(.children(batch)) }
            queue.operations.append(.page(ordinal: ordinal, lines: lines, state: state, done: pending))
            return true
        }
        if accepted {
            signal.signal(urgent: false)
        } else {
            pending.complete(.failure(JobError.state("the job's store is closed", hint: nil)))
        }
        return pending
    }

    /// On the writer thread: appends the descriptors, records the length, places the slots.
    func writeChildren(_ batch: ChildBatch) throws {
        guard let file = writer.children[batch.end], let end = writer.parentEnds[batch.end] else { return }
        try file.append(batch.lines)
        var lengths = writer.checkpoint.children ?? [:]
        lengths[batch.end.text] = file.length
        writer.checkpoint.children = lengths
        Self.place(batch.slots, before: end, in: writer)
    }
}
