import Foundation
import Testing
import TrawlTestSupport
import TrawlTestServer

// The first unit merged into an empty output is moved there (its segment renamed over the output), not copied;
// a crash between that rename and the checkpoint that records it resumes to the exact output
// (`JobStore+Move.swift`). The crash is made where it matters with strace's fault injection: SIGKILL on entering
// the fsync of the segments directory that follows the rename.

private let stracePath = "/usr/bin/strace"

@Suite("trawl fetch: the first unit is moved into the output", .endToEnd)
struct OutputMoveCLITests {
    private func arguments(_ server: TestServer, _ output: String) -> [String] {
        ["fetch", "--url", server.url("/paged/page?n=45&per_page=10"), "--paginate", "page", "--total-pages",
         "total_pages", "--items", "items", "-o", output, "--state", "st", "-q"]
    }

    private func strace(_ options: [String], _ arguments: [String], in workspace: Workspace) async throws
        -> RunResult
    {
        try #require(
            FileManager.default.isExecutableFile(atPath: stracePath),
            "\(stracePath) is missing: scripts/ensure-deps installs Debian's strace, which this test needs")
        let child = try TrawlProcess(
            ["-f", "-o", workspace.path("trace.txt")] + options + [try trawlBinary().path] + arguments,
            in: workspace, environment: [:], executable: URL(fileURLWithPath: stracePath))
        let status = try await child.wait()
        return RunResult(status: status, stdout: child.stdout, stderr: child.stderr)
    }

    @Test("the segment is renamed over the empty output (its mode kept); an output that is a stream is written into")
    func movedNotCopied() async throws {
        try await TestServer.with { server in
            let workspace = try Workspace()
            defer { workspace.remove() }
            try workspace.write("out.jsonl", "old content, replaced\n")
            chmod(workspace.path("out.jsonl"), 0o600)
            let result = try await strace(
                ["-e", "trace=rename,renameat,renameat2"], arguments(server, "out.jsonl"), in: workspace)
            #expect(result.status == 0, "\(result.stderr)")
            #expect(workspace.text("out.jsonl") == itemLines(0..<45))
            let segment = "st/segments/0.jsonl"
            #expect(workspace.text("trace.txt").contains("rename(\"\(segment)\", \"out.jsonl\") = 0"),
                    "the segment was not renamed over the output:\n\(workspace.text("trace.txt"))")
            #expect(!FileManager.default.fileExists(atPath: workspace.path(segment)))
            let mode = try FileManager.default.attributesOfItem(atPath: workspace.path("out.jsonl"))[.posixPermissions]
            #expect(mode as? Int == 0o600, "the output's mode was not kept")

            // An output that is not a regular file of its own (here /dev/stdout, a file the test reads) is written
            // into: nothing is renamed over it.
            let stream = try await strace(
                ["-e", "trace=rename,renameat,renameat2"], arguments(server, "/dev/stdout") + ["--restart"],
                in: workspace)
            #expect(stream.status == 0, "\(stream.stderr)")
            #expect(stream.stdout == itemLines(0..<45))
            #expect(!workspace.text("trace.txt").contains("segments/0.jsonl\", "), "\(workspace.text("trace.txt"))")
        }
    }

    @Test("killed between the rename and the checkpoint, the same command ends with the exact output")
    func crashAfterTheMove() async throws {
        try await TestServer.with { server in
            let workspace = try Workspace()
            defer { workspace.remove() }
            try FileManager.default.createDirectory(
                atPath: workspace.path("st/segments"), withIntermediateDirectories: true)
            // fsyncs of the segments directory: after the segment's creation, its page index's, then the move's.
            let killed = try await strace(
                ["-P", workspace.path("st/segments"), "-e", "trace=fsync", "-e", "inject=fsync:signal=KILL:when=3"],
                arguments(server, "out.jsonl"), in: workspace)
            #expect(killed.status != 0)
            let checkpoint = try jsonObject(workspace.data("st/checkpoint.json"))
            let outputs = checkpoint["outputs"] as? [String: [String: Any]] ?? [:]
            let units = checkpoint["units"] as? [String: [String: Any]] ?? [:]
            try #require(outputs["out.jsonl"]?["length"] as? Int == 0, "\(checkpoint)")
            try #require(units["0"]?["segment"] as? Int ?? 0 > 0, "\(checkpoint)")
            try #require(!FileManager.default.fileExists(atPath: workspace.path("st/segments/0.jsonl")),
                         "the run was not killed after the move: \(workspace.text("trace.txt"))")
            try #require(workspace.data("out.jsonl").count >= units["0"]?["segment"] as? Int ?? 0)

            let resumed = try await trawl(arguments(server, "out.jsonl"), in: workspace)
            #expect(resumed.status == 0, "\(resumed.stderr)")
            #expect(workspace.text("out.jsonl") == itemLines(0..<45))
            let again = try await trawl(arguments(server, "out.jsonl"), in: workspace)
            #expect(again.status == 0, "\(again.stderr)")
            #expect(workspace.text("out.jsonl") == itemLines(0..<45))
        }
    }
}
