import Testing

/// The test traits that keep the suite honest on a small, busy machine (two cores, two cooperative threads).
///
/// - `.endToEnd`: for tests that start processes (`trawl`, nginx, Redis, Chromium) or push real traffic. At most
///   ``EndToEndGate/width`` of them run at once across the whole test process (all targets run in one process),
///   so that the library's in-process tests beside them are not starved of CPU. The wait for a turn is not part of
///   the test's time: the hang guard starts when the test does.
/// - `.hangGuard`: for every other suite; a generous bound that only ends a test that hangs, never one that is slow
///   because the machine is.
///
/// ```swift
/// @Suite("trawl fetch", .endToEnd)
/// struct FetchCLITests { … }
/// ```
public struct EndToEndTrait: SuiteTrait, TestTrait, TestScoping {
    /// How long one test may run once it has its turn before it is recorded as hung and cancelled.
    public var hangLimit: Duration
    /// How many of the gate's turns the test takes: 0 (not gated), 1, or all of them (`.endToEndAlone`).
    public var turns: Int

    public var isRecursive: Bool { true }

    public func provideScope(
        for test: Test, testCase: Test.Case?, performing function: @Sendable () async throws -> Void
    ) async throws {
        // The suite itself runs nothing of its own: only its test cases wait at the gate and are guarded.
        guard testCase != nil else { return try await function() }
        // A test under two of these traits (its own and its suite's, which is recursive) is guarded once and takes
        // turns once: an inner `.endToEnd` under an outer `.hangGuard` still takes its turn.
        if let taken = Self.turnsTaken {
            guard taken == 0, turns > 0 else { return try await function() }
            try await withTurns { try await Self.$turnsTaken.withValue(turns) { try await function() } }
        } else {
            try await withTurns { try await Self.$turnsTaken.withValue(turns) { try await guarded(function) } }
        }
    }

    /// Runs `body` holding `turns` turns of the gate (none: just runs it), given back however it ends.
    private func withTurns(_ body: () async throws -> Void) async throws {
        guard turns > 0 else { return try await body() }
        let gate = EndToEndGate.shared
        await gate.enter(turns: turns)
        do {
            try await body()
        } catch {
            await gate.leave(turns: turns)
            throw error
        }
        await gate.leave(turns: turns)
    }

    /// The turns the current task's test took in an outer scope of this trait (0: guarded, not gated); nil outside.
    @TaskLocal private static var turnsTaken: Int?

    /// Runs `function`, recording an issue and cancelling it when it runs past `hangLimit`.
    private func guarded(_ function: @Sendable () async throws -> Void) async throws {
        let limit = hangLimit
        try await withoutActuallyEscaping(function) { function in
            try await withThrowingTaskGroup(of: Bool.self) { group in
                group.addTask {
                    try await function()
                    return true
                }
                group.addTask {
                    try await Task.sleep(for: limit)
                    return false
                }
                defer { group.cancelAll() }
                while let finished = try await group.next() {
                    if finished { return }
                    Issue.record("the test ran for over \(limit) after it started: hung, cancelled")
                    return
                }
            }
        }
    }
}

extension Trait where Self == EndToEndTrait {
    /// A test that runs processes or real traffic: it waits for a turn (see ``EndToEndGate``), then may run for
    /// up to 10 minutes.
    public static var endToEnd: Self { EndToEndTrait(hangLimit: .seconds(600), turns: 1) }

    /// An end-to-end test that measures time or rates (requests per second seen at a server, pacing): it runs
    /// while no other end-to-end test does, so that what it measures is its own process, not its neighbours'.
    public static var endToEndAlone: Self { EndToEndTrait(hangLimit: .seconds(600), turns: .max) }

    /// An in-process test: no turn to wait for; ended only when it runs for over 10 minutes.
    public static var hangGuard: Self { EndToEndTrait(hangLimit: .seconds(600), turns: 0) }
}

/// Turns for end-to-end tests: at most `width` at once in the test process, first come first served (a test that
/// wants every turn waits for them in its place in the queue; nobody passes it).
/// `TRAWL_TEST_E2E_WIDTH` sets the width (default 2: on two cores, two child processes and the in-process tests
/// beside them keep the machine busy without starving anyone).
public actor EndToEndGate {
    public static let shared = EndToEndGate(width: widthFromEnvironment())

    public let width: Int
    private var taken = 0
    private var waiting: [(turns: Int, continuation: CheckedContinuation<Void, Never>)] = []

    public init(width: Int) { self.width = max(1, width) }

    /// Waits until `turns` turns (at most `width`) are free and no earlier test is waiting, then takes them.
    public func enter(turns: Int) async {
        let turns = min(max(1, turns), width)
        if waiting.isEmpty && taken + turns <= width {
            taken += turns
            return
        }
        await withCheckedContinuation { waiting.append((turns, $0)) }
    }

    /// Gives back what `enter(turns:)` took, and lets in the waiting tests that now fit, in order.
    public func leave(turns: Int) {
        taken -= min(max(1, turns), width)
        while let first = waiting.first, taken + first.turns <= width {
            waiting.removeFirst()
            taken += first.turns
            first.continuation.resume()
        }
    }

    static func widthFromEnvironment() -> Int {
        guard let text = getenvString("TRAWL_TEST_E2E_WIDTH"), let width = Int(text), width > 0 else { return 2 }
        return width
    }
}

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

private func getenvString(_ name: String) -> String? { getenv(name).map { String(cString: $0) } }
