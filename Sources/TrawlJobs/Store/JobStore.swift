import Foundation
import Synchronization
import Trawl
import TrawlEngine
import TrawlJSON

/// Where a job's items go and how its progress survives a crash.
///
/// Each unit appends its pages to its own segment file in the state directory (`segments/ORDINAL.jsonl`); a
/// page's lines are written and `fsync`ed before the checkpoint counts the page. When a unit is done and every
/// unit before it (in the job's order) is in the output, its segment is appended to the output file, the output
/// is `fsync`ed, and the checkpoint records the new length — so the output always holds whole units in job
/// order, is identical to an uninterrupted run's, and after a crash is cut back to the recorded length.
///
/// A run that ends with a unit not done (a page failed for good) still makes every item it read readable: at
/// `close` the segments of the units after the last merged one — a failed unit's kept pages, later units whole —
/// are appended in job order past the recorded length (the provisional tail). Their segments stay in the state
/// directory; the next run cuts the output back to the recorded length and merges again as units finish, so a
/// retry that succeeds ends with the output an uninterrupted run would have written.
///
/// All file work runs on one writer thread, in batches: every page committed while the previous batch was
/// being written shares one `fsync` per file and one checkpoint replacement (group commit).
final class JobStore: Sendable {
    struct Options: Sendable {
        var stateDirectory: String
        /// Output file per unit ordinal's source: every unit of a source goes to `outputs[sourceIndex]`.
        var outputs: [String]
        var fingerprint: String
        var shard: String
        var withMeta: Bool
        var restart: Bool
        var redact: @Sendable (String) -> String
        /// An incremental run's id, kept in the checkpoint.
        var runID: String? = nil
        /// A run with parallel windows: its start time, kept in the checkpoint (`Checkpoint.started`).
        var started: String? = nil
        /// The child units recorded for a parent end's unit (`JobStore+Children.swift`), on resume.
        var expandChildren: (@Sendable (ParentEndKey, [[UInt8]]) -> [UnitSlot])?
        /// A state directory trawl names itself (no `--state`): a link planted at that predictable path is refused.
        var temporary = false
    }

    /// One unit of this run: its ordinal, id and output.
    struct UnitSlot: Sendable {
        var ordinal: Int
        var id: String
        var output: String
        /// Set on the parent end of a parent unit's children (see `JobStore+Children.swift`).
        var parentEnd: ParentEndKey? = nil
    }

    /// What the store found when it opened: units to skip or resume.
    struct Opened: Sendable {
        /// Units already merged into the output in an earlier run.
        var merged: Set<Int>
        /// Units with saved progress (running, done or failed).
        var saved: [Int: Checkpoint.UnitState]
        /// True when an earlier run had finished every unit.
        var complete: Bool
        var resumed: Bool
    }

    /// What the store holds when it closes, for the report.
    struct Closed: Sendable {
        /// Every unit is merged into its output.
        var complete: Bool
        var outputs: [JobReport.OutputRecord]
        /// Completeness flags of every unit of this run, from this and earlier runs, in job order.
        var flags: [CompletenessFlag]
    }

    enum Operation {
        case page(ordinal: Int, lines: [UInt8], state: Checkpoint.UnitState, done: PendingCommit)
        /// A parent page's children, written in the same batch as the page that follows it.
        case children(ChildBatch)
        /// A unit's end; `newestBy`: compact its segment to the last line of each key first (`SegmentCompaction`).
        case unit(
            ordinal: Int, state: Checkpoint.UnitState, newestBy: JSONKeyPath?, done: CheckedContinuation<Void, any Error>)
        /// A window bisected while it ran: its halves take its place, its pages are discarded.
        case split(ordinal: Int, halves: [UnitSlot], done: CheckedContinuation<Void, any Error>)
    }

