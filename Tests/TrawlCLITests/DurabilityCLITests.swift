import Foundation
import Testing
import TrawlTestServer

// README's "Durability" promise, checked on the system calls of a real `trawl fetch` run under strace: a segment's
// (or the output's) bytes are fsynced before the checkpoint that counts them is renamed into place; the checkpoint
// is replaced atomically (temporary file written and fsynced, renamed, then its directory fsynced); a new segment or
// output file has its directory fsynced before a checkpoint names it. A test of the files alone cannot tell: every
// fsync can be removed and the files still end up right.

/// strace is Debian's, installed by scripts/ensure-deps.
private let stracePath = "/usr/bin/strace"

/// The system calls the test reads. `pwrite64` is how `DurableFile` writes, so it tells which bytes each fsync
/// covers.
private let tracedCalls = "fsync,fdatasync,rename,renameat,renameat2,openat,pwrite64"

// MARK: - strace's output

/// One completed system call, from `strace -f -y -o FILE`.
private struct TracedCall: CustomStringConvertible {
    var pid: Int
    var name: String
    /// The arguments as strace printed them (strings still quoted and escaped).
    var arguments: [String]
    /// What follows `=`: `0`, `13</path>`, `-1 ENOENT (...)`.
    var result: String
    /// Line numbers where the call began and where it returned (they differ for a call strace printed as
    /// `<unfinished ...>` and `<... resumed>` because another thread's call came in between).
    var start: Int
    var end: Int

    var description: String {
        "line \(start)\(end == start ? "" : "-\(end)") [pid \(pid)] \(name)(\(arguments.joined(separator: ", ")))"
            + " = \(result)"
    }

    /// The call succeeded.
    var succeeded: Bool { !result.hasPrefix("-") && !result.isEmpty && result != "?" }

    /// The path strace shows for a descriptor argument (`13</dir/file>`, `AT_FDCWD</cwd>`) or the result.
    static func descriptorPath(_ text: String) -> String? {
        guard let open = text.firstIndex(of: "<"), text.hasSuffix(">") else { return nil }
        return String(text[text.index(after: open)..<text.index(before: text.endIndex)])
    }

    /// The bytes of a quoted argument (`"..."`, possibly followed by `...` when strace cut it).
    static func string(_ text: String) -> (bytes: [UInt8], cut: Bool)? {
        var bytes: [UInt8] = []
        let scalars = Array(text.utf8)
        guard scalars.first == UInt8(ascii: "\"") else { return nil }
        var index = 1
        func octal(_ byte: UInt8) -> Bool { byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "7") }
        while index < scalars.count {
            let byte = scalars[index]
            if byte == UInt8(ascii: "\"") {
                return (bytes, text.utf8.count > index + 1 && text.hasSuffix("..."))
            }
            guard byte == UInt8(ascii: "\\"), index + 1 < scalars.count else {
                bytes.append(byte)
                index += 1
                continue
            }
            let escaped = scalars[index + 1]
            index += 2
            switch escaped {
            case UInt8(ascii: "n"): bytes.append(0x0A)
            case UInt8(ascii: "t"): bytes.append(0x09)
            case UInt8(ascii: "r"): bytes.append(0x0D)
            case UInt8(ascii: "v"): bytes.append(0x0B)
            case UInt8(ascii: "f"): bytes.append(0x0C)
            case UInt8(ascii: "x"):
                let hex = String(decoding: scalars[index..<min(index + 2, scalars.count)], as: UTF8.self)
                guard let value = UInt8(hex, radix: 16) else { return nil }
                bytes.append(value)
                index += 2
            case let digit where octal(digit):
                var value = Int(digit - UInt8(ascii: "0"))
                var digits = 1
                while digits < 3, index < scalars.count, octal(scalars[index]) {
                    value = value * 8 + Int(scalars[index] - UInt8(ascii: "0"))
                    index += 1
                    digits += 1
                }
                bytes.append(UInt8(truncatingIfNeeded: value))
            default: bytes.append(escaped)  // \\ and \"
            }
        }
        return nil
    }
}

