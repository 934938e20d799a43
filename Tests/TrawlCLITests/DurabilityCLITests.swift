import Foundation
import Testing
import TrawlTestSupport
import TrawlTestServer

// docs/jobs.md's "Durability" promise, checked on the system calls of a real `trawl fetch` run under strace: a segment's
// (or the output's) bytes are fsynced before the checkpoint that counts them is renamed into place; the checkpoint
// is replaced atomically (temporary file written and fsynced, renamed, then its directory fsynced); a new segment or
// output file has its directory fsynced before a checkpoint names it. A test of the files alone cannot tell: every
// fsync can be removed and the files still end up right.

/// strace is Debian's, installed by scripts/ensure-deps.
private let stracePath = "/usr/bin/strace"

/// The system calls the test reads. `pwrite64` and `pwritev` (a batch's pages, gathered) are how `DurableFile`
/// writes, so they tell which bytes each fsync covers.
private let tracedCalls = "fsync,fdatasync,rename,renameat,renameat2,openat,pwrite64,pwritev"

// MARK: - The test

@Suite("trawl fetch: the durability order docs/jobs.md promises, seen in strace", .endToEnd)
struct DurabilityCLITests {
    /// Three units in one output: a planned walk whose last page is late (so its first pages are checkpointed in a
    /// segment before the unit is done), a shorter one, and a serial cursor walk; the later units wait in their
    /// segments for the first to be merged.
    private func job(_ server: TestServer) -> String {
        """
        sources:
          - name: pages
            url: "\(server.url("/paged/page?n={n}&per_page=10&delay_page=3&delay=500"))"
            paginate: {style: page, total_pages: total_pages}
            items: items
            matrix:
              n: [30, 20]
          - name: cursor
            url: "\(server.url("/paged/cursor?n=25&limit=10"))"
            paginate: {style: "cursor:data.-1.id", param: starting_after}
            items: data

        """
    }

