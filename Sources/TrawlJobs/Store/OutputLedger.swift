/// The job store's output rules as a value: which unit's segment goes to which output and when, where a parent
/// unit's children go in the output order, and what must be durable before the checkpoint counts it. Its methods
/// take what happened (a page committed, a unit ended, children announced, a batch written, the checkpoint
/// written, the state reopened after a crash) and return what to do; `JobStore` does it (files, `fsync`, the
/// checkpoint) in the order given. The same pattern as `PagePlan`: every rule is tested without a file
/// (`OutputLedgerTests`).
///
/// The rules:
/// - A unit's pages go to its segment; the segment is `fsync`ed before the checkpoint that counts them.
/// - An output holds whole units in job order: a done unit's segment is appended once every unit before it in
///   that output is; the output is `fsync`ed, then the checkpoint records its length and unit count, and only
///   then is the segment removed. A crash anywhere in between leaves the segment, and the next open cuts the output
///   back to the recorded length, so the append happens again, once.
/// - A parent unit holds, in each child source's order, one *parent end*: its children are placed before it as
///   they are announced, and it is done (it has no pages) when the parent is, so the output passes it only when
///   every child of that parent is known.
/// - A run that ends with units not done appends the segments after the merged units (the provisional tail), which
///   the next open cuts off again.
struct OutputLedger: Sendable, Equatable {
    enum Status: Sendable, Equatable {
        case running, done, failed
    }

    struct Unit: Sendable, Equatable {
        var status: Status = .running
        /// Bytes of the unit's segment that its committed pages hold.
        var segment: Int64 = 0
    }

    enum Action: Sendable, Equatable {
        /// Make the unit's segment and page index durable: the next checkpoint counts their pages.
        case syncSegment(unit: Int)
        /// Append the unit's whole segment (`length` bytes) to `output` (or move it there, the output being empty):
        /// the unit is merged, its segment goes once the checkpoint says so.
        case appendSegment(unit: Int, output: String, length: Int64)
        /// Copy the unit's segment (`length` bytes) to the end of `output`, keeping the segment: a provisional tail.
        case appendCopy(unit: Int, output: String, length: Int64)
        /// The unit is in its output (after the appends of this step): its progress leaves the checkpoint's units.
        case merged(unit: Int, output: String)
        /// Make `output` durable; the checkpoint then records `state` for it.
        case syncOutput(output: String, state: Checkpoint.OutputState)
        /// A parent's end is done: the checkpoint records it as a done unit (so a resumed run passes it too).
        case parentEndDone(unit: Int)
        /// Replace the checkpoint with the state recorded so far.
        case writeCheckpoint
        /// The unit is in its output and the checkpoint says so: its segment and page index can go.
        case removeSegment(unit: Int)
        /// On open: cut `output` back to the length the checkpoint records (a torn or provisional tail goes).
        case truncateOutput(output: String, length: Int64)
    }

    /// Per output, the units it holds, in order.
    private(set) var order: [String: [Int]]
    /// Per output, what the ledger has recorded (bytes and units merged).
    private(set) var outputs: [String: Checkpoint.OutputState]
    /// Units with progress not yet merged.
    private(set) var units: [Int: Unit] = [:]
    /// Per parent unit, its ends (one per child source).
    private(set) var ends: [Int: [Int]]
    /// Per unit in the order, its output.
    private var placement: [Int: String] = [:]
    /// Units whose segment grew since the last batch.
    private var unsynced: Set<Int> = []
    /// Units merged by the last batch, whose segments go once the checkpoint is written.
    private var mergedSinceCheckpoint: [Int] = []
    /// True once every unit is in its output.
    private(set) var complete = false

    /// `order`: per output, its units in job order (parent ends included); `ends`: per parent unit, its ends.
    init(order: [String: [Int]], ends: [Int: [Int]] = [:]) {
        self.order = order
        self.ends = ends
        outputs = order.mapValues { _ in Checkpoint.OutputState() }
        for (output, units) in order {
            for unit in units { placement[unit] = output }
        }
    }

    /// The output a unit goes to, when it is in this run's order.
    func output(of unit: Int) -> String? { placement[unit] }

    /// The units merged into `output` so far.
    func merged(in output: String) -> ArraySlice<Int> {
        (order[output] ?? []).prefix(outputs[output]?.merged ?? 0)
    }

    // MARK: - Events

