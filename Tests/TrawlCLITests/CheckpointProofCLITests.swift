import Foundation
import Testing
import TrawlTestSupport
import TrawlTestServer

// Issue 13, "The checkpoint is proof, not a hint": a resume checks the checkpoint against the segments (page
// lengths and checksums in segments/N.pages) and refuses any mismatch; the failure report's "kept" is what is on
// disk.

@Suite("Issue 13: the checkpoint is proof, not a hint", .endToEnd)
struct CheckpointProofCLITests {
    /// A run whose only unit fails at page 3 of 5 (404), leaving 2 pages (20 items) in its segment.
    private func failedRun(_ server: TestServer, in workspace: Workspace, query: String = "") async throws
        -> [String]
    {
        let arguments = ["fetch", "--url", server.url("/paged/link?n=50&per_page=10&fault_404=3\(query)"), "--paginate",
                         "link", "--items", "", "-q", "-o", "out.jsonl", "--state", "st", "--attempts", "1"]
        let failed = try await trawl(arguments, in: workspace)
        try #require(failed.status == 1, "\(failed.stderr)")
        try #require(workspace.data("st/segments/0.jsonl").count == itemLines(0..<20).utf8.count)
        return arguments
    }

    enum Seal { case kept, removed, olderTrawl }

    /// Changes unit 0 of the checkpoint as a careless hand would: its seal left as it was, or `removed`; or as an
    /// older trawl wrote it (`olderTrawl`: version 1, no seal).
    private func editCheckpoint(
        _ workspace: Workspace, seal: Seal = .kept, _ change: (inout [String: Any]) -> Void
    ) throws {
        var checkpoint = try jsonObject(workspace.data("st/checkpoint.json"))
        #expect(checkpoint["seal"] is String, "trawl seals the checkpoint it writes")
        if seal != .kept { checkpoint["seal"] = nil }
        if seal == .olderTrawl { checkpoint["version"] = 1 }
        var units = try #require(checkpoint["units"] as? [String: Any])
        var unit = try #require(units["0"] as? [String: Any])
        change(&unit)
        units["0"] = unit
        checkpoint["units"] = units
        try JSONSerialization.data(withJSONObject: checkpoint)
            .write(to: URL(fileURLWithPath: workspace.path("st/checkpoint.json")))
    }

