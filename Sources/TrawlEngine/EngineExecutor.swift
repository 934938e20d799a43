/// Runs tasks on the engine's own loop thread, so that a task resumed by a finished transfer continues
/// right there, with no hand-off between threads: the fastest way to issue many small requests.
///
/// ```swift
/// let client = Client()
/// try await withTaskExecutorPreference(client.executor) {
///     try await withThrowingTaskGroup(of: Void.self) { group in
///         for url in urls {
///             group.addTask { _ = try await client.send(Request(url: url)) }  // runs on the loop thread
///         }
///         try await group.waitForAll()
///     }
/// }
/// ```
///
/// Work done in such tasks holds up every transfer of the client: keep it short and never block
/// (no file I/O, no sleeping, no heavy parsing); hop to the global executor for that.
public final class EngineExecutor: TaskExecutor, @unchecked Sendable {
    let loop: CurlLoop

    init(loop: CurlLoop) {
        self.loop = loop
        loop.executor = asUnownedTaskExecutor()
    }

    deinit {
        loop.shutdown()
    }

    public func enqueue(_ job: consuming ExecutorJob) {
        loop.run(UnownedJob(job))
    }
}