    struct Queue {
        var operations: [Operation] = []
        var closed = false
        var stopped = false
        var onStop: CheckedContinuation<Void, Never>?
        /// Units of this run whose end has not been queued yet, when known (not with child units, which appear
        /// as their parents walk): once it is 0 no page can come, and the writer need not wait for more.
        var unitsLeft: Int?
        /// Someone waits for the queued work: a unit's end, or a unit that stopped fetching until its pages are
        /// durable (`expedite`). The batch then starts at `minimumBatchInterval`, not `pageBatchInterval`.
        var urgent = false
    }

    /// Owned by the writer thread after `open`.
    final class WriterState: @unchecked Sendable {
        var checkpoint: Checkpoint
        var outputFiles: [String: DurableFile] = [:]
        var segments: [Int: DurableFile] = [:]
        /// Per unit, its segment's page index (`SegmentIndex`).
        var indexes: [Int: DurableFile] = [:]
        /// Held from `open` until the writer stops: one run per state directory.
        var lock: FileLock?
        /// The output rules: what goes where, when (`OutputLedger`).
        var ledger: OutputLedger
        var slots: [Int: UnitSlot] = [:]
        var failure: (any Error)?
        var closed: Closed?
        /// Children files and parent-end slots by key.
        var children: [ParentEndKey: DurableFile] = [:]
        var parentEnds: [ParentEndKey: UnitSlot] = [:]

        init(checkpoint: Checkpoint, ledger: OutputLedger) {
            self.checkpoint = checkpoint
            self.ledger = ledger
        }
    }

    let options: Options
    let queue = Mutex(Queue())
    let signal = WriterWakeup()
    let writer: WriterState
    private let checkpointPath: String
    private let segmentDirectory: String

    private init(options: Options, writer: WriterState) {
        self.options = options
        self.writer = writer
        checkpointPath = options.stateDirectory + "/checkpoint.json"
        segmentDirectory = options.stateDirectory + "/segments"
    }