    /// On open, after children known from the state are announced: the state's record of each output and of the
    /// units not merged. Returns the outputs cut back to their recorded lengths.
    mutating func reopened(outputs recorded: [String: Checkpoint.OutputState], units saved: [Int: Unit]) -> [Action] {
        var actions: [Action] = []
        for output in order.keys.sorted() {
            var state = recorded[output] ?? Checkpoint.OutputState()
            state.provisional = nil
            outputs[output] = state
            actions.append(.truncateOutput(output: output, length: state.length))
        }
        let inOutput = Set(order.keys.flatMap { self.merged(in: $0) })
        units = saved.filter { unit, _ in !inOutput.contains(unit) && placement[unit] != nil }
        complete = order.allSatisfy { output, units in outputs[output]?.merged == units.count }
        return actions
    }

    /// A page of `unit` was written to its segment, which now holds `segment` bytes. Nothing reaches the output yet.
    mutating func pageCommitted(unit: Int, segment: Int64) -> [Action] {
        units[unit, default: Unit()].segment = segment
        unsynced.insert(unit)
        return []
    }

    /// Children of a parent page: `children` go right before `end` (a parent end) in its output, after the
    /// children announced before them.
    mutating func childrenAnnounced(_ children: [Int], before end: Int) -> [Action] {
        guard !children.isEmpty, let output = output(of: end), var units = order[output],
            let position = units.firstIndex(of: end)
        else { return [] }
        units.insert(contentsOf: children, at: position)
        order[output] = units
        for child in children { placement[child] = output }
        return []
    }

    /// A window bisected while it ran: `halves` go right before it in its output, and it ends done with nothing
    /// to append (what it read is discarded; its halves read it again). Its segment goes once it is merged.
    mutating func unitSplit(_ unit: Int, into halves: [Int]) -> [Action] {
        var actions = childrenAnnounced(halves, before: unit)
        actions += unitEnded(unit, status: .done, segment: 0)
        return actions
    }

    /// `unit` ended (done or failed) with `segment` bytes in its segment. A done parent's ends are done: every
    /// child of it is known.
    mutating func unitEnded(_ unit: Int, status: Status, segment: Int64) -> [Action] {
        units[unit] = Unit(status: status, segment: segment)
        guard status == .done else { return [] }
        var actions: [Action] = []
        for end in ends[unit] ?? [] where units[end] == nil {
            units[end] = Unit(status: .done)
            actions.append(.parentEndDone(unit: end))
        }
        return actions
    }

    /// A batch's pages and ends are written: sync the segments that grew, append every done unit whose
    /// predecessors are all in its output, sync those outputs, and write the checkpoint.
    mutating func batchWritten() -> [Action] {
        var actions = unsynced.sorted().map { Action.syncSegment(unit: $0) }
        unsynced = []
        for output in order.keys.sorted() {
            let ordinals = order[output] ?? []
            guard var state = outputs[output] else { continue }
            var changed = false
            while state.merged < ordinals.count {
                let unit = ordinals[state.merged]
                guard let progress = units[unit], progress.status == .done else { break }
                if progress.segment > 0 {
                    actions.append(.appendSegment(unit: unit, output: output, length: progress.segment))
                    state.length += progress.segment
                }
                actions.append(.merged(unit: unit, output: output))
                units[unit] = nil
                mergedSinceCheckpoint.append(unit)
                state.merged += 1
                changed = true
            }
            if changed {
                outputs[output] = state
                actions.append(.syncOutput(output: output, state: state))
            }
        }
        complete = order.allSatisfy { output, units in outputs[output]?.merged == units.count }
        actions.append(.writeCheckpoint)
        return actions
    }

    /// The checkpoint of the last batch is durable: the merged units' segments can go.
    mutating func checkpointWritten() -> [Action] {
        defer { mergedSinceCheckpoint = [] }
        return mergedSinceCheckpoint.map { .removeSegment(unit: $0) }
    }

    /// The run ends with units not merged: each output gets, past its merged units, the segments of the units after
    /// them in order (a failed unit's kept pages, done units whole), recorded as provisional. Segments stay.
    mutating func closing() -> [Action] {
        guard !complete else { return [] }
        var actions: [Action] = []
        for output in order.keys.sorted() {
            let ordinals = order[output] ?? []
            guard var state = outputs[output], state.merged < ordinals.count else { continue }
            var length = state.length
            for unit in ordinals[state.merged...] {
                guard let progress = units[unit], progress.segment > 0 else { continue }
                actions.append(.appendCopy(unit: unit, output: output, length: progress.segment))
                length += progress.segment
            }
            state.provisional = length
            outputs[output] = state
            actions.append(.syncOutput(output: output, state: state))
        }
        if !actions.isEmpty { actions.append(.writeCheckpoint) }
        return actions
    }
}

extension OutputLedger.Status {
    init(_ status: Checkpoint.UnitState.Status) {
        switch status {
        case .running: self = .running
        case .done: self = .done
        case .failed: self = .failed
        }
    }
}
