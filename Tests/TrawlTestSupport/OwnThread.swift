import Foundation
import Testing

/// A trait for tests that make blocking calls (a raw socket's `recv`, a synchronous read): each test case runs on a
/// thread of its own (a task executor preference), so that what blocks is that thread, not one of the cooperative
/// pool's (two on a two-core machine) that every other test in the process shares.
///
/// ```swift
/// @Suite("raw sockets against the test server", .ownThread)
/// struct FaultTests { … }
/// ```
public struct OwnThreadTrait: SuiteTrait, TestTrait, TestScoping {
    public var isRecursive: Bool { true }

    public func provideScope(
        for test: Test, testCase: Test.Case?, performing function: @Sendable () async throws -> Void
    ) async throws {
        guard testCase != nil, !Self.onOwnThread else { return try await function() }
        let executor = ThreadExecutor(name: "trawl-test-own-thread")
        defer { executor.stop() }
        try await withTaskExecutorPreference(executor) {
            try await Self.$onOwnThread.withValue(true) { try await function() }
        }
    }

    @TaskLocal private static var onOwnThread = false
}

extension Trait where Self == OwnThreadTrait {
    /// Runs each test case on a thread of its own (see ``OwnThreadTrait``).
    public static var ownThread: Self { OwnThreadTrait() }
}

/// A task executor with one thread of its own: jobs run in the order they come.
public final class ThreadExecutor: TaskExecutor, @unchecked Sendable {
    private let condition = NSCondition()
    // Guarded by `condition`.
    private var jobs: [UnownedJob] = []
    private var stopped = false

    public init(name: String) {
        let thread = Thread { [self] in run() }
        thread.name = name
        thread.start()
    }

    public func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        condition.lock()
        jobs.append(job)
        condition.signal()
        condition.unlock()
    }

    /// Ends the thread once the jobs already enqueued have run.
    public func stop() {
        condition.lock()
        stopped = true
        condition.signal()
        condition.unlock()
    }

    private func run() {
        while true {
            condition.lock()
            while jobs.isEmpty && !stopped { condition.wait() }
            if jobs.isEmpty {
                condition.unlock()
                return
            }
            let job = jobs.removeFirst()
            condition.unlock()
            job.runSynchronously(on: asUnownedTaskExecutor())
        }
    }
}
