import Foundation
import Testing
import TrawlTestSupport
import TrawlTestServer

@Suite("Child processes", .endToEnd)
struct ChildProcessTests {
    private func finished(_ child: ChildProcess) async throws -> ChildProcess {
        for _ in 0..<1000 where child.isRunning { try await Task.sleep(for: .milliseconds(10)) }
        #expect(!child.isRunning)
        return child
    }

    @Test("output to files, the working directory and environment given, exit status kept")
    func runsWithDirectoryEnvironmentAndOutput() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("trawl-child-\(UUID())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let out = directory.appendingPathComponent("out").path
        let err = directory.appendingPathComponent("err").path
        let child = try await finished(
            ChildProcess(
                "/bin/sh", ["-c", "pwd; echo \"$GREETING\"; echo oops >&2; exit 3"],
                environment: ["GREETING": "hello", "PATH": "/usr/bin:/bin"], directory: directory.path,
                stdout: out, stderr: err))
        #expect(child.exitStatus == 3)
        #expect(!child.wasSignaled)
        let lines = try String(contentsOfFile: out, encoding: .utf8).split(separator: "\n")
        #expect(lines.last == "hello")
        #expect(lines.first.map { $0.hasSuffix(directory.lastPathComponent) } == true)
        #expect(try String(contentsOfFile: err, encoding: .utf8) == "oops\n")
    }

    @Test("a child inherits no descriptor beyond 0, 1 and 2 (a listening socket copied into it would keep a port open)")
    func inheritsOnlyTheStandardDescriptors() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("trawl-child-\(UUID())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        // An open descriptor without close-on-exec in this process.
        let held = open("/dev/null", O_RDONLY)
        defer { close(held) }
        #expect(held > 2)
        let out = directory.appendingPathComponent("fds").path
        // `exec ls` lists its own /proc/self/fd: 0, 1, 2 and the directory it is reading.
        let child = try await finished(ChildProcess("/bin/sh", ["-c", "exec ls /proc/self/fd"], stdout: out))
        #expect(child.exitStatus == 0)
        let descriptors = try String(contentsOfFile: out, encoding: .utf8).split(separator: "\n").compactMap { Int32($0) }
        #expect(!descriptors.contains(held), "\(descriptors)")
        #expect(descriptors.filter { $0 > 2 }.count <= 1, "\(descriptors)")
    }

    @Test("a child starts with no signal blocked or ignored, whatever the spawning thread blocks")
    func signalsStartFresh() async throws {
        // Block SIGTERM in this thread (libdispatch's workers block most signals) while spawning.
        var blocked = sigset_t()
        sigemptyset(&blocked)
        sigaddset(&blocked, SIGTERM)
        var previous = sigset_t()
        pthread_sigmask(SIG_BLOCK, &blocked, &previous)
        let child = try ChildProcess("/bin/sleep", ["30"])
        pthread_sigmask(SIG_SETMASK, &previous, nil)
        child.terminate(SIGTERM)
        _ = try await finished(child)
        #expect(child.wasSignaled)
        #expect(child.exitStatus == SIGTERM)
    }

    @Test("terminate sends the signal and the child is seen as signalled")
    func terminate() async throws {
        let child = try ChildProcess("/bin/sleep", ["30"])
        #expect(child.isRunning)
        child.terminate(SIGKILL)
        _ = try await finished(child)
        #expect(child.wasSignaled)
        #expect(child.exitStatus == SIGKILL)
        #expect(throws: ChildProcess.SpawnError.self) { try ChildProcess("/nonexistent/tool", []) }
    }
}
