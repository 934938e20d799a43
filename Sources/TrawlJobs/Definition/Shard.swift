/// One of `count` disjoint parts of a job's units, for running a job on several machines. A unit belongs to the
/// shard whose index is the FNV-1a hash of its id modulo `count`, so the split is the same in every process and
/// does not depend on the order of units.
///
/// ```swift
/// let shard = try Shard.parse("2/8")                     // the third of eight
/// let mine = units.filter(shard.contains)
/// // Kubernetes Indexed Job or Slurm array: the index comes from the environment.
/// let fromScheduler = try Shard.fromEnvironment(ProcessInfo.processInfo.environment, shardCount: 8)
/// ```
public struct Shard: Sendable, Hashable, CustomStringConvertible {
    /// 0-based, less than `count`.
    public var index: Int
    public var count: Int

    /// The most shards a job is split into (docs/security.md): Kubernetes Indexed Jobs allow 100,000 completions,
    /// and a count past it is a typo or hostile, not a plan (`trawl plan` lists every shard).
    public static let mostShards = 100_000

    public init(index: Int, count: Int) throws(JobSpecError) {
        guard count >= 1 else {
            throw JobSpecError("the shard count must be at least 1, not \(count)")
        }
        guard count <= Self.mostShards else {
            throw JobSpecError(
                "the shard count \(count) is over the limit of \(Self.mostShards)",
                hint: "split a job into at most \(Self.mostShards) shards")
        }
        guard (0..<count).contains(index) else {
            throw JobSpecError(
                "shard index \(index) is out of range for \(count) shard\(count == 1 ? "" : "s")",
                hint: "indices are 0-based: 0 to \(count - 1)")
        }
        self.index = index
        self.count = count
    }

    /// `INDEX/COUNT`, as in `0/4` (indices are 0-based).
    ///
    /// ```swift
    /// try Shard.parse("3/4")   // index 3 of 4
    /// try Shard.parse("4/4")   // throws: shard index 4 is out of range for 4 shards (indices are 0-based: 0 to 3)
    /// ```
    public static func parse(_ text: String) throws(JobSpecError) -> Shard {
        let parts = text.split(separator: "/", omittingEmptySubsequences: false)
        let usage = "write INDEX/COUNT with a 0-based index, as in 0/4"
        guard parts.count == 2 else { throw JobSpecError("'\(text)' is not a shard", hint: usage) }
        let indexText = parts[0].trimmingWhitespace
        let countText = parts[1].trimmingWhitespace
        guard let index = Int(indexText) else {
            throw JobSpecError("shard index '\(indexText)' in '\(text)' is not a number", hint: usage)
        }
        guard let count = Int(countText) else {
            throw JobSpecError("shard count '\(countText)' in '\(text)' is not a number", hint: usage)
        }
        return try Shard(index: index, count: count)
    }

    /// The shard a batch scheduler assigned, or `nil` when none did.
    ///
    /// - Kubernetes Indexed Jobs set `JOB_COMPLETION_INDEX`; `shardCount` (the Job's `completions`) is required.
    /// - Slurm job arrays set `SLURM_ARRAY_TASK_ID` and `SLURM_ARRAY_TASK_COUNT`; the index is the task id minus
    ///   `SLURM_ARRAY_TASK_MIN` (default 0), so `--array=1-8` gives indices 0 to 7. A `shardCount`, when given,
    ///   must agree with `SLURM_ARRAY_TASK_COUNT` (and replaces it when that is not set).
    ///
    /// ```swift
    /// try Shard.fromEnvironment(["JOB_COMPLETION_INDEX": "2"], shardCount: 8)    // 2/8
    /// try Shard.fromEnvironment(
    ///     ["SLURM_ARRAY_TASK_ID": "5", "SLURM_ARRAY_TASK_MIN": "1", "SLURM_ARRAY_TASK_COUNT": "8"],
    ///     shardCount: nil)                                                      // 4/8
    /// ```
    public static func fromEnvironment(_ environment: [String: String], shardCount: Int?) throws(JobSpecError)
        -> Shard?
    {
        func number(_ name: String) throws(JobSpecError) -> Int? {
            guard let text = environment[name] else { return nil }
            guard let value = Int(text.trimmingWhitespace) else {
                throw JobSpecError("\(name) is '\(text)', not a number")
            }
            return value
        }
        if let index = try number("JOB_COMPLETION_INDEX") {
            guard let shardCount else {
                throw JobSpecError(
                    "JOB_COMPLETION_INDEX is set (a Kubernetes Indexed Job) but the number of shards is not known",
                    hint: "pass the Job's completions as the shard count, e.g. --shard-count 8")
            }
            return try Shard(index: index, count: shardCount)
        }
        if let taskID = try number("SLURM_ARRAY_TASK_ID") {
            let minimum = try number("SLURM_ARRAY_TASK_MIN") ?? 0
            let taskCount = try number("SLURM_ARRAY_TASK_COUNT")
            if let taskCount, let shardCount, taskCount != shardCount {
                throw JobSpecError(
                    "SLURM_ARRAY_TASK_COUNT is \(taskCount) but the shard count is \(shardCount)",
                    hint: "give as many shards as array tasks, or leave the shard count out")
            }
            guard let count = taskCount ?? shardCount else {
                throw JobSpecError(
                    "SLURM_ARRAY_TASK_ID is set but SLURM_ARRAY_TASK_COUNT is not",
                    hint: "pass the number of array tasks as the shard count, e.g. --shard-count 8")
            }
            return try Shard(index: taskID - minimum, count: count)
        }
        return nil
    }

    /// Whether `unit` belongs to this shard.
    public func contains(_ unit: WorkUnit) -> Bool {
        contains(id: unit.id)
    }

    /// Whether the unit with this id belongs to this shard.
    public func contains(id: String) -> Bool {
        FNV1a.hash64(id) % UInt64(count) == UInt64(index)
    }

    /// `INDEX/COUNT`.
    public var description: String { "\(index)/\(count)" }
}

extension Substring {
    fileprivate var trimmingWhitespace: String {
        String(drop { $0.isWhitespace }.reversed().drop { $0.isWhitespace }.reversed())
    }
}

extension String {
    fileprivate var trimmingWhitespace: String { Substring(self).trimmingWhitespace }
}