private enum StraceLog {
    /// The calls in `text`, in the order they returned. Handles the `PID ` prefix of `-f -o` and the `[pid N] `
    /// one strace uses on stderr, and joins `<unfinished ...>` with its `<... NAME resumed>` line of the same
    /// thread. Signals (`--- ... ---`) and exits (`+++ ... +++`) are skipped.
    static func parse(_ text: String) -> [TracedCall] {
        var calls: [TracedCall] = []
        var unfinished: [Int: (text: String, start: Int)] = [:]
        for (number, rawLine) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            var line = Substring(rawLine)
            var pid = 0
            if line.hasPrefix("[pid ") {
                let digits = line.dropFirst(5).prefix { $0 == " " || $0.isNumber }
                pid = Int(digits.trimmingCharacters(in: .whitespaces)) ?? 0
                line = line.dropFirst(5 + digits.count).drop { $0 == "]" || $0 == " " }
            } else if let first = line.first, first.isNumber {
                let digits = line.prefix { $0.isNumber }
                pid = Int(digits) ?? 0
                line = line.dropFirst(digits.count).drop { $0 == " " }
            }
            if line.hasPrefix("---") || line.hasPrefix("+++") || line.isEmpty { continue }
            var start = number
            var whole = String(line)
            if line.hasPrefix("<... ") {
                guard let marker = line.range(of: " resumed>"), let begun = unfinished.removeValue(forKey: pid) else {
                    continue
                }
                whole = begun.text + line[marker.upperBound...]
                start = begun.start
            }
            if let marker = whole.range(of: " <unfinished ...>", options: .backwards) {
                unfinished[pid] = (String(whole[..<marker.lowerBound]), start)
                continue
            }
            if let call = parseCall(whole, pid: pid, start: start, end: number) { calls.append(call) }
        }
        return calls
    }

    /// `name(arg, arg, ...) = result`, splitting arguments at top-level commas (not inside quotes or `<>`).
    private static func parseCall(_ text: String, pid: Int, start: Int, end: Int) -> TracedCall? {
        guard let open = text.firstIndex(of: "(") else { return nil }
        let name = String(text[..<open])
        guard !name.isEmpty, name.allSatisfy({ $0.isLetter || $0.isNumber || $0 == "_" }) else { return nil }
        var arguments: [String] = []
        var current = ""
        var depth = 0
        var inString = false
        var escaped = false
        var index = text.index(after: open)
        while index < text.endIndex {
            let character = text[index]
            index = text.index(after: index)
            if inString {
                current.append(character)
                if escaped {
                    escaped = false
                } else if character == "\\" {
                    escaped = true
                } else if character == "\"" {
                    inString = false
                }
                continue
            }
            switch character {
            case "\"": inString = true
            case "(", "[", "{", "<": depth += 1
            case "]", "}", ">": depth -= 1
            case ")" where depth == 0:
                if !current.isEmpty || !arguments.isEmpty {
                    arguments.append(current.trimmingCharacters(in: .whitespaces))
                }
                let rest = text[index...].trimmingCharacters(in: .whitespaces)
                guard rest.hasPrefix("=") else { return nil }
                let result = rest.dropFirst().trimmingCharacters(in: .whitespaces)
                return TracedCall(
                    pid: pid, name: name, arguments: arguments, result: result, start: start, end: end)
            case ")": depth -= 1
            case "," where depth == 0:
                arguments.append(current.trimmingCharacters(in: .whitespaces))
                current = ""
                continue
            default: break
            }
            current.append(character)
        }
        return nil
    }
}

// MARK: - What the calls did to the files

/// The file operations of one run, by path, as strace saw them.
private struct FileEvents {
    struct Write { var start: Int; var end: Int; var offset: Int; var bytes: [UInt8] }
    struct Rename { var call: TracedCall; var from: String; var to: String }

    private(set) var creations: [String: [TracedCall]] = [:]
    private(set) var writes: [String: [Write]] = [:]
    private(set) var syncs: [String: [TracedCall]] = [:]
    private(set) var renames: [Rename] = []
    private(set) var cutStrings = 0

    init(_ calls: [TracedCall]) {
        for call in calls where call.succeeded {
            switch call.name {
            case "openat":
                guard call.arguments.count >= 3, call.arguments[2].contains("O_CREAT"),
                      call.arguments[2].contains("O_EXCL"), let path = TracedCall.descriptorPath(call.result)
                else { continue }
                creations[path, default: []].append(call)
            case "pwrite64":
                guard call.arguments.count == 4, let path = TracedCall.descriptorPath(call.arguments[0]),
                      let string = TracedCall.string(call.arguments[1]), let offset = Int(call.arguments[3]),
                      let count = Int(call.result.prefix { $0.isNumber })
                else { continue }
                if string.cut { cutStrings += 1 }
                writes[path, default: []].append(
                    Write(start: call.start, end: call.end, offset: offset, bytes: Array(string.bytes.prefix(count))))
            case "fsync", "fdatasync":
                guard let path = call.arguments.first.flatMap(TracedCall.descriptorPath) else { continue }
                syncs[path, default: []].append(call)
            case "rename", "renameat", "renameat2":
                let paths = Self.renamePaths(call)
                if let paths { renames.append(Rename(call: call, from: paths.from, to: paths.to)) }
            default: continue
            }
        }
    }