    /// Opens (or creates) the state directory for `units`, checks that it belongs to this job, cuts every file
    /// back to its checkpointed length, and starts the writer thread.
    static func open(options: Options, units: [UnitSlot]) throws -> (JobStore, Opened) {
        let manager = FileManager.default
        let checkpointPath = options.stateDirectory + "/checkpoint.json"
        let segmentDirectory = options.stateDirectory + "/segments"
        if options.temporary { try refuseLink(options.stateDirectory) }
        try createDirectoryDurably(options.stateDirectory, ownerOnly: true)
        let lock = try lockState(options.stateDirectory)
        var existing: Checkpoint?
        var intact = true
        if !options.restart, let bytes = try DurableFiles.read(checkpointPath) {
            do {
                (existing, intact) = try Checkpoint.read(bytes)
            } catch {
                throw JobError.state(
                    "the checkpoint \(checkpointPath) is unreadable (\(StateFileProblem.describe(error)))",
                    hint: "pass --restart to start the job over")
            }
        }
        if let existing {
            guard existing.fingerprint == options.fingerprint else {
                throw JobError.state(
                    "the job changed since the state in \(options.stateDirectory) was written",
                    hint: "run the original job to finish it, or pass --restart to start over (the output is rewritten)")
            }
            guard existing.shard == options.shard else {
                throw JobError.state(
                    "the state in \(options.stateDirectory) belongs to shard \(existing.shard), not \(options.shard)",
                    hint: "give each shard its own --state directory")
            }
            guard existing.withMeta == options.withMeta else {
                throw JobError.state(
                    "the state in \(options.stateDirectory) was written \(existing.withMeta ? "with" : "without") --with-meta",
                    hint: "use the same flags, or pass --restart")
            }
        }
        if let existing, !intact {
            // Changed after trawl wrote it: nothing is cut back or trusted. A changed page count or segment length is
            // named with its segment and offset first; anything else by the seal.
            try verifySegments(of: existing, units: units, in: segmentDirectory)
            throw JobError.state(
                "the checkpoint \(checkpointPath) was changed after trawl wrote it (its content does not match its "
                    + "seal), so it cannot say what the output holds",
                hint: "pass --restart to start the job over")
        }
        try createDirectoryDurably(segmentDirectory)
        try refuseLink(segmentDirectory)
        var checkpoint = existing ?? Checkpoint(
            fingerprint: options.fingerprint, shard: options.shard, withMeta: options.withMeta)
        if checkpoint.run == nil { checkpoint.run = options.runID }
        if checkpoint.started == nil { checkpoint.started = options.started }
        var order: [String: [Int]] = [:]
        var ends: [Int: [Int]] = [:]
        for unit in units {
            order[unit.output, default: []].append(unit.ordinal)
            if let key = unit.parentEnd { ends[key.parent, default: []].append(unit.ordinal) }
        }
        let writer = WriterState(checkpoint: checkpoint, ledger: OutputLedger(order: order, ends: ends))
        writer.lock = lock
        for unit in units { writer.slots[unit.ordinal] = unit }
        try openChildren(writer, checkpoint: checkpoint, options: options)
        if let existing {
            try SegmentCompaction.settle(existing, in: segmentDirectory)
            try undoUnrecordedMoves(checkpoint, order: writer.ledger.order, segmentDirectory: segmentDirectory)
        }
        let recordedUnits = Dictionary(uniqueKeysWithValues: checkpoint.units.compactMap { key, state in
            Int(key).map { ($0, OutputLedger.Unit(status: OutputLedger.Status(state.status), segment: state.segment)) }
        })
        for action in writer.ledger.reopened(outputs: checkpoint.outputs, units: recordedUnits) {
            // A provisional tail (an earlier run's, which ended with failures) or a torn one is cut off here.
            guard case .truncateOutput(let output, _) = action, let state = writer.ledger.outputs[output] else {
                continue
            }
            checkpoint.outputs[output] = state
            let directory = PathName.parent(of: output)
            if !directory.isEmpty { try createDirectoryDurably(directory) }
            if state.length > 0, !manager.fileExists(atPath: output) {
                throw JobError.state(
                    "the output \(output) is missing but the checkpoint says it holds \(state.length) bytes",
                    hint: "restore it, or pass --restart to fetch everything again")
            }
            do {
                writer.outputFiles[output] = try DurableFile(
                    path: output, truncatingTo: state.length, allowingStream: true)
            } catch let error as FileError where error.operation == "resume" {
                throw JobError.state("\(error)", hint: "pass --restart to write the output again from the start")
            }
        }
        let merged = Set(writer.ledger.order.keys.flatMap { writer.ledger.merged(in: $0) })
        var saved: [Int: Checkpoint.UnitState] = [:]
        for (key, state) in checkpoint.units {
            guard let ordinal = Int(key), writer.ledger.units[ordinal] != nil else {
                checkpoint.units[key] = nil
                continue
            }
            let segment = try DurableFile(path: segmentDirectory + "/\(ordinal).jsonl")
            let index = try DurableFile(path: SegmentIndex.path(segment: segment.path))
            try SegmentIndex.verify(state, segment: segment, index: index)
            writer.segments[ordinal] = segment
            writer.indexes[ordinal] = index
            saved[ordinal] = state
        }
        // Segments of units that never reached the checkpoint, or were merged already: left by a crash.
        for name in (try? manager.contentsOfDirectory(atPath: segmentDirectory)) ?? [] {
            let ordinal = Int(name.split(separator: ".").first ?? "")
            if ordinal.map({ saved[$0] == nil }) ?? true {
                try? manager.removeItem(atPath: segmentDirectory + "/" + name)
            }
        }
        let resumed = existing != nil
        writer.checkpoint = checkpoint
        let store = JobStore(options: options, writer: writer)
        if options.expandChildren == nil {
            let left = Set(units.map(\.ordinal)).subtracting(merged).count
            store.queue.withLock { $0.unitsLeft = left }
        }
        try store.writeCheckpoint()
        let thread = Thread { [store] in store.runWriter() }
        thread.name = "trawl-job-writer"
        thread.start()
        return (store, Opened(merged: merged, saved: saved, complete: checkpoint.complete, resumed: resumed))
    }

