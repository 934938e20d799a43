import Foundation
import TrawlEngine

/// The high-water marks of a state directory's incremental sources (`STATE/marks.json`), replaced atomically
/// and only by a run whose output is committed (or by `trawl state set|reset`).
///
/// ```swift
/// let marks = MarkStore(stateDirectory: "state")
/// try marks.load().sources["issues"]?.mark    // "2024-05-01T12:00:00Z"
/// ```
public struct MarkStore: Sendable {
    /// The file's content.
    public struct File: Codable, Sendable, Equatable {
        public var version = 1
        /// The id of the last run committed into these marks (a run is committed once).
        public var run: String?
        public var sources: [String: SourceMark] = [:]
        public init() {}
    }

    /// One source's mark.
    public struct SourceMark: Codable, Sendable, Equatable {
        /// The largest cursor of the items committed so far, as the server gave it; `nil` before the first run.
        public var mark: String?
        /// The run that set it (`set` when `trawl state set` did).
        public var run: String?
        /// When it was set (ISO-8601).
        public var updated: String?
        /// Items within the lookback window of the mark: key to hash and cursor.
        var window: [String: SeenItem]?

        /// How many items the window holds.
        public var windowItems: Int { window?.count ?? 0 }

        public init(mark: String?, run: String?, updated: String?) {
            self.mark = mark
            self.run = run
            self.updated = updated
        }
    }

    public let stateDirectory: String
    public var path: String { stateDirectory + "/marks.json" }

    public init(stateDirectory: String) {
        self.stateDirectory = stateDirectory
    }

    /// The marks; empty when there are none yet.
    public func load() throws -> File {
        guard let bytes = try DurableFiles.read(path, limit: 16 << 20) else { return File() }
        do {
            return try JSONDecoder().decode(File.self, from: Data(bytes))
        } catch {
            throw JobError.state(
                "the marks file \(path) is unreadable (\(StateFileProblem.describe(error)))",
                hint: "fix it, or remove it (every incremental source starts again from its initial value)")
        }
    }

    /// Replaces the marks file durably.
    public func save(_ file: File) throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .prettyPrinted]
        try DurableFiles.replace(path, with: [UInt8](try encoder.encode(file)))
    }

    /// Runs `body` with the state directory locked (no run in progress), then saves what it returns.
    public func update(_ body: (inout File) throws -> Void) throws {
        try JobStore.createDirectoryDurably(stateDirectory, ownerOnly: true)
        let lock = try JobStore.lockState(stateDirectory)
        defer { lock.release() }
        var file = try load()
        try body(&file)
        try save(file)
    }

    /// Advances the marks to what the complete run of `checkpoint` read, once (a run already committed is not
    /// applied again). `lookbacks` names each source's lookback, to bound the windows kept.
    func commit(_ checkpoint: Checkpoint, lookbacks: [String: String?]) throws -> File {
        var file = try load()
        guard checkpoint.complete, let run = checkpoint.run, file.run != run else { return file }
        var bySource: [String: IncrementalProgress] = [:]
        for progress in (checkpoint.incremental ?? [:]).sorted(by: { Int($0.key) ?? 0 < Int($1.key) ?? 0 }) {
            bySource[progress.value.source, default: IncrementalProgress(source: progress.value.source)]
                .merge(progress.value, lookback: lookbacks[progress.value.source] ?? nil)
        }
        let now = ISO8601DateFormatter().string(from: Date())
        for (source, progress) in bySource {
            let before = file.sources[source]
            var merged = IncrementalProgress(source: source, max: before?.mark, window: before?.window ?? [:])
            merged.merge(progress, lookback: lookbacks[source] ?? nil)
            var mark = SourceMark(mark: merged.max, run: run, updated: now)
            mark.window = merged.window
            file.sources[source] = mark
        }
        file.run = run
        try save(file)
        return file
    }
}

extension Checkpoint {
    /// Keeps what a merged unit of an incremental source read, for the run's commit.
    mutating func keepIncremental(of unit: UnitState, ordinal: Int) {
        guard let progress = unit.incremental else { return }
        var kept = incremental ?? [:]
        kept[String(ordinal)] = progress
        incremental = kept
    }
}
