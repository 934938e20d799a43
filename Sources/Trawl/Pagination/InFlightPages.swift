import Synchronization

/// The reorder buffer of concurrent pages: their tasks in page order. A page that finishes early waits in its
/// task until the pages before it have been taken; dropping the buffer cancels what is left.
final class InFlightPages<Item: Sendable>: Sendable {
    private let tasks = Mutex<[Task<Page<Item>, any Error>]>([])

    var count: Int { tasks.withLock { $0.count } }

    func append(_ task: Task<Page<Item>, any Error>) {
        tasks.withLock { $0.append(task) }
    }

    func popFirst() -> Task<Page<Item>, any Error>? {
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
