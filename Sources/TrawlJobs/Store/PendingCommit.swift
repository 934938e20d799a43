import Synchronization

/// A page handed to the writer: wait for it to be durable.
final class PendingCommit: Sendable {
    private struct State {
        var result: Result<Void, any Error>?
        var waiter: CheckedContinuation<Void, any Error>?
    }

    private let state = Mutex(State())

    func complete(_ result: Result<Void, any Error>) {
        let waiter = state.withLock { state -> CheckedContinuation<Void, any Error>? in
            state.result = result
            defer { state.waiter = nil }
            return state.waiter
        }
        waiter?.resume(with: result)
    }

    /// How the write ended, once it has: read without suspending (a `wait` on a finished commit would still
    /// suspend the task and schedule it again).
    var result: Result<Void, any Error>? { state.withLock { $0.result } }

    func wait() async throws {
        try await withCheckedThrowingContinuation { continuation in
            let done = state.withLock { state -> Result<Void, any Error>? in
                if let result = state.result { return result }
                state.waiter = continuation
                return nil
            }
            if let done { continuation.resume(with: done) }
        }
    }
}