    /// Checks the saved units' segments against `checkpoint` without changing any file.
    private static func verifySegments(of checkpoint: Checkpoint, units: [UnitSlot], in segmentDirectory: String) throws {
        let ordinals = Set(units.map(\.ordinal))
        for (key, state) in checkpoint.units {
            guard let ordinal = Int(key), ordinals.contains(ordinal) else { continue }
            let path = segmentDirectory + "/\(ordinal).jsonl"
            let indexPath = SegmentIndex.path(segment: path)
            guard FileManager.default.fileExists(atPath: path), FileManager.default.fileExists(atPath: indexPath) else {
                continue
            }
            try SegmentIndex.verify(state, segment: try DurableFile(path: path), index: try DurableFile(path: indexPath))
        }
    }

    /// The segment of unit `ordinal` (`segments/ORDINAL.jsonl`): on open, cut back to what its checkpoint counts.
    func segmentPath(ordinal: Int) -> String { segmentDirectory + "/\(ordinal).jsonl" }

    /// Appends a page's lines to the unit's segment and records `state`; returns once both are on disk.
    func commitPage(ordinal: Int, lines: [UInt8], state: Checkpoint.UnitState) async throws {
        let pending = submitPage(ordinal: ordinal, lines: lines, state: state)
        expedite()
        try await pending.wait()
    }

    /// Queues a page for the writer and returns at once: pages of one unit are written in submission order, so a
    /// unit can fetch its next pages while earlier ones are being made durable (and share their `fsync`).
    func submitPage(ordinal: Int, lines: [UInt8], state: Checkpoint.UnitState) -> PendingCommit {
        let pending = PendingCommit()
        enqueue(.page(ordinal: ordinal, lines: lines, state: state, done: pending))
        return pending
    }

    /// Records a unit's final state (done or failed); a done unit is merged into its output when its turn
    /// comes. With `newestBy` (a line's key path) the unit's segment is first compacted to the last line of each
    /// key (`SegmentCompaction`); `state.items` must be the lines that leaves. Every page of the unit must be
    /// durable before this is called.
    func finishUnit(ordinal: Int, state: Checkpoint.UnitState, newestBy: JSONKeyPath? = nil) async throws {
        try await withCheckedThrowingContinuation { continuation in
            enqueue(.unit(ordinal: ordinal, state: state, newestBy: newestBy, done: continuation))
        }
    }

    /// Replaces the window `ordinal` by `halves` (placed before it in the output order) and ends it as a done unit
    /// with no items: the pages it wrote are discarded, since its halves read them again. The checkpoint that
    /// records the halves records the end too, so a resume knows the halves (`Checkpoint.bisected`).
    func splitUnit(ordinal: Int, halves: [UnitSlot]) async throws {
        try await withCheckedThrowingContinuation { continuation in
            enqueue(.split(ordinal: ordinal, halves: halves, done: continuation))
        }
    }

    /// Stops the writer after the queued work. When units are not done, first appends the provisional tail to
    /// each output (see the type's documentation); an error doing so is reported as the job's error.
    func close() async throws -> Closed {
        await withCheckedContinuation { continuation in
            let stopped = queue.withLock { queue -> Bool in
                queue.closed = true
                if queue.stopped { return true }
                queue.onStop = continuation
                return false
            }
            if stopped { continuation.resume() } else { signal.signal(urgent: true) }
        }
        if let failure = writer.failure { throw failure }
        return writer.closed ?? Closed(complete: false, outputs: [], flags: [])
    }