    /// `rename(old, new)`, or `renameat[2](olddir, old, newdir, new[, flags])` with relative names joined to the
    /// directories strace shows.
    private static func renamePaths(_ call: TracedCall) -> (from: String, to: String)? {
        func path(_ argument: String, in directory: String?) -> String? {
            guard let name = TracedCall.string(argument).map({ String(decoding: $0.bytes, as: UTF8.self) }) else {
                return nil
            }
            if name.hasPrefix("/") { return name }
            return directory.map { $0 + "/" + name }
        }
        let arguments = call.arguments
        if call.name == "rename", arguments.count == 2 {
            guard let from = path(arguments[0], in: nil), let to = path(arguments[1], in: nil) else { return nil }
            return (from, to)
        }
        guard arguments.count >= 4,
              let from = path(arguments[1], in: TracedCall.descriptorPath(arguments[0])),
              let to = path(arguments[3], in: TracedCall.descriptorPath(arguments[2]))
        else { return nil }
        return (from, to)
    }

    /// Where the newest version of `path` begins before line `line`: the end of its last creation (`-1`: none seen).
    func generation(of path: String, before line: Int) -> Int {
        creations[path, default: []].last { $0.end < line }?.end ?? -1
    }

    /// The bytes of `path` that writes which returned before line `line` put there (since its last creation).
    func content(of path: String, before line: Int) -> [UInt8] {
        let since = generation(of: path, before: line)
        var content: [UInt8] = []
        for write in writes[path, default: []] where write.start > since && write.end < line {
            if content.count < write.offset + write.bytes.count {
                content += [UInt8](repeating: 0, count: write.offset + write.bytes.count - content.count)
            }
            content.replaceSubrange(write.offset..<(write.offset + write.bytes.count), with: write.bytes)
        }
        return content
    }

    /// How many leading bytes of `path` an fsync that returned before line `line` made durable: the extent of the
    /// writes that had returned before that fsync began.
    func durableLength(of path: String, before line: Int) -> Int {
        let since = generation(of: path, before: line)
        var durable = 0
        for sync in syncs[path, default: []] where sync.start > since && sync.end < line {
            let covered = writes[path, default: []].filter { $0.start > since && $0.end < sync.start }
            durable = max(durable, covered.map { $0.offset + $0.bytes.count }.max() ?? 0)
        }
        return durable
    }

    /// The first fsync of `path` that began after line `after` and returned before line `before`.
    func sync(of path: String, after: Int, before: Int) -> TracedCall? {
        syncs[path, default: []].first { $0.start > after && $0.end < before }
    }
}

// MARK: - The test

@Suite("trawl fetch: the durability order README promises, seen in strace", .timeLimit(.minutes(2)))
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
            // The job did put bytes in segments and the output that checkpoints counted, or the checks above were
            // empty.
            #expect(segmentsCounted >= 1, "no checkpoint counted segment bytes before its unit was merged")
            #expect(outputCounted >= 1, "no checkpoint counted output bytes")
            #expect(events.creations.keys.filter { $0.hasPrefix(segments + "/") }.count == 3)
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
            43 +++ exited with 0 +++
            """#
        let calls = StraceLog.parse(trace)
        #expect(calls.map(\.name) == ["openat", "fsync", "pwrite64", "fsync", "renameat2", "rename"])
        #expect(calls.map(\.pid) == [41, 42, 41, 41, 43, 43])
        let write = calls[2]
        #expect((write.start, write.end) == (1, 3))
        #expect(write.arguments.count == 4)
        #expect(TracedCall.string(write.arguments[1])?.bytes == Array(#"{"a":"q\"), = "}"#.utf8) + [10, 1, 255, 65])
        let events = FileEvents(calls)
        #expect(events.content(of: "/w/s/0.jsonl", before: 10).count == 20)
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
