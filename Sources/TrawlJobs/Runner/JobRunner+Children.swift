import Foundation
import Synchronization
import Trawl
import TrawlEngine
import TrawlJSON

/// The child units of a run: made from each parent page as it is committed, queued for the scheduler, and on
/// resume rebuilt from the children files (see `JobStore+Children.swift`).
///
/// With a shard, every shard walks every parent unit (it needs the items to know the children) but writes the
/// parent's items only when the parent unit is its own; child units belong to the shard of the stable hash of
/// their id, which is made of the parent values their URL names (`repos users.login=octocat`).
final class ChildPlan: Sendable {
    let dependents: [Int: [DependentSource]]
    let filter: (@Sendable (WorkUnit) -> Bool)?
    let withMeta: Bool
    /// Parent units walked only to find children (another shard writes their items).
    let discoveryOnly: Set<Int>
    private let parents: [Int: WorkUnit]
    private let outputs: [Int: String]
    private let state = Mutex(State())

    private struct State {
        var queue: [(unit: WorkUnit, problem: String?)] = []
        var waiter: CheckedContinuation<Void, Never>?
        var stopped = false
    }

    init(
        dependents: [DependentSource], units: [WorkUnit], filter: (@Sendable (WorkUnit) -> Bool)?, withMeta: Bool,
        output: (String) -> String
    ) {
        let grouped = Dictionary(grouping: dependents, by: \.parentIndex)
        self.dependents = grouped
        self.filter = filter
        self.withMeta = withMeta
        let parentUnits = units.filter { grouped[$0.sourceIndex] != nil }
        parents = Dictionary(parentUnits.map { ($0.ordinal, $0) }, uniquingKeysWith: { first, _ in first })
        discoveryOnly = Set(parentUnits.filter { !(filter?($0) ?? true) }.map(\.ordinal))
        outputs = Dictionary(
            dependents.map { ($0.sourceIndex, output($0.name)) }, uniquingKeysWith: { first, _ in first })
    }

    func isParent(_ unit: WorkUnit) -> Bool { dependents[unit.sourceIndex] != nil }

    /// Whether this run (its shard) runs the child unit.
    func inShard(_ child: WorkUnit) -> Bool { filter?(child) ?? true }

    /// `slots` with one parent end per parent unit and child source, in job order (sources in order, a child source's
    /// ends in the order of their parent units).
    func slots(_ slots: [JobStore.UnitSlot], selected: [WorkUnit]) -> [JobStore.UnitSlot] {
        var keyed: [(source: Int, ordinal: Int, slot: JobStore.UnitSlot)] = zip(selected, slots).map {
            ($0.sourceIndex, $0.ordinal, $1)
        }
        for parent in selected where isParent(parent) {
            for child in dependents[parent.sourceIndex] ?? [] {
                let key = ParentEndKey(source: child.sourceIndex, parent: parent.ordinal)
                let end = JobStore.UnitSlot(
                    ordinal: UnitID.parentEnd(source: child.sourceIndex, parent: parent.ordinal).ordinal,
                    id: "\(child.name) (children of \(parent.id))", output: outputs[child.sourceIndex] ?? "",
                    parentEnd: key)
                keyed.append((child.sourceIndex, parent.ordinal, end))
            }
        }
        return keyed.sorted { ($0.source, $0.ordinal) < ($1.source, $1.ordinal) }.map(\.slot)
    }

    /// On open: the child units a parent end's recorded descriptors make; those of this shard are queued to run unless
    /// `isMerged` (their output is final).
    func expand(_ key: ParentEndKey, _ lines: [[UInt8]]) -> [JobStore.UnitSlot] {
        guard let parent = parents[key.parent],
            let source = dependents[parent.sourceIndex]?.first(where: { $0.sourceIndex == key.source })
        else { return [] }
        var slots: [JobStore.UnitSlot] = []
        var made: [(WorkUnit, String?)] = []
        for (index, line) in lines.enumerated() {
            guard let descriptor = try? JSONDecoder().decode(ChildDescriptor.self, from: Data(line)) else { continue }
            let (unit, problem) = source.unit(parent: parent, index: index, descriptor: descriptor)
            guard inShard(unit) else { continue }
            slots.append(JobStore.UnitSlot(ordinal: unit.ordinal, id: unit.id, output: outputs[key.source] ?? ""))
            made.append((unit, problem))
        }
        state.withLock { $0.queue += made.map { (unit: $0.0, problem: $0.1) } }
        return slots
    }

