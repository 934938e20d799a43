import Synchronization

/// The reorder buffer of concurrent pages: the tasks opening them (and decoding ahead), in page order. A page
/// that is ready early waits in its task until the pages before it have been read; what it holds meanwhile is
/// bounded (see ``PageReader/readAhead(budget:)``). Dropping the buffer cancels what is left.
final class InFlightPages<Value: Sendable>: Sendable {
    private let tasks = Mutex<[Task<Value, any Error>]>([])

    var count: Int { tasks.withLock { $0.count } }

    func append(_ task: Task<Value, any Error>) {
        tasks.withLock { $0.append(task) }
    }

    func popFirst() -> Task<Value, any Error>? {
        tasks.withLock { $0.isEmpty ? nil : $0.removeFirst() }
    }

    func cancelAll() {
        let pending = tasks.withLock { tasks in
            defer { tasks.removeAll() }
            return tasks
        }
        for task in pending { task.cancel() }
    }

    deinit {
        tasks.withLock { tasks in
            for task in tasks { task.cancel() }
        }
    }
}
