import Foundation
import TrawlEngine

/// A parent unit's children of one child source: the unit that holds them in the output order (its seal) is
/// `parent`'s, for the source at index `source`.
struct SealKey: Sendable, Hashable {
    var source: Int
    var parent: Int

    var text: String { "\(source)-\(parent)" }
}

/// The children one parent page brought: their descriptor lines (appended to the parent unit's children file)
/// and the slots of those this run writes (in this shard), placed before the seal in the output order.
struct ChildBatch: Sendable {
    var seal: SealKey
    var lines: [UInt8]
    var slots: [JobStore.UnitSlot]
}

/// Dynamic child units (a source with `parent:`).
///
/// The children of a parent unit are known only as its pages arrive, so each child source's place in the output
/// order holds one *seal* per parent unit; a child unit is inserted before its parent's seal as the parent page
/// naming it is committed, and the seal is done when the parent unit is (it has no segment). The merge cannot pass
/// a seal before every child of its parent is known, so the output holds children in parent order whatever order
/// they finished in.
///
/// A parent page's children are recorded in `children/SOURCE-PARENT.jsonl` (one descriptor line each) in the same
/// batch as the page, and the checkpoint records the file's length with the page: after `kill -9` the resumed
/// run cuts the file back, rebuilds exactly the child units of the committed parent pages (same ordinals, same
/// order), resumes those not merged, and the parent's remaining pages add the rest.
extension JobStore {
    static func childrenPath(_ stateDirectory: String, _ key: SealKey) -> String {
        stateDirectory + "/children/\(key.text).jsonl"
    }

    /// On open: the seals' recorded children, cut back to their checkpointed lengths, placed before each seal.
    static func openChildren(_ writer: WriterState, checkpoint: Checkpoint, options: Options) throws {
        let seals = writer.slots.values.filter { $0.seal != nil }
        guard !seals.isEmpty else { return }
        try createDirectoryDurably(options.stateDirectory + "/children")
        for slot in seals {
            guard let key = slot.seal else { continue }
            writer.seals[key.parent, default: []].append(slot)
            let length = checkpoint.children?[key.text] ?? 0
            let file = try DurableFile(path: childrenPath(options.stateDirectory, key), truncatingTo: length)
            writer.children[key] = file
            guard length > 0, let bytes = try DurableFiles.read(file.path) else { continue }
            let lines = bytes.prefix(Int(length)).split(separator: UInt8(ascii: "\n")).map { Array($0) }
            let slots = options.expandChildren?(key, lines) ?? []
            insert(slots, before: slot, in: writer)
        }
    }

    /// Puts `slots` in the output order right before `seal`.
    private static func insert(_ slots: [UnitSlot], before seal: UnitSlot, in writer: WriterState) {
        guard !slots.isEmpty, var ordinals = writer.order[seal.output],
            let position = ordinals.firstIndex(of: seal.ordinal)
        else { return }
        ordinals.insert(contentsOf: slots.map(\.ordinal), at: position)
        writer.order[seal.output] = ordinals
        for slot in slots { writer.slots[slot.ordinal] = slot }
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
            signal.signal()
        } else {
            pending.complete(.failure(JobError.state("the job's store is closed", hint: nil)))
        }
        return pending
    }

    /// On the writer thread: appends the descriptors, records the length, places the slots.
    func writeChildren(_ batch: ChildBatch) throws {
        guard let file = writer.children[batch.seal],
            let seal = writer.seals[batch.seal.parent]?.first(where: { $0.seal == batch.seal })
        else { return }
        try file.append(batch.lines)
        var lengths = writer.checkpoint.children ?? [:]
        lengths[batch.seal.text] = file.length
        writer.checkpoint.children = lengths
        Self.insert(batch.slots, before: seal, in: writer)
    }

    /// On the writer thread: a parent unit is done, so every child of it is known; its seals are done.
    func sealChildren(of parent: Int) {
        for seal in writer.seals[parent] ?? [] where writer.checkpoint.units[String(seal.ordinal)] == nil {
            var state = Checkpoint.UnitState(id: seal.id)
            state.status = .done
            writer.checkpoint.units[String(seal.ordinal)] = state
        }
    }
}