    @Test("an untouched state resumes to the exact output; a flipped byte in a segment is refused, naming offset")
    func flippedByte() async throws {
        try await TestServer.with { server in
            let workspace = try Workspace()
            defer { workspace.remove() }
            let arguments = try await failedRun(server, in: workspace)
            let saved = workspace.path("saved")
            try FileManager.default.copyItem(atPath: workspace.path("st"), toPath: saved)

            var segment = workspace.data("st/segments/0.jsonl")
            let offset = itemLines(0..<10).utf8.count + 5  // inside page 2
            segment[offset] ^= 0x01
            try segment.write(to: URL(fileURLWithPath: workspace.path("st/segments/0.jsonl")))
            server.resetStats()
            let refused = try await trawl(arguments, in: workspace)
            #expect(refused.status == 1, "\(refused.stderr)")
            #expect(refused.stderr.contains("st/segments/0.jsonl: page 2 (bytes \(itemLines(0..<10).utf8.count) to"),
                    "\(refused.stderr)")
            #expect(refused.stderr.contains("--restart"), "\(refused.stderr)")
            #expect(server.stats.requestsServed == 0, "refused before anything is fetched")

            try FileManager.default.removeItem(atPath: workspace.path("st"))
            try FileManager.default.moveItem(atPath: saved, toPath: workspace.path("st"))
            let resumed = try await trawl(
                ["fetch", "--url", server.url("/paged/link?n=50&per_page=10&fault_404=3"), "--paginate", "link",
                 "--items", "", "-q", "-o", "out.jsonl", "--state", "st"], in: workspace)
            #expect(resumed.status == 0, "\(resumed.stderr)")
            #expect(workspace.text("out.jsonl") == itemLines(0..<50))
        }
    }

    /// FNV-1a, which indexes written before `PageHash` hold.
    private func fnv(_ bytes: some Sequence<UInt8>, from start: UInt64 = 0xcbf2_9ce4_8422_2325) -> UInt64 {
        bytes.reduce(start) { ($0 ^ UInt64($1)) &* 0x0000_0100_0000_01b3 }
    }

    /// `SerialPageHash` (one multiply chain, tag 0xA5), which indexes written before `PageHash`'s lanes hold.
    private func serialHash(_ bytes: [UInt8]) -> UInt64 {
        func mix(_ h: UInt64, _ word: UInt64) -> UInt64 {
            let x = (h ^ word) &* 0xFF51_AFD7_ED55_8CCD
            return x ^ (x >> 29)
        }
        func word(_ slice: ArraySlice<UInt8>) -> UInt64 {
            slice.reversed().reduce(0) { $0 << 8 | UInt64($1) }
        }
        var h: UInt64 = 0x9E37_79B9_7F4A_7C15
        var i = 0
        while i + 8 <= bytes.count {
            h = mix(h, word(bytes[i..<i + 8]))
            i += 8
        }
        h = mix(h, word(bytes[i...]) ^ UInt64(bytes.count - i) << 59)
        h = mix(h, UInt64(bytes.count))
        h ^= h >> 33
        h = h &* 0xC4CE_B9FE_1A85_EC53
        h ^= h >> 33
        return 0xA5 << 56 | (h & 0x00FF_FFFF_FFFF_FFFF)
    }

    @Test(
        "a page index written before PageHash (FNV-1a, SerialPageHash values) still resumes; a flip is refused",
        arguments: [false, true])
    func indexOfAnOlderTrawlResumes(serial: Bool) async throws {
        try await TestServer.with { server in
            let workspace = try Workspace()
            defer { workspace.remove() }
            let arguments = try await failedRun(server, in: workspace)
            // Rewrite the index and the checkpoint's digest as the older trawl wrote them.
            let segment = workspace.data("st/segments/0.jsonl")
            let pages = [Array(segment.prefix(itemLines(0..<10).utf8.count)),
                         Array(segment.dropFirst(itemLines(0..<10).utf8.count))]
            var index: [UInt8] = []
            for page in pages {
                for value in [UInt64(page.count), serial ? serialHash(page) : fnv(page)] {
                    index += (0..<8).map { UInt8(truncatingIfNeeded: value >> (8 * UInt64($0))) }
                }
            }
            #expect(workspace.data("st/segments/0.pages").count == index.count)
            try Data(index).write(to: URL(fileURLWithPath: workspace.path("st/segments/0.pages")))
            let digest = String(fnv(index), radix: 16)
            try editCheckpoint(workspace, seal: .olderTrawl) {
                $0["pageDigest"] = String(repeating: "0", count: 16 - digest.count) + digest
            }
            let saved = workspace.path("saved")
            try FileManager.default.copyItem(atPath: workspace.path("st"), toPath: saved)

            var flipped = segment
            flipped[3] ^= 0x02
            try flipped.write(to: URL(fileURLWithPath: workspace.path("st/segments/0.jsonl")))
            let refused = try await trawl(arguments, in: workspace)
            #expect(refused.status == 1 && refused.stderr.contains("page 1 (bytes 0 to"), "\(refused.stderr)")

            try FileManager.default.removeItem(atPath: workspace.path("st"))
            try FileManager.default.moveItem(atPath: saved, toPath: workspace.path("st"))
            let resumed = try await trawl(
                ["fetch", "--url", server.url("/paged/link?n=50&per_page=10&fault_404=3"), "--paginate", "link",
                 "--items", "", "-q", "-o", "out.jsonl", "--state", "st"], in: workspace)
            #expect(resumed.status == 0, "\(resumed.stderr)")
            #expect(workspace.text("out.jsonl") == itemLines(0..<50))
        }
    }

    @Test(
        "a page count edited beyond or below the segment is refused (exit 1, the file, --restart), never exit 0",
        arguments: [5, 3, 1, -1])
    func editedPageCount(pages: Int) async throws {
        try await TestServer.with { server in
            let workspace = try Workspace()
            defer { workspace.remove() }
            let arguments = try await failedRun(server, in: workspace)
            try editCheckpoint(workspace) { $0["pages"] = pages }
            let refused = try await trawl(arguments, in: workspace)
            #expect(refused.status == 1, "\(refused.stderr)")
            #expect(refused.stderr.contains("st/segments/0."), "\(refused.stderr)")
            #expect(refused.stderr.contains("--restart"), "\(refused.stderr)")
        }
    }

    @Test("pages and length cut back together to page 1 are caught by the digest: a serial walk would lose page 2")
    func consistentEditOfASerialWalk() async throws {
        try await TestServer.with { server in
            let workspace = try Workspace()
            defer { workspace.remove() }
            // total=0: no rel="last", so the walk is serial and resumes at its stored next page (page 3).
            let arguments = try await failedRun(server, in: workspace, query: "&total=0")
            try editCheckpoint(workspace) {
                $0["pages"] = 1
                $0["segment"] = itemLines(0..<10).utf8.count
            }
            let refused = try await trawl(arguments, in: workspace)
            #expect(refused.status == 1, "\(refused.stderr)")
            #expect(refused.stderr.contains("does not match the first 1 record(s) of st/segments/0.pages"),
                    "\(refused.stderr)")
            #expect(!workspace.text("out.jsonl").hasSuffix(itemLines(20..<50)), "no resume past the missing page")
        }
    }

    @Test("a segment length edited, or the page index cut, is refused too")
    func editedLengthOrIndex() async throws {
        try await TestServer.with { server in
            let workspace = try Workspace()
            defer { workspace.remove() }
            let arguments = try await failedRun(server, in: workspace)
            let saved = workspace.path("saved")
            try FileManager.default.copyItem(atPath: workspace.path("st"), toPath: saved)
            try editCheckpoint(workspace) { $0["segment"] = itemLines(0..<10).utf8.count }
            let length = try await trawl(arguments, in: workspace)
            #expect(length.status == 1, "\(length.stderr)")
            #expect(length.stderr.contains("offset \(itemLines(0..<20).utf8.count) of st/segments/0.jsonl"),
                    "\(length.stderr)")

            try FileManager.default.removeItem(atPath: workspace.path("st"))
            try FileManager.default.moveItem(atPath: saved, toPath: workspace.path("st"))
            let index = workspace.data("st/segments/0.pages")
            try index.prefix(16).write(to: URL(fileURLWithPath: workspace.path("st/segments/0.pages")))
            let cut = try await trawl(arguments, in: workspace)
            #expect(cut.status == 1, "\(cut.stderr)")
            #expect(cut.stderr.contains("st/segments/0.pages records only 1"), "\(cut.stderr)")
        }
    }

    @Test(
        "a checkpoint changed by hand where no segment can tell (a unit marked done, its next URL) is refused by its seal",
        arguments: ["status", "next", "unsealed"])
    func editNoSegmentShows(field: String) async throws {
        try await TestServer.with { server in
            let workspace = try Workspace()
            defer { workspace.remove() }
            // total=0: a serial walk, whose unit keeps the next page to ask for.
            let arguments = try await failedRun(server, in: workspace, query: "&total=0")
            var edited = false
            // "unsealed": the seal taken out as well (a checkpoint of this trawl is never without one).
            try editCheckpoint(workspace, seal: field == "unsealed" ? .removed : .kept) { unit in
                if field == "status" || field == "unsealed" {
                    unit["status"] = "done"
                    edited = true
                } else if var next = unit["next"] as? [String: Any], let url = next["url"] as? String,
                          url.contains("page=3")
                {
                    next["url"] = url.replacingOccurrences(of: "page=3", with: "page=4")
                    next["text"] = next["url"]
                    unit["next"] = next
                    edited = true
                }
            }
            try #require(edited, "\(workspace.text("st/checkpoint.json"))")
            let before = workspace.data("out.jsonl")
            server.resetStats()
            let refused = try await trawl(arguments, in: workspace)
            #expect(refused.status == 1, "\(refused.stderr)")
            #expect(refused.stderr.contains("st/checkpoint.json was changed after trawl wrote it"), "\(refused.stderr)")
            #expect(refused.stderr.contains("--restart"), "\(refused.stderr)")
            #expect(server.stats.requestsServed == 0, "refused before anything is fetched")
            #expect(workspace.data("out.jsonl") == before, "nothing cut back or appended")
        }
    }

    @Test("a finished job's output length lowered in its checkpoint is refused, and the output is not cut")
    func editedOutputLengthOfAFinishedJob() async throws {
        try await TestServer.with { server in
            let workspace = try Workspace()
            defer { workspace.remove() }
            let arguments = ["fetch", "--url", server.url("/paged/link?n=30&per_page=10"), "--paginate", "link",
                             "--items", "", "-q", "-o", "out.jsonl", "--state", "st"]
            let first = try await trawl(arguments, in: workspace)
            try #require(first.status == 0, "\(first.stderr)")
            var checkpoint = try jsonObject(workspace.data("st/checkpoint.json"))
            var outputs = try #require(checkpoint["outputs"] as? [String: Any])
            let key = try #require(outputs.keys.first)
            var output = try #require(outputs[key] as? [String: Any])
            output["length"] = (output["length"] as? Int ?? 0) - 5
            outputs[key] = output
            checkpoint["outputs"] = outputs
            try JSONSerialization.data(withJSONObject: checkpoint)
                .write(to: URL(fileURLWithPath: workspace.path("st/checkpoint.json")))
            let refused = try await trawl(arguments, in: workspace)
            #expect(refused.status == 1, "\(refused.stderr)")
            #expect(refused.stderr.contains("was changed after trawl wrote it"), "\(refused.stderr)")
            #expect(workspace.text("out.jsonl") == itemLines(0..<30))
        }
    }

    @Test("a next URL whose parameter named like a secret holds the server's own value: the resume refuses, never REDACTED")
    func serverValueInASecretNamedParameter() async throws {
        try await TestServer.with { server in
            let workspace = try Workspace()
            defer { workspace.remove() }
            // Each link carries sig=sP, the server's per-page signature; a page asked for without it is empty.
            // total=0: a serial walk (no rel="last" to plan from), which keeps its next URL in the state.
            let arguments = try await failedRun(server, in: workspace, query: "&page_sig=1&total=0")
            let checkpoint = workspace.text("st/checkpoint.json")
            #expect(checkpoint.contains("sig=REDACTED") && !checkpoint.contains("sig=s3"), "\(checkpoint)")
            server.resetStats()
            let refused = try await trawl(arguments, in: workspace)
            #expect(refused.status == 1, "\(refused.stderr)")
            #expect(refused.stderr.contains("named like a secret"), "\(refused.stderr)")
            #expect(refused.stderr.contains("--restart"), "\(refused.stderr)")
            #expect(server.stats.requestsServed == 0, "no page asked for with REDACTED")
            // A state an older trawl wrote (no seal, no `lossy`): the placeholder left after restoring refuses too.
            try editCheckpoint(workspace, seal: .olderTrawl) { unit in
                guard var next = unit["next"] as? [String: Any] else { return }
                #expect(next["lossy"] as? Bool == true)
                next["lossy"] = nil
                unit["next"] = next
            }
            let older = try await trawl(arguments, in: workspace)
            #expect(older.status == 1, "\(older.stderr)")
            #expect(older.stderr.contains("holds REDACTED where the server's own value was"), "\(older.stderr)")
            #expect(server.stats.requestsServed == 0, "no page asked for with REDACTED")
            let restarted = try await trawl(arguments + ["--restart"], in: workspace)
            #expect(restarted.status == 0, "\(restarted.stderr)")
            #expect(workspace.text("out.jsonl") == itemLines(0..<50))
        }
    }

    @Test("a first page whose next page is itself: its items are kept, and the report says so")
    func loopOnFirstPageKeepsThePage() async throws {
        try await TestServer.with { server in
            let workspace = try Workspace()
            defer { workspace.remove() }
            // cursor=c0 asks for the first page by its own cursor; its next_cursor (loop_to=1) is c0 again.
            let result = try await trawl(
                ["fetch", "--url", server.url("/paged/token?n=10&per_page=10&loop_to=1&cursor=c0"), "--paginate",
                 "cursor:next_cursor", "--items", "items", "-q", "-o", "out.jsonl", "--state", "st", "--report",
                 "r.json"], in: workspace)
            #expect(result.status == 1, "\(result.stderr)")
            #expect(result.stderr.contains("a pagination loop"), "\(result.stderr)")
            let r = try report(workspace, "r.json")
            let failure = try #require((r["failures"] as? [[String: Any]])?.first)
            #expect(failure["kept_pages"] as? Int == 1)
            #expect(failure["kept_items"] as? Int == 10)
            #expect(workspace.text("out.jsonl") == itemLines(0..<10))
        }
    }
}