    func enqueue(_ operation: Operation) {
        let accepted = queue.withLock { queue -> Bool in
            guard !queue.closed else { return false }
            queue.operations.append(operation)
            if case .unit = operation {
                queue.urgent = true
                if let left = queue.unitsLeft { queue.unitsLeft = left - 1 }
            }
            if case .split(_, let halves, _) = operation {
                queue.urgent = true
                if let left = queue.unitsLeft { queue.unitsLeft = left - 1 + halves.count }
            }
            return true
        }
        if accepted {
            if case .page = operation { signal.signal(urgent: false) } else { signal.signal(urgent: true) }
        } else {
            let closed = JobError.state("the job's store is closed", hint: nil)
            switch operation {
            case .page(_, _, _, let done): done.complete(.failure(closed))
            case .unit(_, _, _, let done), .split(_, _, let done): done.resume(throwing: closed)
            case .children: break
            }
        }
    }

    /// The shortest time between the starts of two batches while pages keep coming: a fast walk would otherwise
    /// commit every few pages, each commit costing four `fsync`s (segment, index, checkpoint, directory); waiting a
    /// little lets one commit carry a few hundred pages (the units meanwhile fetch on; see `CommitPipeline`).
    static let minimumBatchInterval = Duration.milliseconds(20)

    /// The time between the starts of two batches while only pages come and nobody waits for them: units fetch on
    /// while their pages wait (`CommitPipeline`, which bounds what a unit has outstanding and calls `expedite` when
    /// it must wait), so a longer batch costs no fetching, and each batch's fixed cost (the checkpoint's encoding
    /// and replacement, four `fsync`s) is spread over more pages.
    static let pageBatchInterval = Duration.milliseconds(100)

    /// A unit waits for its pages to be durable (its walk ended, or it has as many outstanding as it may): the
    /// batch being filled is written at `minimumBatchInterval`.
    func expedite() {
        queue.withLock { $0.urgent = true }
        signal.signal(urgent: true)
    }

    private func runWriter() {
        let clock = ContinuousClock()
        var lastBatch: ContinuousClock.Instant?
        while true {
            signal.waitForWork()
            if let lastBatch {
                // No wait once the last unit has ended: nothing more will join the batch (walk (c) spent its
                // last 20 ms here before merging).
                let ended = { self.queue.withLock { $0.closed || $0.unitsLeft.map { $0 <= 0 } == true } }
                signal.hold(until: lastBatch + Self.minimumBatchInterval, unless: ended)
                signal.hold(until: lastBatch + Self.pageBatchInterval) { ended() || queue.withLock { $0.urgent } }
            }
            lastBatch = clock.now
            let (batch, closed) = queue.withLock { queue -> ([Operation], Bool) in
                defer {
                    queue.operations.removeAll()
                    queue.urgent = false
                }
                return (queue.operations, queue.closed)
            }
            if !batch.isEmpty { write(batch) }
            guard closed else { continue }
            let waiter = queue.withLock { queue -> CheckedContinuation<Void, Never>?? in
                guard queue.operations.isEmpty else { return .none }
                queue.stopped = true
                return .some(queue.onStop)
            }
            if let waiter {
                finish()
                for file in writer.outputFiles.values { file.close() }
                for file in writer.segments.values { file.close() }
                for file in writer.indexes.values { file.close() }
                writer.lock?.release()
                waiter?.resume()
                return
            }
        }
    }

    /// On the writer thread, after the last batch: the provisional tails, then the summary for `close`.
    private func finish() {
        guard writer.failure == nil else { return }
        do {
            if !writer.checkpoint.complete { try appendProvisionalTails() }
            writer.closed = summary()
        } catch {
            writer.failure = error
        }
    }

    /// Appends, past each output's merged units, the segments of the units after them in job order, and records
    /// the new length as provisional (`OutputLedger.closing`).
    private func appendProvisionalTails() throws {
        for action in writer.ledger.closing() { try perform(action) }
    }