    /// The children of a parent page whose items are `lines` (the first of them the parent unit's item number
    /// `firstIndex`): one batch per child source for the store, the units of this shard queued to run.
    func batches(for parent: WorkUnit, lines: [UInt8], firstIndex: Int) -> [ChildBatch] {
        guard let sources = dependents[parent.sourceIndex] else { return [] }
        var items: [JSONValue] = []
        for line in lines.split(separator: UInt8(ascii: "\n")) {
            let value = (try? JSONDecoder().decode(JSONValue.self, from: Data(line))) ?? .null
            items.append(withMeta ? value["item"] ?? .null : value)
        }
        var batches: [ChildBatch] = []
        var made: [(unit: WorkUnit, problem: String?)] = []
        for source in sources {
            var batch = ChildBatch(
                end: ParentEndKey(source: source.sourceIndex, parent: parent.ordinal), lines: [], slots: [])
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.sortedKeys]
            for (offset, item) in items.enumerated() {
                let descriptor = ChildDescriptor(item: item, source: source)
                batch.lines += ((try? encoder.encode(descriptor)).map { Array($0) } ?? Array("{}".utf8)) + [10]
                let (unit, problem) = source.unit(parent: parent, index: firstIndex + offset, descriptor: descriptor)
                guard inShard(unit) else { continue }
                batch.slots.append(
                    JobStore.UnitSlot(ordinal: unit.ordinal, id: unit.id, output: outputs[source.sourceIndex] ?? ""))
                made.append((unit, problem))
            }
            batches.append(batch)
        }
        enqueue(made)
        return batches
    }

    private func enqueue(_ units: [(unit: WorkUnit, problem: String?)]) {
        guard !units.isEmpty else { return }
        let waiter = state.withLock { state -> CheckedContinuation<Void, Never>? in
            state.queue += units
            defer { state.waiter = nil }
            return state.waiter
        }
        waiter?.resume()
    }

    /// The queued child units, taken.
    func take(_ limit: Int) -> [(unit: WorkUnit, problem: String?)] {
        state.withLock { state in
            let taken = Array(state.queue.prefix(limit))
            state.queue.removeFirst(taken.count)
            return taken
        }
    }

    var hasQueued: Bool { state.withLock { !$0.queue.isEmpty } }

    /// Returns when a child unit is queued (or at once when one is, or after `stop()`).
    func waitForWork() async {
        await withCheckedContinuation { continuation in
            let now = state.withLock { state -> Bool in
                if !state.queue.isEmpty || state.stopped { return true }
                state.waiter = continuation
                return false
            }
            if now { continuation.resume() }
        }
    }

    func stop() {
        let waiter = state.withLock { state -> CheckedContinuation<Void, Never>? in
            state.stopped = true
            defer { state.waiter = nil }
            return state.waiter
        }
        waiter?.resume()
    }
}

extension JobRunner {
    static func makeChildPlan(units: [WorkUnit], options: JobRunOptions) -> ChildPlan? {
        guard !options.dependents.isEmpty else { return nil }
        return ChildPlan(
            dependents: options.dependents, units: units, filter: options.unitFilter, withMeta: options.withMeta,
            output: { [options] name in
                switch options.output {
                case .file(let path): return path
                case .directory(let directory): return directory + "/" + name + ".jsonl"
                }
            })
    }

    /// Runs `pending` and the child units as they come, at most `concurrency` units at once; returns how each
    /// ended.
    func runWithChildren(
        _ pending: [WorkUnit], saved: [Int: Checkpoint.UnitState], merged: Set<Int>, store: JobStore,
        plan: ChildPlan, run: @escaping @Sendable (WorkUnit, Checkpoint.UnitState?) async throws -> UnitOutcome
    ) async throws -> [UnitOutcome] {
        let width = max(1, settings.concurrency)
        return try await withThrowingTaskGroup(of: UnitOutcome?.self) { group in
            var results: [UnitOutcome] = []
            var queue = pending[...]
            var running = 0
            var waiting = false
            while true {
                while running < width {
                    if let unit = queue.popFirst() {
                        group.addTask(executorPreference: loop(for: unit)) { try await run(unit, saved[unit.ordinal]) }
                    } else if let (unit, problem) = plan.take(1).first {
                        if merged.contains(unit.ordinal) { continue }
                        metrics.addUnits(1)
                        if let problem {
                            results.append(try await failChild(unit, problem, store: store))
                            continue
                        }
                        group.addTask(executorPreference: loop(for: unit)) { try await run(unit, saved[unit.ordinal]) }
                    } else {
                        break
                    }
                    running += 1
                }
                if running == 0, queue.isEmpty, !plan.hasQueued { break }
                // With every slot taken a unit's end is what lets another start; waiting for work then would spin.
                if !waiting, running < width {
                    waiting = true
                    group.addTask {
                        await plan.waitForWork()
                        return nil
                    }
                }
                guard let outcome = try await group.next() else { break }
                if let outcome {
                    results.append(outcome)
                    running -= 1
                    // A bisected window's halves run next.
                    if case .split(let halves) = outcome { queue = ArraySlice(halves + Array(queue)) }
                } else {
                    waiting = false
                }
            }
            plan.stop()
            return results
        }
    }

    /// A child unit whose URL cannot be made (the parent item lacks a value it names): failed and reported.
    private func failChild(_ unit: WorkUnit, _ problem: String, store: JobStore) async throws -> UnitOutcome {
        var state = Checkpoint.UnitState(id: unit.id)
        state.status = .failed
        state.failure = redact(problem)
        metrics.failed(PageFailureRecord(
            source: unit.source, unit: redact(unit.id), page: "page 1", pageIndex: 0, url: redact(unit.request.url),
            attempts: 0, status: nil, error: redact(problem)))
        try await store.finishUnit(ordinal: unit.ordinal, state: state)
        metrics.unitFinished(failed: true)
        return .failed(reason: redact(problem))
    }
}

extension JobRunOptions {
    /// These options with `job`'s dependent sources.
    func withDependents(of job: Job) throws(JobSpecError) -> JobRunOptions {
        var options = self
        options.dependents = try job.dependents(environment: environment)
        return options
    }
}
