import Foundation
import Testing
import TrawlTestServer

/// A real `redis-server` (Debian's, installed by scripts/ensure-deps) on loopback, on a free port, with a
/// throwaway directory and nothing saved to disk; stopped by pid.
final class RedisServer {
    let port: Int
    let directory: URL
    private var process: ChildProcess?

    var url: String { "redis://127.0.0.1:\(port)/0" }

    /// Starts one on a free port (or on `port`, as a restarted store keeps its address).
    init(port: Int? = nil) async throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("trawl-redis-\(UUID())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        var chosen = port ?? 0
        for attempt in 0..<5 where process == nil {
            // Below the kernel's ephemeral range (32768-60999 here): a port that a restart must get back cannot be
            // handed out meanwhile as the local port of some test's outgoing connection or port-0 listener (one
            // restart failed so, "did not restart on port 37142").
            let candidate = port ?? (20_000 + Int.random(in: 0..<12_000) + attempt)
            if let started = try await Self.start(port: candidate, in: directory) {
                process = started
                chosen = candidate
            }
        }
        self.port = chosen
        guard process != nil else { throw RedisFailure(description: "redis-server did not start") }
    }

    struct RedisFailure: Error, CustomStringConvertible {
        var description: String
    }

    private static func start(port: Int, in directory: URL) async throws -> ChildProcess? {
        let log = directory.appendingPathComponent("redis-\(port).log").path
        try? FileManager.default.removeItem(atPath: log)
        let process = try ChildProcess(
            "/usr/bin/redis-server",
            ["--port", String(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no", "--dir", directory.path,
             "--daemonize", "no", "--logfile", log])
        for _ in 0..<400 where process.isRunning {
            if let text = try? String(contentsOfFile: log, encoding: .utf8), text.contains("Ready to accept") {
                return process
            }
            try await Task.sleep(for: .milliseconds(10))
        }
        if process.isRunning { process.terminate() }
        return nil
    }

    /// Restarts on the same port (after `kill`).
    func restart() async throws {
        for _ in 0..<50 {
            if let started = try await Self.start(port: port, in: directory) {
                process = started
                return
            }
            try await Task.sleep(for: .milliseconds(50))
        }
        throw RedisFailure(description: "redis-server did not restart on port \(port)")
    }

    /// Stops it at once (SIGKILL: a store that dies, not one that shuts down).
    func kill() async {
        guard let process else { return }
        process.terminate(SIGKILL)
        for _ in 0..<500 where process.isRunning { try? await Task.sleep(for: .milliseconds(10)) }
        self.process = nil
    }

    /// The keys and their remaining lives in ms (`redis-cli`), for checking namespacing and expiry.
    func keysWithTTL() async throws -> [String: Int] {
        let out = directory.appendingPathComponent("keys.txt").path
        let script =
            "for k in $(redis-cli -p \(port) --scan); do echo \"$k $(redis-cli -p \(port) pttl \"$k\")\"; done"
        let child = try ChildProcess("/bin/sh", ["-c", script], stdout: out)
        while child.isRunning { try await Task.sleep(for: .milliseconds(10)) }
        var result: [String: Int] = [:]
        for line in (try String(contentsOfFile: out, encoding: .utf8)).split(separator: "\n") {
            guard let space = line.lastIndex(of: " "), let ttl = Int(line[line.index(after: space)...]) else { continue }
            result[String(line[..<space])] = ttl
        }
        return result
    }

    func stop() async {
        await kill()
        try? FileManager.default.removeItem(at: directory)
    }
}

/// Runs `body` with a fresh `RedisServer`, stopped afterwards whatever happens.
func withRedis(_ body: (RedisServer) async throws -> Void) async throws {
    let redis = try await RedisServer()
    do {
        try await body(redis)
    } catch {
        await redis.stop()
        throw error
    }
    await redis.stop()
}