    /// What each output holds and every unit's completeness flags, from the checkpoint.
    private func summary() -> Closed {
        let checkpoint = writer.checkpoint
        var outputs: [JobReport.OutputRecord] = []
        for (output, ordinals) in writer.ledger.order {
            let state = checkpoint.outputs[output] ?? Checkpoint.OutputState()
            var record = JobReport.OutputRecord(
                path: output, bytes: state.provisional ?? state.length, units: state.merged, settledBytes: state.length,
                incomplete: [])
            // A bisected window holds no items: its halves count instead.
            let bisected = Set(checkpoint.bisected ?? [])
            record.units -= ordinals.prefix(state.merged).filter { bisected.contains($0) }.count
            for ordinal in ordinals.dropFirst(state.merged) where !bisected.contains(ordinal) {
                let unit = checkpoint.units[String(ordinal)]
                if unit?.status == .done {
                    record.units += 1
                } else {
                    record.incomplete.append(JobReport.IncompleteUnit(
                        unit: writer.slots[ordinal]?.id ?? String(ordinal), pages: unit?.pages ?? 0,
                        items: unit?.items ?? 0))
                }
            }
            outputs.append(record)
        }
        var flags: [CompletenessFlag] = []
        for ordinal in writer.slots.keys.sorted() {
            let key = String(ordinal)
            flags += checkpoint.flags?[key] ?? checkpoint.units[key]?.flags ?? []
        }
        return Closed(
            complete: checkpoint.complete, outputs: outputs.sorted { $0.path < $1.path }, flags: flags)
    }

    /// Pages of a batch are gathered into writes of about this many bytes.
    static let gatheredWrite = 1 << 20

    /// Writes one batch: segments, their `fsync`, merges, the checkpoint; then wakes the callers.
    private func write(_ batch: [Operation]) {
        // A unit's page records of the batch, appended to its index with one write (they must be durable only
        // with the checkpoint): a write per page was half of walk (c)'s 20,000 pwrite calls.
        var indexRecords: [Int: [UInt8]] = [:]
        // Likewise a unit's pages, gathered up to 1 MB per write (the other half), each read where it is by
        // `pwritev` rather than copied into one buffer first.
        var segmentPages: [Int: (pages: [[UInt8]], bytes: Int)] = [:]
        func flushSegment(_ ordinal: Int) throws {
            guard let gathered = segmentPages.removeValue(forKey: ordinal), gathered.bytes > 0 else { return }
            try segmentFile(ordinal).segment.append(gathering: gathered.pages)
        }
        var result: Result<Void, any Error> = .success(())
        do {
            if let failure = writer.failure { throw failure }
            // Compactions first: the checkpoint each writes must count only what is durable, as at a batch's start.
            var compacted: [Int: Checkpoint.UnitState] = [:]
            for case .unit(let ordinal, let state, let key?, _) in batch {
                compacted[ordinal] = try compact(ordinal, state: state, key: key)
            }
            for operation in batch {
                switch operation {
                case .page(let ordinal, let lines, let state, _):
                    let segment = try segmentFile(ordinal).segment
                    let record = SegmentIndex.record(lines)
                    var gathered = segmentPages.removeValue(forKey: ordinal) ?? ([], 0)
                    gathered.pages.append(lines)
                    gathered.bytes += lines.count
                    segmentPages[ordinal] = gathered
                    if gathered.bytes >= Self.gatheredWrite { try flushSegment(ordinal) }
                    indexRecords[ordinal, default: []].append(contentsOf: record)
                    var recorded = state
                    recorded.segment = segment.length + Int64(segmentPages[ordinal]?.bytes ?? 0)
                    recorded.pageDigest = SegmentIndex.digest(
                        writer.checkpoint.units[String(ordinal)]?.pageDigest, adding: record)
                    writer.checkpoint.units[String(ordinal)] = recorded
                    for action in writer.ledger.pageCommitted(unit: ordinal, segment: recorded.segment) {
                        try perform(action)
                    }
                case .children(let batch):
                    try writeChildren(batch)
                case .unit(let ordinal, let state, _, _):
                    try flushSegment(ordinal)
                    var recorded = compacted[ordinal] ?? state
                    recorded.segment = writer.segments[ordinal]?.length ?? 0
                    recorded.pageDigest = writer.checkpoint.units[String(ordinal)]?.pageDigest
                    writer.checkpoint.units[String(ordinal)] = recorded
                    let ended = writer.ledger.unitEnded(
                        ordinal, status: OutputLedger.Status(state.status), segment: recorded.segment)
                    for action in ended { try perform(action) }
                case .split(let ordinal, let halves, _):
                    try flushSegment(ordinal)
                    var recorded = Checkpoint.UnitState(id: writer.slots[ordinal]?.id ?? String(ordinal))
                    recorded.status = .done
                    writer.checkpoint.units[String(ordinal)] = recorded
                    writer.checkpoint.bisected = (writer.checkpoint.bisected ?? []) + [ordinal]
                    for var slot in halves {
                        slot.output = writer.slots[ordinal]?.output ?? slot.output
                        writer.slots[slot.ordinal] = slot
                    }
                    for action in writer.ledger.unitSplit(ordinal, into: halves.map(\.ordinal)) { try perform(action) }
                }
            }
            for ordinal in Array(segmentPages.keys) { try flushSegment(ordinal) }
            for (ordinal, records) in indexRecords { try segmentFile(ordinal).index.append(records) }
            for file in writer.children.values { try file.sync() }
            for action in writer.ledger.batchWritten() { try perform(action) }
            for action in writer.ledger.checkpointWritten() { try perform(action) }
        } catch {
            writer.failure = error
            result = .failure(error)
        }
        for operation in batch {
            switch operation {
            case .page(_, _, _, let done): done.complete(result)
            case .unit(_, _, _, let done), .split(_, _, let done): done.resume(with: result)
            case .children: break
            }
        }
    }