    @Test("segment and output bytes are fsynced before the checkpoint counts them; checkpoint and new files too")
    func fsyncOrderOfAFetchJob() async throws {
        try #require(
            FileManager.default.isExecutableFile(atPath: stracePath),
            "\(stracePath) is missing: scripts/ensure-deps installs Debian's strace, which this test needs")
        try await TestServer.with { server in
            let workspace = try Workspace()
            defer { workspace.remove() }
            try workspace.write("job.yaml", job(server))
            let state = workspace.path("st")
            let segments = state + "/segments"
            let checkpoint = state + "/checkpoint.json"
            let output = workspace.path("out") + "/all.jsonl"
            let tracePath = workspace.path("trace.txt")
            let arguments = [
                "-f", "-y", "-s", "1000000", "-o", tracePath, "-e", "trace=" + tracedCalls,
                try trawlBinary().path, "fetch", "job.yaml", "-o", output, "--state", state, "-q",
            ]
            let child = try TrawlProcess(
                arguments, in: workspace, environment: [:], executable: URL(fileURLWithPath: stracePath))
            let status = try await child.wait()
            try #require(status == 0, "strace \(arguments.joined(separator: " ")) failed: \(child.stderr)")
            #expect(workspace.data("out/all.jsonl") == Data((itemLines(0..<30) + itemLines(0..<20)
                + itemLines(0..<25)).utf8))

            let trace = workspace.text("trace.txt")
            let events = FileEvents(StraceLog.parse(trace))
            #expect(events.cutStrings == 0, "strace cut a written string: raise -s")
            let replacements = events.renames.filter { $0.to == checkpoint }
            try #require(replacements.count >= 3, "too few checkpoint replacements traced:\n\(trace)")

            var segmentsCounted = 0
            var outputCounted = 0
            for (index, replacement) in replacements.enumerated() {
                let rename = replacement.call
                // The temporary file: whole, and fsynced after its last write, before the rename.
                let bytes = events.content(of: replacement.from, before: rename.start)
                let durable = events.durableLength(of: replacement.from, before: rename.start)
                let temporary = "checkpoint \(index): \(durable) of the \(bytes.count) bytes of \(replacement.from)"
                #expect(!bytes.isEmpty && durable == bytes.count, "\(temporary) were fsynced before \(rename)")
                // The rename is made durable by an fsync of the directory, before the next replacement.
                let next = index + 1 < replacements.count ? replacements[index + 1].call.start : Int.max
                #expect(events.sync(of: state, after: rename.end, before: next) != nil,
                        "checkpoint \(index): no fsync of \(state) after \(rename) (and before the next one)")

                let saved = try jsonObject(Data(bytes))
                let units = saved["units"] as? [String: [String: Any]] ?? [:]
                for (ordinal, unit) in units {
                    let segment = "\(segments)/\(ordinal).jsonl"
                    let counted = unit["segment"] as? Int ?? 0
                    if counted > 0 { segmentsCounted += 1 }
                    let synced = events.durableLength(of: segment, before: rename.start)
                    let what = "checkpoint \(index) counts \(counted) bytes of \(segment), only \(synced) were"
                    #expect(synced >= counted, "\(what) fsynced before \(rename)")
                    expectDirectorySynced(segment, in: segments, before: rename, events: events, index: index)
                    // The page index vouches for every counted page: its records are durable with them.
                    let pages = unit["pages"] as? Int ?? 0
                    let pageIndex = "\(segments)/\(ordinal).pages"
                    let indexed = events.durableLength(of: pageIndex, before: rename.start)
                    #expect(indexed >= pages * 16, "checkpoint counts \(pages) pages; \(indexed) index bytes fsynced")
                }
                let outputs = saved["outputs"] as? [String: [String: Any]] ?? [:]
                #expect(outputs.keys.sorted() == [output])
                for (path, record) in outputs {
                    let counted = max(record["length"] as? Int ?? 0, record["provisional"] as? Int ?? 0)
                    if counted > 0 { outputCounted += 1 }
                    let synced = events.durableLength(of: path, before: rename.start)
                    let what = "checkpoint \(index) counts \(counted) bytes of \(path), only \(synced) were"
                    #expect(synced >= counted, "\(what) fsynced before \(rename)")
                    expectDirectorySynced(path, in: workspace.path("out"), before: rename, events: events, index: index)
                }
            }
            // The first unit is moved into the empty output (JobStore+Move.swift): the rename is made durable (the
            // output's directory fsynced) before the next checkpoint counts what it brought.
            let moves = events.renames.filter { $0.to == output }
            #expect(moves.count == 1 && moves.first?.from == segments + "/0.jsonl", "moves: \(moves)")
            for move in moves {
                let next = replacements.first { $0.call.start > move.call.end }?.call.start ?? Int.max
                #expect(events.sync(of: workspace.path("out"), after: move.call.end, before: next) != nil,
                        "no fsync of the output's directory between \(move.call) and the next checkpoint")
            }
            // The job did put bytes in segments and the output that checkpoints counted, or the checks above were
            // empty.
            #expect(segmentsCounted >= 1, "no checkpoint counted segment bytes before its unit was merged")
            #expect(outputCounted >= 1, "no checkpoint counted output bytes")
            // Per unit a segment and its page index (SegmentIndex), each created once.
            #expect(events.creations.keys.filter { $0.hasPrefix(segments + "/") && $0.hasSuffix(".jsonl") }.count == 3)
            #expect(events.creations.keys.filter { $0.hasPrefix(segments + "/") && $0.hasSuffix(".pages") }.count == 3)
            #expect(events.creations[output]?.count == 1)
        }
    }

    @Test("the strace reader: pid prefixes, calls split across threads, escaped strings, renameat paths")
    func straceReader() throws {
        let trace = #"""
            [pid   41] openat(AT_FDCWD</w>, "/w/s/0.jsonl", O_RDWR|O_CREAT|O_EXCL|O_CLOEXEC, 0644) = 5</w/s/0.jsonl>
            [pid   41] pwrite64(5</w/s/0.jsonl>, "{\"a\":\"q\\\"), = \"}\n\1\377\x41", 20, 0 <unfinished ...>
            [pid   42] fsync(6</w/s>) = 0
            [pid   41] <... pwrite64 resumed>) = 20
            [pid   41] fsync(5</w/s/0.jsonl> <unfinished ...>
            [pid   42] --- SIGURG {si_signo=SIGURG, si_code=SI_TKILL, si_pid=40, si_uid=0} ---
            [pid   41] <... fsync resumed>) = 0
            43 renameat2(AT_FDCWD</w>, "c.tmp", 7</w/s>, "c", RENAME_NOREPLACE) = 0
            43 rename("/w/x", "/w/y") = -1 ENOENT (No such file or directory)
            41 pwritev(5</w/s/0.jsonl>, [{iov_base="ab,\"}", iov_len=5}, {iov_base="c\n", iov_len=2}], 2, 20) = 7
            43 +++ exited with 0 +++
            """#
        let calls = StraceLog.parse(trace)
        #expect(calls.map(\.name) == ["openat", "fsync", "pwrite64", "fsync", "renameat2", "rename", "pwritev"])
        #expect(calls.map(\.pid) == [41, 42, 41, 41, 43, 43, 41])
        let write = calls[2]
        #expect((write.start, write.end) == (1, 3))
        #expect(write.arguments.count == 4)
        #expect(TracedCall.string(write.arguments[1])?.bytes == Array(#"{"a":"q\"), = "}"#.utf8) + [10, 1, 255, 65])
        let events = FileEvents(calls)
        #expect(events.content(of: "/w/s/0.jsonl", before: 9).count == 20)
        // A gathered write: its pieces joined, at its offset.
        #expect(events.content(of: "/w/s/0.jsonl", before: 11).suffix(7) == Array(#"ab,"}c"#.utf8) + [10])
        #expect(events.durableLength(of: "/w/s/0.jsonl", before: 6) == 0)  // the fsync had not returned yet
        #expect(events.durableLength(of: "/w/s/0.jsonl", before: 7) == 20)
        #expect(events.sync(of: "/w/s", after: 0, before: 3) != nil)
        #expect(events.renames.map { "\($0.from) -> \($0.to)" } == ["/w/c.tmp -> /w/s/c"])
        #expect(events.creations.keys.sorted() == ["/w/s/0.jsonl"])
    }

    /// A file the checkpoint names that this run created: its directory was fsynced after the creation and before
    /// the checkpoint replacement `rename`.
    private func expectDirectorySynced(
        _ path: String, in directory: String, before rename: TracedCall, events: FileEvents, index: Int
    ) {
        guard let created = events.creations[path]?.last(where: { $0.end < rename.start }) else {
            #expect(events.creations[path] == nil, "\(path) was created only after checkpoint \(index) named it")
            return
        }
        let what = "checkpoint \(index) names \(path), but its directory was not fsynced between \(created)"
        #expect(events.sync(of: directory, after: created.end, before: rename.start) != nil, "\(what) and \(rename)")
    }
}
