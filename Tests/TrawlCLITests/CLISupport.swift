import Foundation
import Testing
import TrawlTestServer

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

// Helpers for end-to-end tests: the built binary, run as a child process in a fresh directory, against an
// in-process TestServer.

/// The built `trawl` binary: it sits next to the test bundle.
func trawlBinary() throws -> URL {
    let executable = try #require(Bundle.main.executableURL)
    return executable.deletingLastPathComponent().appendingPathComponent("trawl")
}

/// Environment variables that change what `trawl fetch` does; never inherited from the test runner.
let controlledVariables = [
    "JOB_COMPLETION_INDEX", "SLURM_ARRAY_TASK_ID", "SLURM_ARRAY_TASK_COUNT", "SLURM_ARRAY_TASK_MIN",
    "TRAWL_TEST_TOKEN", "TRAWL_TEST_UNSET_VAR", "FAIL_PAGE", "CURL_CA_BUNDLE", "SSL_CERT_FILE", "SSL_CERT_DIR",
]

/// A fresh temporary directory, the working directory of the runs of one test.
struct Workspace {
    let directory: URL

    init() throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("trawl-fetch-\(UUID())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    }

    func path(_ name: String) -> String { directory.appendingPathComponent(name).path }

    func write(_ name: String, _ text: String) throws {
        try Data(text.utf8).write(to: directory.appendingPathComponent(name))
    }

    /// The file's bytes; empty when it does not exist.
    func data(_ name: String) -> Data { FileManager.default.contents(atPath: path(name)) ?? Data() }

    func text(_ name: String) -> String { String(decoding: data(name), as: UTF8.self) }

    func exists(_ name: String) -> Bool { FileManager.default.fileExists(atPath: path(name)) }

    func remove() { try? FileManager.default.removeItem(at: directory) }
}

/// A running (or finished) `trawl` child process (spawned with `ChildProcess`: Foundation's `Process.run()` can
/// crash in a process with many descriptors open).
final class TrawlProcess: Sendable {
    let process: ChildProcess
    let arguments: [String]
    let stdoutURL: URL
    let stderrURL: URL

    /// Runs `trawl ARGUMENTS`, or `executable ARGUMENTS` when given (with the directory of `trawl` first on the
    /// PATH, so that a printed `trawl …` command can be run through a shell).
    init(
        _ arguments: [String], in workspace: Workspace, environment: [String: String], executable: URL? = nil
    ) throws {
        let logs = workspace.directory.appendingPathComponent(".logs")
        try FileManager.default.createDirectory(at: logs, withIntermediateDirectories: true)
        let id = UUID().uuidString
        stdoutURL = logs.appendingPathComponent("\(id).out")
        stderrURL = logs.appendingPathComponent("\(id).err")
        var variables = ProcessInfo.processInfo.environment
        for name in controlledVariables { variables[name] = nil }
        variables.merge(environment) { _, new in new }
        let binary = try trawlBinary()
        variables["PATH"] = binary.deletingLastPathComponent().path + ":" + (variables["PATH"] ?? "/usr/bin:/bin")
        self.arguments = arguments
        process = try ChildProcess(
            (executable ?? binary).path, arguments, environment: variables, directory: workspace.directory.path,
            stdout: stdoutURL.path, stderr: stderrURL.path)
    }

    var isRunning: Bool { process.isRunning }

    func kill() {
        process.terminate(SIGKILL)
    }

    /// Waits for the process to end, polling.
    @discardableResult
    func wait(timeout: Duration = .seconds(120)) async throws -> Int32 {
        let deadline = ContinuousClock.now + timeout
        while process.isRunning {
            if ContinuousClock.now > deadline {
                kill()
                Issue.record("trawl \(arguments) did not end within \(timeout)")
                while process.isRunning { try await Task.sleep(for: .milliseconds(10)) }
                break
            }
            try await Task.sleep(for: .milliseconds(5))
        }
        return process.exitStatus
    }