    /// Compacts unit `ordinal`'s segment by `key` (`SegmentCompaction`), records `state` with the compacted
    /// segment in the checkpoint, and returns that state.
    private func compact(_ ordinal: Int, state: Checkpoint.UnitState, key: JSONKeyPath) throws -> Checkpoint.UnitState {
        guard let durable = writer.checkpoint.units[String(ordinal)], durable.segment > 0 else { return state }
        let path = segmentDirectory + "/\(ordinal).jsonl"
        writer.segments.removeValue(forKey: ordinal)?.close()
        writer.indexes.removeValue(forKey: ordinal)?.close()
        let result = try SegmentCompaction.run(
            segment: path, pages: durable.pages + (durable.rereadPages ?? 0), key: key)
        writer.segments[ordinal] = try DurableFile(path: path)
        writer.indexes[ordinal] = try DurableFile(path: SegmentIndex.path(segment: path))
        guard result.items == state.items else {
            throw JobError.state(
                "compacting \(path) by the primary key kept \(result.items) lines where unit \(state.id) counted"
                    + " \(state.items)",
                hint: "the segment changed while the job ran; pass --restart to fetch everything again")
        }
        var recorded = state
        recorded.segment = result.length
        recorded.pageDigest = result.pageDigest
        writer.checkpoint.units[String(ordinal)] = recorded
        try writeCheckpoint()
        SegmentCompaction.removePrecompacted(segment: path)
        return recorded
    }

    private func segmentFile(_ ordinal: Int) throws -> (segment: DurableFile, index: DurableFile) {
        if let file = writer.segments[ordinal], let index = writer.indexes[ordinal] { return (file, index) }
        let file = try DurableFile(path: segmentDirectory + "/\(ordinal).jsonl", truncatingTo: 0)
        let index = try DurableFile(path: SegmentIndex.path(segment: file.path), truncatingTo: 0)
        writer.segments[ordinal] = file
        writer.indexes[ordinal] = index
        return (file, index)
    }

