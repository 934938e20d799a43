import Synchronization

/// The reorder buffer of concurrent pages: the tasks opening them, in page order. A page whose head arrives
/// early waits in its task (its body held back by the engine's back-pressure) until the pages before it have
/// been read; dropping the buffer cancels what is left.
final class InFlightPages: Sendable {
    private let tasks = Mutex<[Task<OpenedPage, any Error>]>([])

    var count: Int { tasks.withLock { $0.count } }

    func append(_ task: Task<OpenedPage, any Error>) {
        tasks.withLock { $0.append(task) }
    }

    func popFirst() -> Task<OpenedPage, any Error>? {
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