    var wasKilled: Bool { process.wasSignaled }
    var stdout: String { String(decoding: (try? Data(contentsOf: stdoutURL)) ?? Data(), as: UTF8.self) }
    var stderr: String { String(decoding: (try? Data(contentsOf: stderrURL)) ?? Data(), as: UTF8.self) }
}

struct RunResult {
    var status: Int32
    var stdout: String
    var stderr: String
}

/// Runs `trawl ARGUMENTS` in `workspace` to the end.
func trawl(_ arguments: [String], in workspace: Workspace, environment: [String: String] = [:])
    async throws -> RunResult
{
    let child = try TrawlProcess(arguments, in: workspace, environment: environment)
    let status = try await child.wait()
    return RunResult(status: status, stdout: child.stdout, stderr: child.stderr)
}

/// Runs `command` with `/bin/sh -c` in `workspace`, with the `trawl` binary on the PATH.
func shell(_ command: String, in workspace: Workspace) async throws -> RunResult {
    let child = try TrawlProcess(
        ["-c", command], in: workspace, environment: [:], executable: URL(fileURLWithPath: "/bin/sh"))
    let status = try await child.wait()
    return RunResult(status: status, stdout: child.stdout, stderr: child.stderr)
}

/// Runs `trawl ARGUMENTS` to the end in a fresh temporary directory (removed afterwards).
func trawl(_ arguments: [String]) async throws -> RunResult {
    let workspace = try Workspace()
    defer { workspace.remove() }
    return try await trawl(arguments, in: workspace)
}

/// The lines of `/paged/*?n=N`, as `trawl fetch` writes them without `--with-meta`.
func itemLines(_ ids: Range<Int>) -> String {
    ids.map { "{\"id\":\($0),\"name\":\"item-\($0)\"}\n" }.joined()
}

func jsonObject(_ data: Data) throws -> [String: Any] {
    try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
}

func jsonObject(_ line: Substring) throws -> [String: Any] {
    try jsonObject(Data(line.utf8))
}

/// A JSON report written by `--report`.
func report(_ workspace: Workspace, _ name: String) throws -> [String: Any] {
    try jsonObject(workspace.data(name))
}

func int(_ object: [String: Any], _ path: String...) -> Int? {
    var current: Any? = object
    for key in path { current = (current as? [String: Any])?[key] }
    return current as? Int
}

/// Every regular file under `path`, recursively.
func files(under path: String) -> [String] {
    guard let enumerator = FileManager.default.enumerator(atPath: path) else { return [] }
    var result: [String] = []
    while let name = enumerator.nextObject() as? String {
        var isDirectory: ObjCBool = false
        let full = path + "/" + name
        if FileManager.default.fileExists(atPath: full, isDirectory: &isDirectory), !isDirectory.boolValue {
            result.append(full)
        }
    }
    return result
}

/// Kills `child` with SIGKILL as soon as `condition` holds, watching from a thread of its own: a task would wait
/// for the test process's cooperative pool, which the tests running beside it can hold for longer than a short
/// job runs. Returns whether the condition held while the child still ran (false when it ended first, or after
/// `timeout`).
func killWhen(
    _ child: TrawlProcess, timeout: Duration = .seconds(60), _ condition: @escaping @Sendable () -> Bool
) async -> Bool {
    await withCheckedContinuation { (continuation: CheckedContinuation<Bool, Never>) in
        let watcher = Thread {
            let deadline = ContinuousClock.now + timeout
            var killed = false
            while ContinuousClock.now < deadline, child.isRunning {
                if condition() {
                    child.kill()
                    killed = true
                    break
                }
                usleep(500)
            }
            continuation.resume(returning: killed)
        }
        watcher.name = "trawl-test-kill-watcher"
        watcher.start()
    }
}

/// Waits until `condition` holds or the process ends; returns whether the condition held.
func waitUntil(_ child: TrawlProcess, timeout: Duration = .seconds(60), _ condition: () -> Bool)
    async throws -> Bool
{
    let deadline = ContinuousClock.now + timeout
    while ContinuousClock.now < deadline {
        if condition() { return true }
        if !child.isRunning { return condition() }
        try await Task.sleep(for: .milliseconds(2))
    }
    return condition()
}

/// Where `actual` first differs from `expected`: nil when they are equal, else a description with the offset and
/// both lengths. For large buffers use `#expect(firstDifference(a, b) == nil)` rather than `#expect(a == b)`: on
/// failure Swift Testing diffs the two collections for its message, which takes minutes for a few hundred KB.
func firstDifference(_ actual: [UInt8], _ expected: [UInt8]) -> String? {
    if actual == expected { return nil }
    let common = min(actual.count, expected.count)
    let offset = (0..<common).first { actual[$0] != expected[$0] } ?? common
    return "byte \(offset) differs (lengths \(actual.count) and \(expected.count))"
}