    /// Does one of the ledger's actions, on the writer thread.
    private func perform(_ action: OutputLedger.Action) throws {
        switch action {
        case .syncSegment(let ordinal):
            try writer.segments[ordinal]?.sync()
            try writer.indexes[ordinal]?.sync()
        case .appendSegment(let ordinal, let output, let length):
            guard var file = writer.outputFiles[output] else { return }
            let path = segmentDirectory + "/\(ordinal).jsonl"
            if let segment = writer.segments.removeValue(forKey: ordinal) { segment.close() }
            if let moved = try Self.moveSegment(path, over: file, length: length) {
                file = moved
                writer.outputFiles[output] = moved
            } else {
                try checkCopied(try file.appendContents(ofFile: path), of: path, recorded: length)
            }
        case .appendCopy(let ordinal, let output, let length):
            guard let file = writer.outputFiles[output] else { return }
            let path = segmentDirectory + "/\(ordinal).jsonl"
            try checkCopied(try file.appendContents(ofFile: path), of: path, recorded: length)
        case .merged(let ordinal, _):
            writer.segments.removeValue(forKey: ordinal)?.close()
            writer.indexes.removeValue(forKey: ordinal)?.close()
            let key = String(ordinal)
            if let unit = writer.checkpoint.units[key] {
                if let flags = unit.flags, !flags.isEmpty {
                    writer.checkpoint.flags = (writer.checkpoint.flags ?? [:]).merging([key: flags]) { $1 }
                }
                writer.checkpoint.keepIncremental(of: unit, ordinal: ordinal)
            }
            writer.checkpoint.units[key] = nil
        case .syncOutput(let output, let state):
            guard let synced = writer.outputFiles[output] else { return }
            try synced.sync()
            let expected = state.provisional ?? state.length
            guard synced.length == expected else {
                throw JobError.state(
                    "the output \(output) holds \(synced.length) bytes where trawl wrote \(expected)",
                    hint: "it was changed outside trawl while the job ran; pass --restart to write it again")
            }
            writer.checkpoint.outputs[output] = state
        case .parentEndDone(let ordinal):
            var state = Checkpoint.UnitState(id: writer.slots[ordinal]?.id ?? String(ordinal))
            state.status = .done
            writer.checkpoint.units[String(ordinal)] = state
        case .writeCheckpoint:
            writer.checkpoint.complete = writer.ledger.complete
            try writeCheckpoint()
        case .removeSegment(let ordinal):
            let path = segmentDirectory + "/\(ordinal).jsonl"
            try? FileManager.default.removeItem(atPath: path)
            try? FileManager.default.removeItem(atPath: SegmentIndex.path(segment: path))
        case .truncateOutput:
            // Only on open, where the output is opened cut back (see `open`).
            break
        }
    }

    private func checkCopied(_ copied: Int64, of path: String, recorded: Int64) throws {
        guard copied == recorded else {
            throw JobError.state(
                "the segment \(path) holds \(copied) bytes but the checkpoint recorded \(recorded)",
                hint: "it was changed outside trawl; pass --restart to fetch everything again")
        }
    }

    /// Creates `path` (and missing parents) and `fsync`s the parent of each directory created, so the files the
    /// checkpoint names cannot lose their directory in a power loss. `ownerOnly`: `path`, when this creates it, is
    /// 0700 (a state directory holds pages of items and redacted requests: nobody else reads them); a directory
    /// that exists keeps its mode (`--state .` must not lock others out of the working directory).
    static func createDirectoryDurably(_ path: String, ownerOnly: Bool = false) throws {
        let manager = FileManager.default
        var missing: [String] = []
        var current = (path as NSString).standardizingPath
        while !current.isEmpty, current != "/", !manager.fileExists(atPath: current) {
            missing.append(current)
            current = PathName.parent(of: current)
        }
        guard !missing.isEmpty else { return }
        try manager.createDirectory(atPath: path, withIntermediateDirectories: true)
        if ownerOnly, chmod(path, 0o700) != 0 {
            throw JobError.state(
                "cannot make the state directory \(path) private (chmod 0700 failed)", hint: "check its file system")
        }
        for directory in missing.reversed() { try DurableFiles.syncDirectory(containing: directory) }
    }

    func writeCheckpoint() throws {
        try DurableFiles.replace(checkpointPath, with: writer.checkpoint.sealedEncoding())
    }
}
